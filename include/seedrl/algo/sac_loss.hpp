// Soft actor-critic (Haarnoja et al. 2018; twin critics as in "Soft Actor-Critic Algorithms and
// Applications") as pure functions on a batch of N transitions (s, a, G, s_k, g): the learner
// runs the networks, feeds their outputs here and backpropagates the gradients these return.
//
//   policy     log_std = m + (M - m)(tanh(raw) + 1) / 2       (CleanRL's bounds m = -5, M = 2)
//              u = mean + exp(log_std) z, z ~ N(0, 1);  a = scale tanh(u) + bias  (box bounds)
//              log pi(a|s) = sum_d [log N(u_d; mean_d, std_d) - log(1 - tanh(u_d)^2) - log scale_d]
//   critics    y = G + g (min_j Qbar_j(s_k, a'_k) - alpha log pi(a'_k|s_k)),  a'_k ~ pi(.|s_k)
//              loss_j = 0.5 mean((Q_j(s, a) - y)^2)
//   actor      loss = mean(alpha log pi(a~|s) - min_j Q_j(s, a~)),  a~ ~ pi(.|s) reparameterised
//   temperature loss = mean(-log alpha (log pi(a~|s) + target_entropy)),  target_entropy = -dims
//
// G is the (n-step) discounted reward and g = gamma^k the discount of the bootstrap after k steps
// (0 when the episode terminated within them; a time limit's truncation still bootstraps). The
// means run over the transitions a mask marks (an unroll that starts at an episode's last step
// holds no transition). All math in float on Eigen arrays; log(1 - tanh(u)^2) in its stable form.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"

namespace seedrl {

using SacMatrix = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Where the policy's log standard deviation may go (CleanRL's sac_continuous_action bounds).
struct SacLogStdBounds {
  float min = -5.0f;
  float max = 2.0f;
  void validate(std::string_view owner) const {
    SEEDRL_REQUIRE(std::isfinite(min) && std::isfinite(max) && min < max, owner,
                   ".log_std_bounds must be finite with min < max, got [", min, ", ", max, "]");
  }
};

/// A reparameterised draw of the squashed policy for N states ([N, D] each).
struct SacSample {
  SacMatrix noise;          ///< z
  SacMatrix log_std;        ///< after the bounds
  SacMatrix pre_tanh;       ///< u
  SacMatrix action;         ///< a = scale tanh(u) + bias, within the box
  Eigen::ArrayXf log_prob;  ///< log pi(a|s) [N]
};

/// Draws z from `rng` (rng.normal(), row by row) unless `noise` is given ([N, D]; zeros: the
/// squashed mean, the greedy action), and computes the sample. `scale` and `bias` [D]: the box's
/// (high - low) / 2 and (high + low) / 2.
SacSample sac_sample(const SacMatrix& mean, const SacMatrix& raw_log_std,
                     const Eigen::ArrayXf& scale, const Eigen::ArrayXf& bias,
                     const SacLogStdBounds& bounds, Rng* rng, const SacMatrix* noise = nullptr);

/// The gradients of a loss through a sample, given d loss / d action [N, D] (env scale) and
/// d loss / d log_prob [N], with respect to the network's mean and raw log std output.
struct SacSampleGrads {
  SacMatrix mean, raw_log_std;
};
SacSampleGrads sac_sample_backward(const SacSample& sample, const SacMatrix& raw_log_std,
                                   const Eigen::ArrayXf& scale, const SacLogStdBounds& bounds,
                                   const SacMatrix& grad_action,
                                   const Eigen::ArrayXf& grad_log_prob);

/// y = G + g (min(q1_next, q2_next) - alpha log_prob_next), all [N].
Eigen::ArrayXf sac_critic_targets(const Eigen::ArrayXf& returns, const Eigen::ArrayXf& discounts,
                                  const Eigen::ArrayXf& q1_next, const Eigen::ArrayXf& q2_next,
                                  const Eigen::ArrayXf& log_prob_next, float alpha);

struct SacCriticLoss {
  double loss = 0.0;      ///< 0.5 mean over the masked transitions of (q - y)^2
  Eigen::ArrayXf grad_q;  ///< d loss / d q [N] (0 where the mask is 0)
};
SacCriticLoss sac_critic_loss(const Eigen::ArrayXf& q, const Eigen::ArrayXf& targets,
                              const Eigen::ArrayXf& mask);

struct SacActorLoss {
  double loss = 0.0;
  Eigen::ArrayXf grad_log_prob;     ///< alpha / n where masked in
  Eigen::ArrayXf grad_q1, grad_q2;  ///< -1 / n on the smaller of the two (q1 on a tie)
};
SacActorLoss sac_actor_loss(const Eigen::ArrayXf& log_prob, const Eigen::ArrayXf& q1,
                            const Eigen::ArrayXf& q2, float alpha, const Eigen::ArrayXf& mask);

struct SacTemperatureLoss {
  double loss = 0.0;
  double grad_log_alpha = 0.0;  ///< -mean(log_prob + target_entropy)
};
SacTemperatureLoss sac_temperature_loss(double log_alpha, const Eigen::ArrayXf& log_prob,
                                        double target_entropy, const Eigen::ArrayXf& mask);

}  // namespace seedrl
