// The SAC terms (algo/sac_loss.hpp) against independent references: the squashed sample and its
// log-density against a float64 loop, every gradient against central differences in float64 of
// that loop, the critic targets with their entropy term, and the actor and temperature losses.
// (The Polyak update of the target critics is NetworkSet's, checked in test_network_set.cpp.)
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "seedrl/algo/sac_loss.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_sac_loss {

using namespace seedrl;

namespace {

constexpr double kLogSqrt2Pi = 0.91893853320467274178;

SacMatrix random_matrix(Eigen::Index n, Eigen::Index d, Rng& rng, double scale) {
  SacMatrix m(n, d);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < d; ++j) m(i, j) = static_cast<float>(rng.uniform(-scale, scale));
  return m;
}

// The same sample in double, by the formulas of the header, without the stable form.
struct Reference {
  Eigen::ArrayXXd action;
  Eigen::ArrayXd log_prob;
};
Reference reference(const Eigen::ArrayXXd& mean, const Eigen::ArrayXXd& raw,
                    const Eigen::ArrayXXd& noise, const Eigen::ArrayXd& scale,
                    const Eigen::ArrayXd& bias, double lo, double hi) {
  const Eigen::Index n = mean.rows(), d = mean.cols();
  Reference r{Eigen::ArrayXXd(n, d), Eigen::ArrayXd(n)};
  for (Eigen::Index i = 0; i < n; ++i) {
    double lp = 0.0;
    for (Eigen::Index j = 0; j < d; ++j) {
      const double log_std = lo + 0.5 * (hi - lo) * (std::tanh(raw(i, j)) + 1.0);
      const double u = mean(i, j) + std::exp(log_std) * noise(i, j);
      const double y = std::tanh(u);
      r.action(i, j) = scale(j) * y + bias(j);
      const double z = noise(i, j);
      lp += -0.5 * z * z - log_std - kLogSqrt2Pi - std::log(scale(j) * (1.0 - y * y));
    }
    r.log_prob(i) = lp;
  }
  return r;
}

}  // namespace

TEST_CASE("SAC: the squashed sample and its log-density match a float64 loop") {
  Rng rng(1);
  const SacMatrix mean = random_matrix(5, 3, rng, 1.5);
  const SacMatrix raw = random_matrix(5, 3, rng, 2.0);
  const Eigen::ArrayXf scale = (Eigen::ArrayXf(3) << 2.0f, 0.5f, 1.0f).finished();
  const Eigen::ArrayXf bias = (Eigen::ArrayXf(3) << 0.0f, 0.25f, -1.0f).finished();
  const SacSample s = sac_sample(mean, raw, scale, bias, {}, &rng);
  const Reference r = reference(mean.cast<double>(), raw.cast<double>(), s.noise.cast<double>(),
                                scale.cast<double>(), bias.cast<double>(), -5.0, 2.0);
  for (Eigen::Index i = 0; i < 5; ++i) {
    CAPTURE(i);
    CHECK(s.log_prob(i) == doctest::Approx(r.log_prob(i)).epsilon(1e-4));
    for (Eigen::Index j = 0; j < 3; ++j) {
      CHECK(s.action(i, j) == doctest::Approx(r.action(i, j)).epsilon(1e-5));
      CHECK(s.action(i, j) >= bias(j) - scale(j));  // within the box
      CHECK(s.action(i, j) <= bias(j) + scale(j));
      CHECK(s.log_std(i, j) >= -5.0f);
      CHECK(s.log_std(i, j) <= 2.0f);
    }
  }
  // Zero noise is the squashed mean (the greedy action); a saturated u keeps a finite density.
  const SacMatrix zeros = SacMatrix::Zero(5, 3);
  const SacSample greedy = sac_sample(mean, raw, scale, bias, {}, nullptr, &zeros);
  CHECK(greedy.action(2, 1) == doctest::Approx(0.5f * std::tanh(mean(2, 1)) + 0.25f));
  SacMatrix huge = mean;
  huge(0, 0) = 40.0f;
  CHECK(std::isfinite(sac_sample(huge, raw, scale, bias, {}, nullptr, &zeros).log_prob(0)));
  CHECK_THROWS_WITH_AS(sac_sample(mean, raw, scale.head(2), bias, {}, &rng),
                       doctest::Contains("D scales and biases"), Error);
}

