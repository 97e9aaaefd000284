// The PPO loss against a float64 reference written from the paper's definitions, its gradients
// against central finite differences of that reference (away from the clip kinks), the cases
// that decide PPO's behaviour (a clipped ratio stops the gradient in the direction of the
// advantage only; the value clip), advantage normalisation, the diagnostics and clear errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "seedrl/algo/ppo_loss.hpp"
#include "seedrl/core/random.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_ppo_loss {

using namespace seedrl;
using Vector = Eigen::ArrayXd;

namespace {

struct Batch {
  Eigen::ArrayXf log_probs, old_log_probs, advantages, values, old_values, returns, entropy;
};

Batch random_batch(Eigen::Index n, std::uint64_t seed) {
  Rng rng(seed);
  auto draw = [&](double low, double high) {
    Eigen::ArrayXf v(n);
    for (Eigen::Index i = 0; i < n; ++i) v(i) = static_cast<float>(rng.uniform(low, high));
    return v;
  };
  Batch b;
  b.old_log_probs = draw(-3, -0.5);
  b.log_probs = b.old_log_probs + draw(-0.5, 0.5);  // ratios from 0.6 to 1.65: some clipped
  b.advantages = draw(-2, 2);
  b.old_values = draw(-1, 1);
  b.values = b.old_values + draw(-0.5, 0.5);
  b.returns = draw(-2, 2);
  b.entropy = draw(0.1, 1.5);
  return b;
}

// The loss from the definitions, in double; the advantages' normalisation statistics are inputs
// (constants, as in the learner).
double reference(const Vector& log_probs, const Vector& old_log_probs, const Vector& advantages,
                 const Vector& values, const Vector& old_values, const Vector& returns,
                 const Vector& entropy, const PpoLossOptions& o, const Vector& weights = {}) {
  const Eigen::Index n = log_probs.size();
  Vector a = advantages;
  if (o.normalize_advantages) {
    const double mean = a.mean();
    const double sd = std::sqrt((a - mean).square().sum() / static_cast<double>(n - 1));
    a = (a - mean) / (sd + 1e-8);
  }
  const double eps = o.clip;
  double policy = 0, value = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const double r = std::exp(log_probs(i) - old_log_probs(i));
    const double w = weights.size() > 0 ? weights(i) : 1.0;
    policy += w * std::max(-a(i) * r, -a(i) * std::clamp(r, 1 - eps, 1 + eps));
    const double unclipped = std::pow(values(i) - returns(i), 2);
    const double v_clip = old_values(i) + std::clamp(values(i) - old_values(i), -eps, eps);
    value +=
        0.5 * (o.clip_value ? std::max(unclipped, std::pow(v_clip - returns(i), 2)) : unclipped);
  }
  return policy / n + o.value_cost * value / n - o.entropy_cost * entropy.mean();
}

}  // namespace

TEST_CASE("ppo_loss: matches the definition, and its gradients match finite differences") {
  for (const bool clip_value : {false, true}) {
    for (const bool normalize : {false, true}) {
      CAPTURE(clip_value);
      CAPTURE(normalize);
      PpoLossOptions o;
      o.clip_value = clip_value;
      o.normalize_advantages = normalize;
      o.entropy_cost = 0.01f;
      const Batch b = random_batch(64, 3);
      const PpoLoss loss = ppo_loss(b.log_probs, b.old_log_probs, b.advantages, b.values,
                                    b.old_values, b.returns, b.entropy, o);
      // lp, v and ent are perturbed in place by the finite differences below.
      Vector lp = b.log_probs.cast<double>(), v = b.values.cast<double>(),
             ent = b.entropy.cast<double>();
      const Vector olp = b.old_log_probs.cast<double>(), adv = b.advantages.cast<double>(),
                   ov = b.old_values.cast<double>(), ret = b.returns.cast<double>();
      CHECK(loss.total ==
            doctest::Approx(reference(lp, olp, adv, v, ov, ret, ent, o)).epsilon(1e-5));
      CHECK(loss.clip_fraction > 0.05);  // the batch exercises the clip
      CHECK(loss.clip_fraction < 0.95);

      const double h = 1e-6;
      int checked = 0;
      for (Eigen::Index i = 0; i < 64; ++i) {
        // Skip entries within 1e-3 of a kink, where a central difference straddles two pieces.
        const double r = std::exp(lp(i) - olp(i));
        const double dv = v(i) - ov(i);
        if (std::abs(std::abs(r - 1) - o.clip) < 1e-3 || std::abs(std::abs(dv) - o.clip) < 1e-3)
          continue;
        auto numeric = [&](Vector& x) {
          const double saved = x(i);
          x(i) = saved + h;
          const double up = reference(lp, olp, adv, v, ov, ret, ent, o);
          x(i) = saved - h;
          const double down = reference(lp, olp, adv, v, ov, ret, ent, o);
          x(i) = saved;
          return (up - down) / (2 * h);
        };
        CAPTURE(i);
        CHECK(loss.grad_log_probs(i) == doctest::Approx(numeric(lp)).epsilon(1e-4).scale(1e-3));
        CHECK(loss.grad_values(i) == doctest::Approx(numeric(v)).epsilon(1e-4).scale(1e-3));
        CHECK(loss.grad_entropy(i) == doctest::Approx(numeric(ent)).epsilon(1e-4).scale(1e-3));
        ++checked;
      }
      CHECK(checked > 50);
    }
  }
}

