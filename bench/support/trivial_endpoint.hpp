// TrivialEndpoint: an InferenceEndpoint with SEED's dynamic batching (RequestBatcher) and the
// InferenceServer's one copy of each observation into a contiguous batch buffer, but a trivial
// policy in place of a network. What a transport benchmark measures with it is the transport
// and the batching, not a model.
#pragma once

#include <cstring>
#include <mutex>
#include <vector>

#include "seedrl/inference/request_batcher.hpp"

namespace seedrl::bench {

class TrivialEndpoint final : public InferenceEndpoint {
 public:
  TrivialEndpoint(TensorSpec observation_spec, std::int32_t num_actions, std::int32_t max_batch,
                  std::chrono::microseconds timeout)
      : spec_{std::move(observation_spec), {num_actions}, {}},
        num_actions_(num_actions),
        observation_bytes_(spec_.observation.bytes()),
        batcher_(max_batch, timeout,
                 [this](std::span<StepRequest* const> batch, std::int64_t frames,
                        std::span<Status>) { process(batch, frames); }) {
    batcher_.start();
  }
  ~TrivialEndpoint() override { stop(); }

  void stop() { batcher_.stop(Status::closed("benchmark over")); }

  const StepSpec& step_spec() const override { return spec_; }

  Status connect(const ConnectRequest& request, Connection* connection) override {
    std::lock_guard lock(mutex_);
    if (Status s = check_actor_spec(request.spec, spec_); !s.is_ok()) return s;
    *connection = Connection{next_slot_, request.num_envs, request.run_id, request.evaluation,
                             static_cast<std::uint64_t>(next_slot_) + 1};
    next_slot_ += request.num_envs;
    connected_frames_ += request.num_envs;
    batcher_.set_connected_frames(connected_frames_);
    return Status::ok();
  }

  void submit(StepRequest& request) override { batcher_.submit(request); }

  void disconnect(const Connection& connection) override {
    std::lock_guard lock(mutex_);
    connected_frames_ -= connection.num_envs;
    batcher_.set_connected_frames(connected_frames_);
  }

  BatcherStats stats() const { return batcher_.stats(); }

 private:
  // Batcher thread only.
  void process(std::span<StepRequest* const> batch, std::int64_t frames) {
    batch_buffer_.resize(static_cast<std::size_t>(frames) * observation_bytes_);
    std::size_t offset = 0;
    for (StepRequest* request : batch) {
      const std::size_t bytes =
          static_cast<std::size_t>(request->connection.num_envs) * observation_bytes_;
      std::memcpy(batch_buffer_.data() + offset, request->step.observations.raw_data(), bytes);
      for (std::int32_t e = 0; e < request->connection.num_envs; ++e) {
        // The action depends on the copied bytes, so the copy cannot be skipped.
        const std::uint8_t* obs = batch_buffer_.data() + offset + e * observation_bytes_;
        request->actions.discrete()[static_cast<std::size_t>(e)] =
            (obs[0] + obs[observation_bytes_ - 1]) % num_actions_;
      }
      offset += bytes;
    }
  }

  StepSpec spec_;
  std::int32_t num_actions_;
  std::size_t observation_bytes_;
  std::mutex mutex_;
  std::int32_t next_slot_ = 0;
  std::int64_t connected_frames_ = 0;
  std::vector<std::uint8_t> batch_buffer_;
  RequestBatcher batcher_;
};

}  // namespace seedrl::bench
