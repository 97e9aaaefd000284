// The SAC terms of algo/sac_loss.hpp. Every mean runs over the transitions the mask marks.
#include "seedrl/algo/sac_loss.hpp"

#include <cmath>

#include "seedrl/math/distributions.hpp"

namespace seedrl {

namespace {

void require_rows(Eigen::Index n, Eigen::Index got, const char* what) {
  SEEDRL_REQUIRE(got == n, "SAC: ", what, " has ", got, " entries for ", n, " transitions");
}

// The masked transitions' count, at least 1 (an all-masked batch has zero loss and gradients).
double count_of(const Eigen::ArrayXf& mask) {
  return std::max(1.0, static_cast<double>(mask.sum()));
}

}  // namespace

SacSample sac_sample(const SacMatrix& mean, const SacMatrix& raw_log_std,
                     const Eigen::ArrayXf& scale, const Eigen::ArrayXf& bias,
                     const SacLogStdBounds& bounds, Rng* rng, const SacMatrix* noise) {
  const Eigen::Index n = mean.rows(), d = mean.cols();
  SEEDRL_REQUIRE(
      raw_log_std.rows() == n && raw_log_std.cols() == d && scale.size() == d && bias.size() == d,
      "SAC: a sample needs mean and log std [N, D] and D scales and biases, got [", n, ", ", d,
      "], [", raw_log_std.rows(), ", ", raw_log_std.cols(), "], ", scale.size(), " and ",
      bias.size());
  SacSample s;
  if (noise != nullptr) {
    SEEDRL_REQUIRE(noise->rows() == n && noise->cols() == d, "SAC: noise of [", noise->rows(), ", ",
                   noise->cols(), "] for [", n, ", ", d, "]");
    s.noise = *noise;
  } else {
    SEEDRL_REQUIRE(rng != nullptr, "SAC: a sample needs noise or a random generator");
    s.noise.resize(n, d);
    for (Eigen::Index i = 0; i < n; ++i)
      for (Eigen::Index j = 0; j < d; ++j) s.noise(i, j) = static_cast<float>(rng->normal());
  }
  const float half_range = 0.5f * (bounds.max - bounds.min);
  s.log_std = bounds.min + half_range * (raw_log_std.tanh() + 1.0f);
  s.pre_tanh = mean + s.log_std.exp() * s.noise;
  s.action.resize(n, d);
  s.log_prob.resize(n);
  const float log_scale = static_cast<float>(scale.log().sum());
  for (Eigen::Index i = 0; i < n; ++i) {
    float lp = -log_scale;
    for (Eigen::Index j = 0; j < d; ++j) {
      const float u = s.pre_tanh(i, j), z = s.noise(i, j);
      s.action(i, j) = scale(j) * std::tanh(u) + bias(j);
      lp += -0.5f * z * z - s.log_std(i, j) - math::kHalfLogTwoPi -
            math::log_one_minus_tanh_squared(u);
    }
    s.log_prob(i) = lp;
  }
  return s;
}

SacSampleGrads sac_sample_backward(const SacSample& sample, const SacMatrix& raw_log_std,
                                   const Eigen::ArrayXf& scale, const SacLogStdBounds& bounds,
                                   const SacMatrix& grad_action,
                                   const Eigen::ArrayXf& grad_log_prob) {
  const Eigen::Index n = sample.action.rows(), d = sample.action.cols();
  SEEDRL_REQUIRE(grad_action.rows() == n && grad_action.cols() == d && grad_log_prob.size() == n &&
                     raw_log_std.rows() == n && raw_log_std.cols() == d,
                 "SAC: gradients of [", grad_action.rows(), ", ", grad_action.cols(), "] and ",
                 grad_log_prob.size(), " for a sample of [", n, ", ", d, "]");
  const float half_range = 0.5f * (bounds.max - bounds.min);
  SacSampleGrads g{SacMatrix(n, d), SacMatrix(n, d)};
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < d; ++j) {
      const float y = std::tanh(sample.pre_tanh(i, j));
      const float std_dev = std::exp(sample.log_std(i, j));
      // d loss / d u: through the action (a = scale tanh u + bias) and through the log density's
      // correction -log(1 - tanh(u)^2), whose derivative is 2 tanh(u).
      const float grad_u =
          grad_action(i, j) * scale(j) * (1.0f - y * y) + grad_log_prob(i) * 2.0f * y;
      g.mean(i, j) = grad_u;
      // u = mean + std z and log N = -z^2 / 2 - log_std - ...: z fixed (reparameterised).
      const float grad_log_std = grad_u * std_dev * sample.noise(i, j) - grad_log_prob(i);
      const float t = std::tanh(raw_log_std(i, j));
      g.raw_log_std(i, j) = grad_log_std * half_range * (1.0f - t * t);
    }
  }
  return g;
}

Eigen::ArrayXf sac_critic_targets(const Eigen::ArrayXf& returns, const Eigen::ArrayXf& discounts,
                                  const Eigen::ArrayXf& q1_next, const Eigen::ArrayXf& q2_next,
                                  const Eigen::ArrayXf& log_prob_next, float alpha) {
  const Eigen::Index n = returns.size();
  require_rows(n, discounts.size(), "discounts");
  require_rows(n, q1_next.size(), "q1 of the next states");
  require_rows(n, q2_next.size(), "q2 of the next states");
  require_rows(n, log_prob_next.size(), "log pi of the next actions");
  return returns + discounts * (q1_next.min(q2_next) - alpha * log_prob_next);
}

SacCriticLoss sac_critic_loss(const Eigen::ArrayXf& q, const Eigen::ArrayXf& targets,
                              const Eigen::ArrayXf& mask) {
  const Eigen::Index n = q.size();
  require_rows(n, targets.size(), "targets");
  require_rows(n, mask.size(), "mask");
  const double count = count_of(mask);
  const Eigen::ArrayXf error = (q - targets) * mask;
  SacCriticLoss l;
  l.loss = 0.5 * error.cast<double>().square().sum() / count;
  l.grad_q = error / static_cast<float>(count);
  return l;
}

SacActorLoss sac_actor_loss(const Eigen::ArrayXf& log_prob, const Eigen::ArrayXf& q1,
                            const Eigen::ArrayXf& q2, float alpha, const Eigen::ArrayXf& mask) {
  const Eigen::Index n = log_prob.size();
  require_rows(n, q1.size(), "q1");
  require_rows(n, q2.size(), "q2");
  require_rows(n, mask.size(), "mask");
  const double count = count_of(mask);
  const float w = static_cast<float>(1.0 / count);
  SacActorLoss l;
  l.grad_log_prob = alpha * w * mask;
  l.grad_q1 = Eigen::ArrayXf::Zero(n);
  l.grad_q2 = Eigen::ArrayXf::Zero(n);
  double loss = 0.0;
  for (Eigen::Index i = 0; i < n; ++i) {
    if (mask(i) == 0.0f) continue;
    const bool first = q1(i) <= q2(i);
    loss += static_cast<double>(alpha) * log_prob(i) - (first ? q1(i) : q2(i));
    (first ? l.grad_q1 : l.grad_q2)(i) = -w;
  }
  l.loss = loss / count;
  return l;
}

SacTemperatureLoss sac_temperature_loss(double log_alpha, const Eigen::ArrayXf& log_prob,
                                        double target_entropy, const Eigen::ArrayXf& mask) {
  require_rows(log_prob.size(), mask.size(), "mask");
  const double count = count_of(mask);
  const double mean =
      ((log_prob.cast<double>() + target_entropy) * mask.cast<double>()).sum() / count;
  return {-log_alpha * mean, -mean};
}

}  // namespace seedrl
