// What an InferenceServer is set up with (InferenceServerOptions), and the unroll layout it
// produces for an agent (make_unroll_spec): what the learner and the session size themselves by.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

#include "seedrl/agent/agent.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/core/tensor_spec.hpp"
#include "seedrl/env/environment.hpp"
#include "seedrl/experience/unroll.hpp"
#include "seedrl/inference/request_batcher.hpp"

namespace seedrl {

struct InferenceServerOptions {
  std::int32_t max_slots = 1024;  ///< environments that can be connected at once
  std::int32_t max_batch = 64;    ///< frames per inference batch
  std::chrono::microseconds batch_timeout{1000};
  std::int64_t unroll_length = 20;  ///< T: transitions per unroll (an unroll holds T + 1 steps)
  std::int64_t burn_in = 0;         ///< extra leading steps per unroll (R2D2)
  int threads = 1;                  ///< compute threads of the inference thread
  std::uint64_t seed = 0;           ///< action sampling
  /// The inference thread flushes denormal floats to zero (core/float_mode.hpp).
  bool flush_denormals = true;
  /// On a backend with graphs (CUDA), a feed-forward network's forward at each batch size is
  /// captured once and replayed with one launch (inference/graphed_forward.hpp).
  bool graphs = true;

  void validate(std::string_view owner = "InferenceServerOptions") const {
    SEEDRL_REQUIRE(max_slots > 0, owner, ".max_slots must be positive, got ", max_slots);
    SEEDRL_REQUIRE(max_batch > 0, owner, ".max_batch must be positive, got ", max_batch);
    SEEDRL_REQUIRE(batch_timeout.count() >= 0, owner, ".batch_timeout must be >= 0");
    SEEDRL_REQUIRE(unroll_length >= 1, owner, ".unroll_length must be >= 1, got ", unroll_length);
    SEEDRL_REQUIRE(burn_in >= 0, owner, ".burn_in must be >= 0, got ", burn_in);
    SEEDRL_REQUIRE(threads >= 1, owner, ".threads must be >= 1, got ", threads);
  }
};

/// The unroll layout a server with these options produces for `agent` from steps of `step`
/// (every declared field is kept in the unrolls).
template <Agent A>
UnrollSpec make_unroll_spec(const A& agent, const StepSpec& step,
                            const InferenceServerOptions& options) {
  UnrollSpec spec;
  spec.observation = step.observation;
  spec.num_actions = step.action.num_actions;
  spec.action_dims = step.action.is_box() ? step.action.dims() : 0;
  spec.fields = step.fields;
  spec.action_spec = step.action;
  spec.length = options.burn_in + options.unroll_length + 1;
  spec.overlap = options.burn_in + 1;
  spec.store_behaviour = A::kStoresLogits || records_q_values(agent);
  spec.state_size = agent.network_config().lstm_size;
  return spec;
}
/// The same for steps with no declared fields.
template <Agent A>
UnrollSpec make_unroll_spec(const A& agent, const TensorSpec& observation, const ActionSpec& action,
                            const InferenceServerOptions& options) {
  return make_unroll_spec(agent, StepSpec{observation, action, {}}, options);
}

using InferenceServerStats = BatcherStats;

}  // namespace seedrl
