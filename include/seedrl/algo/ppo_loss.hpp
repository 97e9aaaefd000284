// The PPO loss (Schulman et al. 2017, "Proximal Policy Optimization Algorithms", eq. 7 and 9) of
// one minibatch of N transitions, as a pure function: the learner computes the new policy's
// log-probabilities, entropies and values with the network, feeds them here with what was
// recorded, and backpropagates the gradients it returns through the distribution and the network.
//
//   A      = advantages, normalised to mean 0 and standard deviation 1 over the minibatch when
//            normalize_advantages (the statistics carry no gradient)
//   r      = exp(log_prob - old_log_prob)
//   policy = mean(max(-A r, -A clip(r, 1 - clip, 1 + clip)))
//   value  = 0.5 mean((V - R)^2), or with clip_value
//            0.5 mean(max((V - R)^2, (V_old + clip(V - V_old, -clip, clip) - R)^2))
//   total  = policy + value_cost value - entropy_cost mean(entropy)
// R are the value targets (GAE advantages + old values). Where max() ties, the gradient is the
// unclipped term's. With per-transition `weights` w (decoupled PPO, Hilton et al. 2021: the
// ratio is taken against a proximal policy and w = pi_prox / mu corrects for the behaviour
// policy mu that acted), policy = mean(w max(-A r, -A clip(r, 1 - clip, 1 + clip))). Also reported:
// approx_kl = mean((r - 1) - log r) (Schulman's low-variance estimator of KL(old || new)) and the
// fraction of transitions whose ratio was clipped.
#pragma once

#include <Eigen/Core>
#include <string_view>

#include "seedrl/core/error.hpp"

namespace seedrl {

struct PpoLossOptions {
  float clip = 0.2f;                 ///< epsilon of the ratio clip (and of the value clip)
  bool clip_value = true;            ///< clip the value update around the old values
  float value_cost = 0.5f;           ///< weight of the value loss
  float entropy_cost = 0.0f;         ///< weight of the entropy bonus
  bool normalize_advantages = true;  ///< per minibatch

  void validate(std::string_view owner = "PpoLossOptions") const {
    SEEDRL_REQUIRE(clip > 0.0f && clip < 1.0f, owner, ".clip must be in (0, 1), got ", clip);
    SEEDRL_REQUIRE(value_cost >= 0.0f, owner, ".value_cost must be >= 0, got ", value_cost);
    SEEDRL_REQUIRE(entropy_cost >= 0.0f, owner, ".entropy_cost must be >= 0, got ", entropy_cost);
  }
};

struct PpoLoss {
  double total = 0.0, policy = 0.0, value = 0.0, entropy = 0.0;  ///< entropy: the mean
  double approx_kl = 0.0;
  double clip_fraction = 0.0;
  Eigen::ArrayXf grad_log_probs;  ///< d total / d log_prob [N]
  Eigen::ArrayXf grad_values;     ///< d total / d V [N]
  Eigen::ArrayXf grad_entropy;    ///< d total / d entropy [N] (-entropy_cost / N each)
};

/// All arrays [N]; `weights` may be empty (every weight 1). Throws seedrl::Error naming
/// mismatched sizes, an empty minibatch, a negative or non-finite weight or a bad option.
PpoLoss ppo_loss(const Eigen::ArrayXf& log_probs, const Eigen::ArrayXf& old_log_probs,
                 const Eigen::ArrayXf& advantages, const Eigen::ArrayXf& values,
                 const Eigen::ArrayXf& old_values, const Eigen::ArrayXf& returns,
                 const Eigen::ArrayXf& entropy, const PpoLossOptions& options,
                 const Eigen::ArrayXf& weights = Eigen::ArrayXf());

}  // namespace seedrl
