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
void check_actions(const UnrollBatch& batch, std::int64_t num_actions, std::string_view learner);

/// The transitions of steps [first, first + steps) of `batch` (which needs steps first + steps,
/// the step after the last transition). `version`: the parameters' version now, for the lag.
Transitions make_transitions(const UnrollBatch& batch, std::int64_t first, std::int64_t steps,
                             float max_abs_reward, std::int64_t version);

}  // namespace seedrl
