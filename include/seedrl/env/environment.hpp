// The Environment concept: what a host program brings to seedrl.
//
// An environment writes its observations into a tensor the actor owns (one row of the actor's
// observation batch), so an observation is never copied on the actor side:
//
//   struct MyEnv {
//     seedrl::TensorSpec observation_spec() const;   // shape and dtype of one observation
//     seedrl::ActionSpec action_spec() const;        // N discrete actions, or a box of reals
//     void reset(const seedrl::Tensor& observation);  // start an episode, write its first
//                                                     // observation
//     seedrl::StepResult step(std::int32_t action, const seedrl::Tensor& observation);
//     // or, for a box of real-valued actions (ActionSpec::box):
//     seedrl::StepResult step(std::span<const float> action, const seedrl::Tensor& observation);
//     // or, for K action branches (ActionSpec::branched): one action per branch, each numbered
//     // within its branch:
//     seedrl::StepResult step(std::span<const std::int32_t> actions,
//                             const seedrl::Tensor& observation);
//   };
//   static_assert(seedrl::Environment<MyEnv>);
//
// An environment may declare named fields beside its observation (core/step_spec.hpp: a
// legal-action mask, the player to move, a goal). It then lists them and writes its row of the
// actor's step record (core/step_record.hpp) instead of the observation alone:
//
//   struct MyFieldEnv {
//     seedrl::TensorSpec observation_spec() const;
//     seedrl::ActionSpec action_spec() const;
//     std::vector<seedrl::StepFieldSpec> step_fields() const;  // e.g. {{"goal", {{2}}}}
//     void reset(const seedrl::StepRow& row);   // writes row.observation() and row.field("goal")
//     seedrl::StepResult step(std::int32_t action, const seedrl::StepRow& row);
//   };
//
// Every field is written at every reset() and step() (the buffers are reused). The fields travel
// with each step to inference and into the unrolls a learner trains on (UnrollBatch::field).
//
// step() applies the action, writes the next observation and returns the reward received with
// it and how the episode ended, if it did. *Terminated* means the task reached a terminal state
// (the pole fell, the ball landed): nothing follows, so the learner bootstraps nothing.
// *Truncated* means the episode was cut short from outside (a time limit): the state still has a
// future, and the learner bootstraps from the value of the final observation. The actor calls
// reset() after either. See examples/corridor_env.hpp and docs/environments.md for a fully
// commented environment.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "seedrl/core/action_spec.hpp"  // IWYU pragma: export
#include "seedrl/core/error.hpp"
#include "seedrl/core/step_record.hpp"  // IWYU pragma: export
#include "seedrl/core/step_spec.hpp"    // IWYU pragma: export
#include "seedrl/core/tensor.hpp"
#include "seedrl/core/tensor_spec.hpp"

namespace seedrl {

/// What one environment step returns besides the observation.
struct StepResult {
  float reward = 0.0f;
  bool terminated = false;  ///< a terminal state: no bootstrap
  bool truncated = false;   ///< cut short (time limit): bootstrap from the final observation
  bool episode_over() const { return terminated || truncated; }
};

/// An environment whose step() takes one discrete action (and writes its observation, or its
/// row of the step record).
template <class E>
concept DiscreteEnvironment = requires(E& env, const Tensor& observation, std::int32_t action) {
  { env.step(action, observation) } -> std::convertible_to<StepResult>;
}
|| requires(E& env, const StepRow& row, std::int32_t action) {
  { env.step(action, row) } -> std::convertible_to<StepResult>;
};

/// An environment whose step() takes a box action: ActionSpec::dims() values.
template <class E>
concept BoxEnvironment = requires(E& env, const Tensor& observation,
                                  std::span<const float> action) {
  { env.step(action, observation) } -> std::convertible_to<StepResult>;
}
|| requires(E& env, const StepRow& row, std::span<const float> action) {
  { env.step(action, row) } -> std::convertible_to<StepResult>;
};

/// An environment whose step() takes one action per branch (ActionSpec::branched): K i32.
template <class E>
concept BranchedEnvironment = requires(E& env, const Tensor& observation,
                                       std::span<const std::int32_t> actions) {
  { env.step(actions, observation) } -> std::convertible_to<StepResult>;
}
|| requires(E& env, const StepRow& row, std::span<const std::int32_t> actions) {
  { env.step(actions, row) } -> std::convertible_to<StepResult>;
};

/// An environment that declares step fields: it lists them, and its reset() writes a StepRow.
template <class E>
concept FieldEnvironment = requires(E& env, const E& const_env, const StepRow& row) {
  { const_env.step_fields() } -> std::convertible_to<std::vector<StepFieldSpec>>;
  env.reset(row);
};

template <class E>
concept Environment = requires(const E& const_env) {
  { const_env.observation_spec() } -> std::convertible_to<TensorSpec>;
  { const_env.action_spec() } -> std::convertible_to<ActionSpec>;
}
&&(FieldEnvironment<E> ||
   requires(E & env, const Tensor& observation) { env.reset(observation); }) &&
    (DiscreteEnvironment<E> || BoxEnvironment<E> || BranchedEnvironment<E>);

/// What `env`'s steps are: its observation and action specs and the fields it declares.
template <Environment E>
StepSpec step_spec(const E& env) {
  StepSpec spec{env.observation_spec(), env.action_spec(), {}};
  if constexpr (FieldEnvironment<E>) spec.fields = env.step_fields();
  return spec;
}

/// Starts an episode of `env`, which writes its row (its observation alone where it declares no
/// fields).
template <Environment E>
void reset_row(E& env, const StepRow& row) {
  if constexpr (requires { env.reset(row); }) {
    env.reset(row);
  } else {
    env.reset(row.observation());
  }
}

/// Steps `env` with `action` (an i32, a box's span of floats, or a span of one i32 per branch);
/// it writes its row.
template <Environment E, class Action>
StepResult step_row(E& env, Action action, const StepRow& row) {
  if constexpr (requires { env.step(action, row); }) {
    return env.step(action, row);
  } else {
    return env.step(action, row.observation());
  }
}

/// Throws seedrl::Error naming `who` unless `observation` matches `spec` (shape and dtype).
inline void require_observation(const Tensor& observation, const TensorSpec& spec,
                                const char* who) {
  require_tensor(observation, spec.shape, spec.dtype, who, ": observation");
}

}  // namespace seedrl