TEST_CASE("ppo_loss: behaviour weights scale each transition's policy term and its gradient") {
  PpoLossOptions o;
  o.entropy_cost = 0.01f;
  const Batch b = random_batch(64, 11);
  Rng rng(12);
  Eigen::ArrayXf weights(64);
  for (Eigen::Index i = 0; i < 64; ++i) weights(i) = static_cast<float>(rng.uniform(0.0, 1.0));
  const PpoLoss loss = ppo_loss(b.log_probs, b.old_log_probs, b.advantages, b.values, b.old_values,
                                b.returns, b.entropy, o, weights);
  Vector lp = b.log_probs.cast<double>();
  const Vector olp = b.old_log_probs.cast<double>(), adv = b.advantages.cast<double>(),
               v = b.values.cast<double>(), ov = b.old_values.cast<double>(),
               ret = b.returns.cast<double>(), ent = b.entropy.cast<double>(),
               w = weights.cast<double>();
  CHECK(loss.total ==
        doctest::Approx(reference(lp, olp, adv, v, ov, ret, ent, o, w)).epsilon(1e-5));
  const double h = 1e-6;
  int checked = 0;
  for (Eigen::Index i = 0; i < 64; ++i) {
    if (std::abs(std::abs(std::exp(lp(i) - olp(i)) - 1) - o.clip) < 1e-3) continue;
    const double saved = lp(i);
    lp(i) = saved + h;
    const double up = reference(lp, olp, adv, v, ov, ret, ent, o, w);
    lp(i) = saved - h;
    const double down = reference(lp, olp, adv, v, ov, ret, ent, o, w);
    lp(i) = saved;
    CAPTURE(i);
    CHECK(loss.grad_log_probs(i) ==
          doctest::Approx((up - down) / (2 * h)).epsilon(1e-4).scale(1e-3));
    ++checked;
  }
  CHECK(checked > 50);
  // Weights of one are no weights; the value loss and the diagnostics do not depend on them.
  const PpoLoss plain = ppo_loss(b.log_probs, b.old_log_probs, b.advantages, b.values, b.old_values,
                                 b.returns, b.entropy, o);
  const PpoLoss ones = ppo_loss(b.log_probs, b.old_log_probs, b.advantages, b.values, b.old_values,
                                b.returns, b.entropy, o, Eigen::ArrayXf::Ones(64));
  CHECK(ones.total == plain.total);
  CHECK(loss.value == plain.value);
  CHECK(loss.approx_kl == plain.approx_kl);
  CHECK(loss.clip_fraction == plain.clip_fraction);
  CHECK((loss.grad_values == plain.grad_values).all());

  CHECK_THROWS_WITH_AS(ppo_loss(b.log_probs, b.old_log_probs, b.advantages, b.values, b.old_values,
                                b.returns, b.entropy, o, weights.head(10)),
                       doctest::Contains("weights must have 64 entries"), Error);
  weights(3) = -0.5f;
  CHECK_THROWS_WITH_AS(ppo_loss(b.log_probs, b.old_log_probs, b.advantages, b.values, b.old_values,
                                b.returns, b.entropy, o, weights),
                       doctest::Contains("weights must be finite and >= 0"), Error);
}

