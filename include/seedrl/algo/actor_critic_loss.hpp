// The actor-critic loss of the V-trace learner (seed_rl agents/vtrace/learner.py), in pieces,
// each with its gradient w.r.t. what the network produced (logits, values), so a learner can feed
// the gradients straight into Network::backward.
//
// Conventions: T time steps by B columns, N = T * B frames.
//   logits  [N, A] row-major, row t * B + b (the layout Network outputs [T, B, A] flatten to)
//   actions, values, vs, pg_advantages  [T, B] Eigen arrays
// vs and pg_advantages are targets: no gradient flows into them.
//
//   policy_loss   = -mean(log pi(a_t | x_t) * A_t)
//   baseline_loss = baseline_cost * 0.5 * mean((vs_t - V_t)^2)
//   entropy_loss  = -entropy_cost * mean(min(H(pi(. | x_t)), c H_max(x_t)))  (an entropy bonus)
//
// The bonus counts a state's entropy up to the ceiling c (entropy_ceiling) times the most it can
// be, ln(legal actions): c = 1 is the plain bonus. Below c the bonus is a penalty on the entropy
// falling short of the target c H_max, so a state whose policy is wider gets no pull towards
// uniform and the policy gradient alone moves it (docs/algorithms.md, "the entropy ceiling").
//   total         = policy_loss + baseline_loss + entropy_loss
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <string_view>

#include "seedrl/algo/vtrace.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/math/softmax.hpp"

namespace seedrl {

struct ActorCriticLossOptions {
  float baseline_cost = 0.5f;
  float entropy_cost = 0.00025f;
  /// The bonus counts a state's entropy up to this fraction of its maximum (ln of its legal
  /// actions; of each branch's, summed); 1 counts all of it. Categorical policies only.
  float entropy_ceiling = 1.0f;

  void validate(std::string_view owner = "ActorCriticLossOptions") const {
    SEEDRL_REQUIRE(std::isfinite(baseline_cost) && baseline_cost >= 0.0f, owner,
                   ".baseline_cost must be finite and >= 0, got ", baseline_cost);
    SEEDRL_REQUIRE(std::isfinite(entropy_cost) && entropy_cost >= 0.0f, owner,
                   ".entropy_cost must be finite and >= 0, got ", entropy_cost);
    SEEDRL_REQUIRE(entropy_ceiling > 0.0f && entropy_ceiling <= 1.0f, owner,
                   ".entropy_ceiling must be in (0, 1], got ", entropy_ceiling);
  }

  /// Whether the ceiling cuts anything (c < 1).
  bool has_entropy_ceiling() const { return entropy_ceiling < 1.0f; }
};

/// A scalar loss and its gradient.
template <class Grad>
struct LossAndGrad {
  float loss = 0.0f;
  Grad grad;
};

/// Every term of the actor-critic loss and the gradients of the total.
struct ActorCriticLoss {
  float policy_loss = 0.0f;
  float baseline_loss = 0.0f;
  float entropy_loss = 0.0f;
  float total_loss = 0.0f;
  float mean_entropy = 0.0f;
  RowMatrixXf grad_logits;      ///< d total / d logits, [N, A]
  Eigen::ArrayXXf grad_values;  ///< d total / d values, [T, B]
};

/// log pi(a_t | x_t) of the actions taken, [T, B].
Eigen::ArrayXXf action_log_probs(const math::ConstMatrixRef& logits,
                                 const Eigen::ArrayXXi& actions);

/// -mean(log pi(a_t | x_t) * A_t) and its gradient w.r.t. the logits.
LossAndGrad<RowMatrixXf> policy_gradient_loss(const math::ConstMatrixRef& logits,
                                              const Eigen::ArrayXXi& actions,
                                              const Eigen::ArrayXXf& advantages);

/// baseline_cost * 0.5 * mean((vs - values)^2) and its gradient w.r.t. the values; with a mask,
/// the mean is over the frames where it is non-zero (weighted by it).
LossAndGrad<Eigen::ArrayXXf> baseline_loss(const Eigen::ArrayXXf& values, const Eigen::ArrayXXf& vs,
                                           float baseline_cost,
                                           const Eigen::ArrayXXf* mask = nullptr);

/// -entropy_cost * mean(min(H, ceiling * ln A)) and its gradient w.r.t. the logits.
LossAndGrad<RowMatrixXf> entropy_loss(const math::ConstMatrixRef& logits, float entropy_cost,
                                      float entropy_ceiling = 1.0f);

/// The whole loss of the V-trace learner from the network outputs of the first T steps of an
/// unroll (logits [N, A], values [T, B]), the actions taken and the V-trace targets. An optional
/// mask [T, B] (1 = a real transition, 0 = none, e.g. an episode boundary) excludes frames from
/// every term; the means are then over the frames it keeps.
ActorCriticLoss actor_critic_loss(const math::ConstMatrixRef& logits,
                                  const Eigen::ArrayXXi& actions, const Eigen::ArrayXXf& values,
                                  const VTraceReturns& targets,
                                  const ActorCriticLossOptions& options = {},
                                  const Eigen::ArrayXXf* mask = nullptr);

/// The actor-critic loss's terms for any policy distribution (a Gaussian over box actions, say),
/// from what the policy gives per frame: log pi(a_t | x_t) and its entropy, both [T, B]. The same
/// loss as actor_critic_loss, with the gradients w.r.t. those per-frame values (and the values);
/// a learner chains them through its distribution (learner/policy_terms.hpp). With an entropy
/// ceiling below 1, max_entropy [T, B] gives each frame's most entropy (ln of its legal actions);
/// a Gaussian has none, so the ceiling is refused without it.
struct ActorCriticTerms {
  float policy_loss = 0.0f;
  float baseline_loss = 0.0f;
  float entropy_loss = 0.0f;
  float total_loss = 0.0f;
  float mean_entropy = 0.0f;
  Eigen::ArrayXXf grad_log_probs;  ///< d total / d log pi(a_t | x_t), [T, B]
  Eigen::ArrayXXf grad_entropy;    ///< d total / d H_t, [T, B]
  Eigen::ArrayXXf grad_values;     ///< d total / d values, [T, B]
};
ActorCriticTerms actor_critic_loss_terms(
    const Eigen::ArrayXXf& log_probs, const Eigen::ArrayXXf& entropy, const Eigen::ArrayXXf& values,
    const VTraceReturns& targets, const ActorCriticLossOptions& options,
    const Eigen::ArrayXXf* mask = nullptr, const Eigen::ArrayXXf* max_entropy = nullptr);

}  // namespace seedrl
