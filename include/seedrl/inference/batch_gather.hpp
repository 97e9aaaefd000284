// BatchGather: the server's gather stage. One copy of each request's observations and declared
// step fields into the batch, each row's flags, slot and evaluation mark, and for a recurrent
// network its slot's state; a slot that a new connection steps restarts first. The batch is
// assembled on the host, in memory page-locked for a GPU backend (which gets one copy a batch).
//
// Thread-safety: the inference thread's.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/core/step_spec.hpp"
#include "seedrl/inference/server_slots.hpp"
#include "seedrl/inference/step_batch.hpp"

namespace seedrl {

class BatchGather {
 public:
  BatchGather(const StepSpec& spec, Device pinned_for)
      : spec_(spec),
        observation_buffer_(ScratchBuffer::pinned(pinned_for)),
        reset_buffer_(ScratchBuffer::pinned(pinned_for)),
        state_h_buffer_(ScratchBuffer::pinned(pinned_for)),
        state_c_buffer_(ScratchBuffer::pinned(pinned_for)),
        field_buffers_(spec.fields.size()) {}

  /// Fills `batch` from `requests` (`frames` environments in all); restart(slot, connection) is
  /// called for a slot that serves another connection than the one it served last.
  template <class Restart>
  void gather(std::span<StepRequest* const> requests, std::int64_t frames, StepBatch& batch,
              const ServerSlots& slots, Restart&& restart) {
    batch.requests = requests;
    batch.frames = frames;
    batch.observations = observation_buffer_.view(spec_.observation.shape.prepend({1, frames}),
                                                  spec_.observation.dtype);
    batch.fields.resize(spec_.fields.size());
    for (std::size_t k = 0; k < spec_.fields.size(); ++k) {
      const TensorSpec& f = spec_.fields[k].spec;
      batch.fields[k] = field_buffers_[k].view(f.shape.prepend({frames}), f.dtype);
    }
    batch.resets = reset_buffer_.view({1, frames}, DType::u8);
    batch.state_in = {};
    const std::int64_t state_size = slots.state_size();
    if (state_size > 0) {
      batch.state_in = {state_h_buffer_.view({frames, state_size}),
                        state_c_buffer_.view({frames, state_size})};
    }
    const auto n = static_cast<std::size_t>(frames);
    batch.slots.resize(n);
    batch.flags.resize(n);
    batch.evaluation.resize(n);
    std::int64_t row = 0;
    const Tensor frame_observations = batch.observations[0];
    for (const StepRequest* r : requests) {
      std::memcpy(frame_observations.row_data(row), r->step.observations.raw_data(),
                  r->step.observations.bytes());
      for (std::size_t k = 0; k < batch.fields.size(); ++k) {
        std::memcpy(batch.fields[k].row_data(row), r->step.fields[k].raw_data(),
                    r->step.fields[k].bytes());
      }
      for (std::int32_t e = 0; e < r->connection.num_envs; ++e, ++row) {
        const std::int32_t slot = r->connection.first_slot + e;
        if (!slots.serves(slot, r->connection.id)) restart(slot, r->connection.id);
        const std::uint8_t flags = r->step.flags[static_cast<std::size_t>(e)];
        const auto i = static_cast<std::size_t>(row);
        batch.flags[i] = flags;
        batch.resets.data<std::uint8_t>()[row] = is_first(flags) ? 1 : 0;
        batch.slots[i] = slot;
        batch.evaluation[i] = r->connection.evaluation ? 1 : 0;
        if (state_size > 0) slots.load_state(slot, batch.state_in, row);
      }
    }
  }

 private:
  const StepSpec spec_;
  ScratchBuffer observation_buffer_, reset_buffer_, state_h_buffer_, state_c_buffer_;
  std::vector<ScratchBuffer> field_buffers_;
};

}  // namespace seedrl
