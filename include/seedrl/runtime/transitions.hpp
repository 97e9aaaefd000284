// Transitions: the [T, B] experience in a batch of unrolls, as every learner's loss reads it.
//
// Step t of an unroll is the transition (x_t, a_t) -> (r_{t+1}, x_{t+1}). When x_t is the last
// observation of an episode, a_t was not executed and x_{t+1} starts a new episode: that step is
// a boundary, not a transition. Each learner decides what a boundary carries into its targets
// (V-trace: reward V(x_t) and discount 0; R2D2: reward Q(x_t) ending earlier n-step windows), so a
// truncated episode bootstraps from its true final observation and a terminated one does not.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>

#include "seedrl/core/error.hpp"
#include "seedrl/core/step_flags.hpp"
#include "seedrl/runtime/unroll.hpp"

namespace seedrl {

/// Steps [first, first + T) of a [L, B] batch, time-major [T, B].
struct Transitions {
  Eigen::ArrayXXi actions;  ///< a_t
  Eigen::ArrayXXf rewards;  ///< r_{t+1}, clipped to +-max_abs_reward; 0 at boundaries
  Eigen::ArrayXXf dones;    ///< 1 when x_{t+1} terminated the episode, and at boundaries
  Eigen::ArrayXXf mask;     ///< 1 for a transition, 0 at a boundary
  std::int64_t count = 0;   ///< transitions (boundaries excluded)
  double policy_lag = 0.0;  ///< mean updates between acting and `version`, over the transitions
};

/// Throws seedrl::Error unless every action stored in the batch is in [0, num_actions): losses
/// (and device kernels) index with them.
inline void check_actions(const UnrollBatch& batch, std::int64_t num_actions,
                          std::string_view learner) {
  const std::int32_t* actions = batch.actions.data<std::int32_t>();
  for (std::int64_t i = 0; i < batch.actions.numel(); ++i) {
    SEEDRL_REQUIRE(actions[i] >= 0 && actions[i] < num_actions, learner, ": stored action ",
                   actions[i], " out of range [0, ", num_actions, ") in the batch");
  }
}

/// The transitions of steps [first, first + steps) of `batch` (which needs steps first + steps,
/// the step after the last transition). `version`: the parameters' version now, for the lag.
inline Transitions make_transitions(const UnrollBatch& batch, std::int64_t first,
                                    std::int64_t steps, float max_abs_reward,
                                    std::int64_t version) {
  const std::int64_t length = batch.flags.dim(0), b_size = batch.flags.dim(1);
  SEEDRL_REQUIRE(first >= 0 && steps >= 1 && first + steps < length, "make_transitions: steps [",
                 first, ", ", first + steps, ") need ", first + steps + 1, " of the batch's ",
                 length);
  const std::uint8_t* flags = batch.flags.data<std::uint8_t>();
  const float* rewards = batch.rewards.data<float>();
  const std::int32_t* actions = batch.actions.data<std::int32_t>();
  const std::int32_t* versions = batch.policy_versions.data<std::int32_t>();
  Transitions tr{Eigen::ArrayXXi(steps, b_size), Eigen::ArrayXXf(steps, b_size),
                 Eigen::ArrayXXf(steps, b_size), Eigen::ArrayXXf(steps, b_size)};
  double lag = 0.0;
  for (std::int64_t b = 0; b < b_size; ++b) {
    for (std::int64_t t = 0; t < steps; ++t) {
      const std::int64_t i = (first + t) * b_size + b;  // row of step t in the [L, B] arrays
      tr.actions(t, b) = actions[i];
      if (is_last(flags[i])) {  // x_t ended an episode; x_{t+1} starts the next: no transition
        tr.rewards(t, b) = 0.0f;
        tr.dones(t, b) = 1.0f;
        tr.mask(t, b) = 0.0f;
        continue;
      }
      const float reward = rewards[i + b_size];
      tr.rewards(t, b) =
          max_abs_reward > 0.0f ? std::clamp(reward, -max_abs_reward, max_abs_reward) : reward;
      tr.dones(t, b) = (flags[i + b_size] & step_flags::kTerminated) ? 1.0f : 0.0f;
      tr.mask(t, b) = 1.0f;
      lag += static_cast<double>(version - versions[i]);
      ++tr.count;
    }
  }
  tr.policy_lag = tr.count > 0 ? lag / static_cast<double>(tr.count) : 0.0;
  return tr;
}

}  // namespace seedrl