TEST_CASE("SAC: gradients through the sample match central differences") {
  Rng rng(2);
  const Eigen::Index n = 4, d = 2;
  const SacMatrix mean = random_matrix(n, d, rng, 1.0);
  const SacMatrix raw = random_matrix(n, d, rng, 1.0);
  const Eigen::ArrayXf scale = (Eigen::ArrayXf(2) << 2.0f, 1.0f).finished();
  const Eigen::ArrayXf bias = (Eigen::ArrayXf(2) << 0.5f, 0.0f).finished();
  const SacMatrix noise = random_matrix(n, d, rng, 1.5);
  const SacMatrix w_action = random_matrix(n, d, rng, 1.0);
  const Eigen::ArrayXf w_log_prob = random_matrix(n, 1, rng, 1.0).col(0);
  // L = sum(w_action * action) + sum(w_log_prob * log_prob), in double through the reference.
  auto loss = [&](const Eigen::ArrayXXd& m, const Eigen::ArrayXXd& r) {
    const Reference ref =
        reference(m, r, noise.cast<double>(), scale.cast<double>(), bias.cast<double>(), -5.0, 2.0);
    return (ref.action * w_action.cast<double>()).sum() +
           (ref.log_prob * w_log_prob.cast<double>()).sum();
  };
  const SacSample s = sac_sample(mean, raw, scale, bias, {}, nullptr, &noise);
  const SacSampleGrads g = sac_sample_backward(s, raw, scale, {}, w_action, w_log_prob);
  const double h = 1e-5;
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < d; ++j) {
      CAPTURE(i);
      CAPTURE(j);
      Eigen::ArrayXXd up = mean.cast<double>(), down = up;
      up(i, j) += h;
      down(i, j) -= h;
      const double numeric_mean =
          (loss(up, raw.cast<double>()) - loss(down, raw.cast<double>())) / (2 * h);
      CHECK(g.mean(i, j) == doctest::Approx(numeric_mean).epsilon(1e-3));
      Eigen::ArrayXXd r_up = raw.cast<double>(), r_down = r_up;
      r_up(i, j) += h;
      r_down(i, j) -= h;
      const double numeric_raw =
          (loss(mean.cast<double>(), r_up) - loss(mean.cast<double>(), r_down)) / (2 * h);
      CHECK(g.raw_log_std(i, j) == doctest::Approx(numeric_raw).epsilon(1e-3));
    }
  }
}

TEST_CASE("SAC: critic targets with the entropy term, and the critic loss") {
  const Eigen::ArrayXf returns = (Eigen::ArrayXf(3) << 1.0f, -0.5f, 2.0f).finished();
  const Eigen::ArrayXf discounts = (Eigen::ArrayXf(3) << 0.99f, 0.0f, 0.9801f).finished();
  const Eigen::ArrayXf q1 = (Eigen::ArrayXf(3) << 3.0f, 5.0f, -1.0f).finished();
  const Eigen::ArrayXf q2 = (Eigen::ArrayXf(3) << 2.5f, 6.0f, -0.5f).finished();
  const Eigen::ArrayXf log_prob = (Eigen::ArrayXf(3) << -1.0f, 0.3f, 2.0f).finished();
  const Eigen::ArrayXf y = sac_critic_targets(returns, discounts, q1, q2, log_prob, 0.2f);
  CHECK(y(0) == doctest::Approx(1.0 + 0.99 * (2.5 + 0.2)));
  CHECK(y(1) == doctest::Approx(-0.5));  // terminated: no bootstrap, no entropy term
  CHECK(y(2) == doctest::Approx(2.0 + 0.9801 * (-1.0 - 0.4)));

  const Eigen::ArrayXf q = (Eigen::ArrayXf(3) << 4.0f, 0.0f, 1.0f).finished();
  const Eigen::ArrayXf mask = (Eigen::ArrayXf(3) << 1.0f, 0.0f, 1.0f).finished();
  const SacCriticLoss l = sac_critic_loss(q, y, mask);
  const double e0 = 4.0 - y(0), e2 = 1.0 - y(2);
  CHECK(l.loss == doctest::Approx(0.5 * (e0 * e0 + e2 * e2) / 2.0));
  CHECK(l.grad_q(0) == doctest::Approx(e0 / 2.0));
  CHECK(l.grad_q(1) == 0.0f);  // masked out
  CHECK(l.grad_q(2) == doctest::Approx(e2 / 2.0));
  CHECK_THROWS_WITH_AS(sac_critic_loss(q, y.head(2), mask),
                       doctest::Contains("targets has 2 entries for 3 transitions"), Error);
}