TEST_CASE("ppo_loss: the clip stops the gradient only beyond the trust region, per sign") {
  PpoLossOptions o;
  o.normalize_advantages = false;
  o.clip_value = false;
  const Eigen::ArrayXf old_lp = Eigen::ArrayXf::Constant(4, -1.0f);
  Eigen::ArrayXf lp(4), adv(4);
  // ratio 1.5 with A > 0: clipped, no gradient; ratio 1.5 with A < 0: pessimistic term, gradient;
  // ratio 0.5 with A < 0: clipped, no gradient; ratio 0.5 with A > 0: gradient.
  lp << -1.0f + std::log(1.5f), -1.0f + std::log(1.5f), -1.0f + std::log(0.5f),
      -1.0f + std::log(0.5f);
  adv << 1.0f, -1.0f, -1.0f, 1.0f;
  const Eigen::ArrayXf zero = Eigen::ArrayXf::Zero(4);
  const PpoLoss loss = ppo_loss(lp, old_lp, adv, zero, zero, zero, zero, o);
  CHECK(loss.grad_log_probs(0) == 0.0f);
  CHECK(loss.grad_log_probs(1) == doctest::Approx(1.5 / 4));  // -A r / N
  CHECK(loss.grad_log_probs(2) == 0.0f);
  CHECK(loss.grad_log_probs(3) == doctest::Approx(-0.5 / 4));
  CHECK(loss.clip_fraction == 1.0);
  CHECK(loss.policy == doctest::Approx((-1.2 + 1.5 + 0.8 - 0.5) / 4));

  // At the old policy: ratio 1, policy loss -mean(A), KL 0, nothing clipped.
  const PpoLoss same = ppo_loss(old_lp, old_lp, adv, zero, zero, zero, zero, o);
  CHECK(same.policy == doctest::Approx(0.0));
  CHECK(same.approx_kl == 0.0);
  CHECK(same.clip_fraction == 0.0);
  for (int i = 0; i < 4; ++i) CHECK(same.grad_log_probs(i) == doctest::Approx(-adv(i) / 4));
}

TEST_CASE("ppo_loss: the value clip keeps the update near the old values") {
  PpoLossOptions o;
  o.normalize_advantages = false;
  const Eigen::ArrayXf zero = Eigen::ArrayXf::Zero(2);
  Eigen::ArrayXf values(2), old_values(2), returns(2);
  // Entry 0 moved 0.5 past its old value toward the target: the clipped error is larger and
  // constant in V, so no gradient. Entry 1 moved away from the target: the unclipped error wins.
  values << 0.5f, -0.3f;
  old_values << 0.0f, 0.0f;
  returns << 1.0f, 1.0f;
  const PpoLoss loss = ppo_loss(zero, zero, zero, values, old_values, returns, zero, o);
  CHECK(loss.grad_values(0) == 0.0f);
  CHECK(loss.grad_values(1) == doctest::Approx(0.5 * (-1.3) / 2));
  CHECK(loss.value == doctest::Approx(0.5 * (0.8 * 0.8 + 1.3 * 1.3) / 2));
  o.clip_value = false;
  const PpoLoss plain = ppo_loss(zero, zero, zero, values, old_values, returns, zero, o);
  CHECK(plain.grad_values(0) == doctest::Approx(0.5 * (-0.5) / 2));
}

TEST_CASE("ppo_loss: normalised advantages, the diagnostics and clear errors") {
  const Batch b = random_batch(32, 5);
  PpoLossOptions o;
  const PpoLoss scaled = ppo_loss(b.log_probs, b.old_log_probs, 10.0f * b.advantages + 3.0f,
                                  b.values, b.old_values, b.returns, b.entropy, o);
  const PpoLoss plain = ppo_loss(b.log_probs, b.old_log_probs, b.advantages, b.values, b.old_values,
                                 b.returns, b.entropy, o);
  CHECK(scaled.policy == doctest::Approx(plain.policy).epsilon(1e-4));  // invariant to scale
  const Eigen::ArrayXf r = (b.log_probs - b.old_log_probs).exp();
  CHECK(plain.approx_kl ==
        doctest::Approx(((r - 1.0f) - (b.log_probs - b.old_log_probs)).mean()).epsilon(1e-5));
  CHECK(plain.approx_kl > 0.0);
  CHECK(plain.entropy == doctest::Approx(b.entropy.mean()));

  CHECK_THROWS_WITH_AS(ppo_loss(b.log_probs, b.old_log_probs, b.advantages.head(3), b.values,
                                b.old_values, b.returns, b.entropy, o),
                       doctest::Contains("advantages 3"), Error);
  const Eigen::ArrayXf none(0);
  CHECK_THROWS_WITH_AS(ppo_loss(none, none, none, none, none, none, none, o),
                       doctest::Contains("empty minibatch"), Error);
  PpoLossOptions bad;
  bad.clip = 1.5f;
  CHECK_THROWS_WITH_AS(ppo_loss(b.log_probs, b.old_log_probs, b.advantages, b.values, b.old_values,
                                b.returns, b.entropy, bad),
                       doctest::Contains("PpoLossOptions.clip must be in (0, 1)"), Error);
}

}  // namespace test_ppo_loss
