#include "seedrl/algo/ppo_loss.hpp"

#include <algorithm>
#include <cmath>

namespace seedrl {

PpoLoss ppo_loss(const Eigen::ArrayXf& log_probs, const Eigen::ArrayXf& old_log_probs,
                 const Eigen::ArrayXf& advantages, const Eigen::ArrayXf& values,
                 const Eigen::ArrayXf& old_values, const Eigen::ArrayXf& returns,
                 const Eigen::ArrayXf& entropy, const PpoLossOptions& options,
                 const Eigen::ArrayXf& weights) {
  options.validate();
  const Eigen::Index n = log_probs.size();
  SEEDRL_REQUIRE(n > 0, "ppo_loss: an empty minibatch");
  SEEDRL_REQUIRE(old_log_probs.size() == n && advantages.size() == n && values.size() == n &&
                     old_values.size() == n && returns.size() == n && entropy.size() == n,
                 "ppo_loss: every input must have ", n, " entries (log_probs); got old_log_probs ",
                 old_log_probs.size(), ", advantages ", advantages.size(), ", values ",
                 values.size(), ", old_values ", old_values.size(), ", returns ", returns.size(),
                 ", entropy ", entropy.size());
  const bool weighted = weights.size() > 0;
  SEEDRL_REQUIRE(!weighted || weights.size() == n, "ppo_loss: weights must have ", n,
                 " entries (log_probs) or none; got ", weights.size());
  SEEDRL_REQUIRE(!weighted || (weights.isFinite() && weights >= 0.0f).all(),
                 "ppo_loss: weights must be finite and >= 0");

  Eigen::ArrayXf a = advantages;
  if (options.normalize_advantages && n > 1) {
    const float mean = a.mean();
    const float variance = (a - mean).square().sum() / static_cast<float>(n - 1);
    a = (a - mean) / (std::sqrt(variance) + 1e-8f);
  }
  const float eps = options.clip, inv_n = 1.0f / static_cast<float>(n);
  PpoLoss out;
  out.grad_log_probs.resize(n);
  out.grad_values.resize(n);
  out.grad_entropy = Eigen::ArrayXf::Constant(n, -options.entropy_cost * inv_n);
  double policy = 0.0, value = 0.0, kl = 0.0;
  Eigen::Index clipped = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const float log_ratio = log_probs(i) - old_log_probs(i);
    const float ratio = std::exp(log_ratio);
    const float unclipped = -a(i) * ratio;
    const float clamped = -a(i) * std::clamp(ratio, 1.0f - eps, 1.0f + eps);
    const float w = weighted ? weights(i) : 1.0f;
    policy += static_cast<double>(w * std::max(unclipped, clamped));
    // d(-A r)/d log_prob = -A r where the unclipped term is the max; the clipped one is constant.
    out.grad_log_probs(i) = unclipped >= clamped ? -w * a(i) * ratio * inv_n : 0.0f;
    clipped += std::abs(ratio - 1.0f) > eps ? 1 : 0;
    kl += static_cast<double>(ratio - 1.0f - log_ratio);

    const float error = values(i) - returns(i);
    float grad = error;
    float term = error * error;
    if (options.clip_value) {
      const float step = std::clamp(values(i) - old_values(i), -eps, eps);
      const float clipped_error = old_values(i) + step - returns(i);
      if (clipped_error * clipped_error > term) {
        term = clipped_error * clipped_error;
        // The clipped value moves with V only inside the clip range.
        grad = std::abs(values(i) - old_values(i)) < eps ? clipped_error : 0.0f;
      }
    }
    value += 0.5 * static_cast<double>(term);
    out.grad_values(i) = options.value_cost * grad * inv_n;
  }
  out.policy = policy / static_cast<double>(n);
  out.value = value / static_cast<double>(n);
  out.entropy = static_cast<double>(entropy.mean());
  out.total = out.policy + options.value_cost * out.value - options.entropy_cost * out.entropy;
  out.approx_kl = kl / static_cast<double>(n);
  out.clip_fraction = static_cast<double>(clipped) / static_cast<double>(n);
  return out;
}

}  // namespace seedrl