TEST_CASE("SAC: the actor loss through the smaller critic, and the temperature loss") {
  const Eigen::ArrayXf log_prob = (Eigen::ArrayXf(4) << -1.0f, 0.5f, 2.0f, 0.0f).finished();
  const Eigen::ArrayXf q1 = (Eigen::ArrayXf(4) << 1.0f, 4.0f, -2.0f, 3.0f).finished();
  const Eigen::ArrayXf q2 = (Eigen::ArrayXf(4) << 2.0f, 3.0f, -2.0f, 9.0f).finished();
  const Eigen::ArrayXf mask = (Eigen::ArrayXf(4) << 1.0f, 1.0f, 1.0f, 0.0f).finished();
  const float alpha = 0.3f;
  const SacActorLoss a = sac_actor_loss(log_prob, q1, q2, alpha, mask);
  CHECK(a.loss ==
        doctest::Approx(((0.3 * -1.0 - 1.0) + (0.3 * 0.5 - 3.0) + (0.3 * 2.0 + 2.0)) / 3.0));
  CHECK(a.grad_log_prob(0) == doctest::Approx(0.1));
  CHECK(a.grad_log_prob(3) == 0.0f);
  CHECK(a.grad_q1(0) == doctest::Approx(-1.0 / 3));  // q1 smaller
  CHECK(a.grad_q2(0) == 0.0f);
  CHECK(a.grad_q2(1) == doctest::Approx(-1.0 / 3));  // q2 smaller
  CHECK(a.grad_q1(2) == doctest::Approx(-1.0 / 3));  // a tie: q1's
  CHECK(a.grad_q1(3) == 0.0f);

  // Temperature: mean(-log alpha (log pi + target entropy)), and its derivative in log alpha
  // against a central difference.
  const double target = -2.0, log_alpha = std::log(0.3);
  const SacTemperatureLoss t = sac_temperature_loss(log_alpha, log_prob, target, mask);
  const double mean = ((-1.0 + target) + (0.5 + target) + (2.0 + target)) / 3.0;
  CHECK(t.loss == doctest::Approx(-log_alpha * mean));
  const double h = 1e-6;
  const double numeric = (sac_temperature_loss(log_alpha + h, log_prob, target, mask).loss -
                          sac_temperature_loss(log_alpha - h, log_prob, target, mask).loss) /
                         (2 * h);
  CHECK(t.grad_log_alpha == doctest::Approx(numeric).epsilon(1e-6));
  // A policy more random than the target entropy asks for less of it: a positive gradient in
  // log alpha, which gradient descent turns into a smaller alpha.
  const Eigen::ArrayXf random_policy = Eigen::ArrayXf::Constant(4, -5.0f);
  CHECK(sac_temperature_loss(log_alpha, random_policy, target, mask).grad_log_alpha > 0.0);
}

}  // namespace test_sac_loss
