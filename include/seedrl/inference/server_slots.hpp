// ServerSlots: the inference thread's view of the server's slots: the connection each served
// last (a step from another connection restarts the slot) and, for a recurrent network, each
// slot's state between steps (kept on the host, [max_slots, H] each).
//
// Thread-safety: the inference thread's.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "seedrl/core/step_flags.hpp"
#include "seedrl/inference/step_batch.hpp"
#include "seedrl/nn/lstm_state.hpp"

namespace seedrl {

class ServerSlots {
 public:
  ServerSlots(std::int32_t max_slots, std::int64_t state_size)
      : connections_(static_cast<std::size_t>(max_slots)), state_size_(state_size) {
    if (state_size > 0)
      table_ = {Tensor::zeros({max_slots, state_size}), Tensor::zeros({max_slots, state_size})};
  }

  /// H of the network's LSTM; 0 for a feed-forward network.
  std::int64_t state_size() const { return state_size_; }
  bool serves(std::int32_t slot, std::uint64_t connection) const {
    return connections_[static_cast<std::size_t>(slot)] == connection;
  }
  /// The slot now serves `connection`, from a zero state.
  void restart(std::int32_t slot, std::uint64_t connection) {
    connections_[static_cast<std::size_t>(slot)] = connection;
    if (state_size_ > 0) {
      table_.h[slot].fill_zero();
      table_.c[slot].fill_zero();
    }
  }
  /// The slot's state into row `row` of `state` (row views would cost two reference counts each).
  void load_state(std::int32_t slot, const nn::LstmState& state, std::int64_t row) const {
    std::memcpy(state.h.row_data(row), table_.h.row_data(slot), state_bytes());
    std::memcpy(state.c.row_data(row), table_.c.row_data(slot), state_bytes());
  }
  /// The forward's final state of every row that did not wait, into its slot.
  void store_states(const StepBatch& batch) {
    if (state_size_ == 0) return;
    const nn::LstmState& out = batch.outputs->final_state;
    batch.for_each_row([&](const StepRequest& r, std::int32_t e, std::int64_t row) {
      if (is_waiting(r.step.flags[static_cast<std::size_t>(e)])) return;
      const std::int32_t slot = batch.slots[static_cast<std::size_t>(row)];
      std::memcpy(table_.h.row_data(slot), out.h.row_data(row), state_bytes());
      std::memcpy(table_.c.row_data(slot), out.c.row_data(row), state_bytes());
    });
  }

 private:
  std::size_t state_bytes() const { return static_cast<std::size_t>(state_size_) * sizeof(float); }

  std::vector<std::uint64_t> connections_;  // the connection id each slot served last
  const std::int64_t state_size_;
  nn::LstmState table_;
};

}  // namespace seedrl
