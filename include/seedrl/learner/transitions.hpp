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
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/core/step_flags.hpp"
#include "seedrl/experience/unroll.hpp"
#include "seedrl/math/masked_categorical.hpp"

namespace seedrl {

/// Steps [first, first + T) of a [L, B] batch, time-major [T, B].
struct Transitions {
  /// a_t (one discrete action; 0 for box actions and action branches, which stay in the batch:
  /// branch_actions)
  Eigen::ArrayXXi actions;
  Eigen::ArrayXXf rewards;  ///< r_{t+1}, clipped to +-max_abs_reward; 0 at boundaries
  Eigen::ArrayXXf dones;    ///< 1 when x_{t+1} terminated the episode, and at boundaries
  Eigen::ArrayXXf mask;     ///< 1 for a transition, 0 at a boundary
  std::int64_t count = 0;   ///< transitions (boundaries excluded)
  double policy_lag = 0.0;  ///< mean updates between acting and `version`, over the transitions
};

/// Throws seedrl::Error unless every action stored in the batch is in [0, num_actions): losses
/// (and device kernels) index with them. Box actions must be finite.
void check_actions(const UnrollBatch& batch, std::int64_t num_actions, std::string_view learner);
/// The same for a batch of `spec`: with action branches, each action within its branch.
void check_actions(const UnrollBatch& batch, const UnrollSpec& spec, std::string_view learner);

/// The discrete actions' branches of unrolls of `spec`: its K branches, or one of num_actions.
math::Branches unroll_branches(const UnrollSpec& spec);

/// Branch k's actions of steps [first, first + steps) of a batch with action branches
/// ([L, B, K]), [T, B].
Eigen::ArrayXXi branch_actions(const UnrollBatch& batch, std::int64_t first, std::int64_t steps,
                               std::int64_t k);

/// The transitions of steps [first, first + steps) of `batch` (which needs steps first + steps,
/// the step after the last transition). `version`: the parameters' version now, for the lag.
Transitions make_transitions(const UnrollBatch& batch, std::int64_t first, std::int64_t steps,
                             float max_abs_reward, std::int64_t version);

/// The [T, B] inputs of a bootstrapped return (V-trace, GAE, n-step actor-critic): the transitions
/// with the boundaries filled in from the learner's values of all T+1 steps (`values` row
/// t * B + b). At a boundary the reward is V(x_t) and the discount 0, so a return computed from
/// these is V(x_t) there and nothing crosses it; a truncated episode's last transition bootstraps
/// from V of its final observation.
struct VTraceInputs {
  Eigen::ArrayXXf rewards;    ///< r_{t+1}; V(x_t) at boundaries
  Eigen::ArrayXXf discounts;  ///< gamma, 0 after a termination and at boundaries
  Eigen::ArrayXXf values;     ///< V(x_t)
  Eigen::ArrayXf bootstrap;   ///< V(x_T)
};

VTraceInputs vtrace_inputs(const Transitions& tr, const float* values, float discount);

/// The legal-action masks of the batch's steps, u8 [L B, A] row-major (frame t * B + b), where a
/// branch that allows nothing (an episode's last step, which no loss trains on: inference refuses
/// such a mask anywhere else) allows every action; empty where the steps declare no mask.
/// `branches`: the actions' (empty: one branch of A).
std::vector<std::uint8_t> legal_actions(const UnrollBatch& batch,
                                        const math::Branches& branches = {});

}  // namespace seedrl
