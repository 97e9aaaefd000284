// The unroll layout an inference server produces for an agent (make_unroll_spec): what the
// server records, and what the learner, the replay table and the session size themselves by.
// It sits below both inference and the learner, so that neither reaches into the other for it.
#pragma once

#include <cstdint>

#include "seedrl/agent/agent.hpp"
#include "seedrl/core/step_spec.hpp"
#include "seedrl/core/tensor_spec.hpp"
#include "seedrl/experience/unroll.hpp"

namespace seedrl {

/// How long an unroll is: T transitions (T + 1 steps) after `burn_in` leading steps.
struct UnrollShape {
  std::int64_t unroll_length = 20;
  std::int64_t burn_in = 0;
};

/// The unroll layout for `agent` from steps of `step` (every declared field is kept in the
/// unrolls).
template <Agent A>
UnrollSpec make_unroll_spec(const A& agent, const StepSpec& step, const UnrollShape& shape) {
  UnrollSpec spec;
  spec.observation = step.observation;
  spec.num_actions = step.action.num_actions;
  spec.action_dims = step.action.is_box() ? step.action.dims() : 0;
  spec.fields = step.fields;
  spec.action_spec = step.action;
  spec.length = shape.burn_in + shape.unroll_length + 1;
  spec.overlap = shape.burn_in + 1;
  spec.store_behaviour = A::kStoresLogits || records_q_values(agent);
  spec.state_size = agent.network_config().lstm_size;
  return spec;
}
/// The same for steps with no declared fields.
template <Agent A>
UnrollSpec make_unroll_spec(const A& agent, const TensorSpec& observation, const ActionSpec& action,
                            const UnrollShape& shape) {
  return make_unroll_spec(agent, StepSpec{observation, action, {}}, shape);
}

}  // namespace seedrl
