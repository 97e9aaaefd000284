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
//   };
//   static_assert(seedrl::Environment<MyEnv>);
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

/// An environment whose step() takes one discrete action.
template <class E>
concept DiscreteEnvironment = requires(E& env, const Tensor& observation, std::int32_t action) {
  { env.step(action, observation) } -> std::convertible_to<StepResult>;
};

/// An environment whose step() takes a box action: ActionSpec::dims() values.
template <class E>
concept BoxEnvironment = requires(E& env, const Tensor& observation,
                                  std::span<const float> action) {
  { env.step(action, observation) } -> std::convertible_to<StepResult>;
};

template <class E>
concept Environment = requires(E& env, const E& const_env, const Tensor& observation) {
  { const_env.observation_spec() } -> std::convertible_to<TensorSpec>;
  { const_env.action_spec() } -> std::convertible_to<ActionSpec>;
  env.reset(observation);
}
&&(DiscreteEnvironment<E> || BoxEnvironment<E>);

/// Throws seedrl::Error naming `who` unless `observation` matches `spec` (shape and dtype).
inline void require_observation(const Tensor& observation, const TensorSpec& spec,
                                const char* who) {
  require_tensor(observation, spec.shape, spec.dtype, who, ": observation");
}

}  // namespace seedrl
