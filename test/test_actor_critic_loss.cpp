// The actor-critic loss pieces against a double-precision reference and finite differences.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "seedrl/algo/actor_critic_loss.hpp"
#include "support/reference_nn.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_actor_critic_loss {

using namespace seedrl;
using namespace seedrl::test;

namespace {

constexpr Eigen::Index kSteps = 3, kBatch = 2, kActions = 4, kFrames = kSteps * kBatch;

struct Problem {
  Vec logits;  // [N, A], row t * B + b
  Vec values;  // [T, B] as (t, b) -> t * B + b
  Eigen::ArrayXXi actions{kSteps, kBatch};
  Eigen::ArrayXXf vs{kSteps, kBatch}, advantages{kSteps, kBatch};
};

Problem make_problem(std::uint64_t seed) {
  Rng rng(seed);
  Problem p;
  p.logits = random_vec(kFrames * kActions, rng, -2, 2);
  p.values = random_vec(kFrames, rng, -1, 1);
  for (Eigen::Index t = 0; t < kSteps; ++t)
    for (Eigen::Index b = 0; b < kBatch; ++b) {
      p.actions(t, b) = static_cast<int>(rng.below(kActions));
      p.vs(t, b) = static_cast<float>(rng.uniform(-1, 1));
      p.advantages(t, b) = static_cast<float>(rng.uniform(-1, 1));
    }
  return p;
}

RowMatrixXf logits_matrix(const Vec& v) {
  RowMatrixXf m(kFrames, kActions);
  for (Eigen::Index i = 0; i < m.size(); ++i)
    m.data()[i] = static_cast<float>(v[static_cast<std::size_t>(i)]);
  return m;
}
Eigen::ArrayXXf values_array(const Vec& v) {
  Eigen::ArrayXXf a(kSteps, kBatch);
  for (Eigen::Index t = 0; t < kSteps; ++t)
    for (Eigen::Index b = 0; b < kBatch; ++b)
      a(t, b) = static_cast<float>(v[static_cast<std::size_t>(t * kBatch + b)]);
  return a;
}

// The loss written out in double precision from its definition.
struct Terms {
  double policy = 0, baseline = 0, entropy = 0;
};
// `ceiling`: the entropy the bonus counts at most, in nats.
Terms reference(const Problem& p, const Vec& logits, const Vec& values, double baseline_cost,
                double entropy_cost, double ceiling = INFINITY) {
  Terms terms;
  for (Eigen::Index t = 0; t < kSteps; ++t)
    for (Eigen::Index b = 0; b < kBatch; ++b) {
      const Eigen::Index row = t * kBatch + b;
      double z = 0.0;
      for (Eigen::Index a = 0; a < kActions; ++a)
        z += std::exp(logits[static_cast<std::size_t>(row * kActions + a)]);
      double h = 0.0;
      for (Eigen::Index a = 0; a < kActions; ++a) {
        const double lp = logits[static_cast<std::size_t>(row * kActions + a)] - std::log(z);
        h -= std::exp(lp) * lp;
        if (a == p.actions(t, b)) terms.policy -= lp * p.advantages(t, b);
      }
      terms.entropy -= entropy_cost * std::min(h, ceiling);
      const double err = p.vs(t, b) - values[static_cast<std::size_t>(row)];
      terms.baseline += baseline_cost * 0.5 * err * err;
    }
  terms.policy /= kFrames;
  terms.entropy /= kFrames;
  terms.baseline /= kFrames;
  return terms;
}

Vec to_vec_matrix(const RowMatrixXf& m) {
  return Vec(m.data(), m.data() + m.size());
}
Vec to_vec_values(const Eigen::ArrayXXf& a) {
  Vec v(static_cast<std::size_t>(kFrames));
  for (Eigen::Index t = 0; t < kSteps; ++t)
    for (Eigen::Index b = 0; b < kBatch; ++b) v[static_cast<std::size_t>(t * kBatch + b)] = a(t, b);
  return v;
}

}  // namespace

TEST_CASE("actor_critic_loss: every term and both gradients match the definition") {
  const Problem p = make_problem(1);
  const ActorCriticLossOptions options{0.5f, 0.01f};
  const ActorCriticLoss loss = actor_critic_loss(
      logits_matrix(p.logits), p.actions, values_array(p.values), {p.vs, p.advantages}, options);
  const Terms ref = reference(p, p.logits, p.values, 0.5, 0.01);
  CHECK(loss.policy_loss == doctest::Approx(ref.policy).epsilon(1e-5));
  CHECK(loss.baseline_loss == doctest::Approx(ref.baseline).epsilon(1e-5));
  CHECK(loss.entropy_loss == doctest::Approx(ref.entropy).epsilon(1e-5));
  CHECK(loss.total_loss == doctest::Approx(ref.policy + ref.baseline + ref.entropy).epsilon(1e-5));
  CHECK(loss.mean_entropy == doctest::Approx(-ref.entropy / 0.01).epsilon(1e-5));

  auto total = [&](const Vec& logits, const Vec& values) {
    const Terms t = reference(p, logits, values, 0.5, 0.01);
    return t.policy + t.baseline + t.entropy;
  };
  const Vec num_logits =
      numeric_gradient([&](const Vec& v) { return total(v, p.values); }, p.logits);
  const Vec num_values =
      numeric_gradient([&](const Vec& v) { return total(p.logits, v); }, p.values);
  CHECK(relative_error(to_vec_matrix(loss.grad_logits), num_logits) < 1e-5);
  CHECK(relative_error(to_vec_values(loss.grad_values), num_values) < 1e-5);
}

TEST_CASE("each loss piece has its own gradient") {
  const Problem p = make_problem(2);
  const RowMatrixXf logits = logits_matrix(p.logits);

  const auto pg = policy_gradient_loss(logits, p.actions, p.advantages);
  CHECK(pg.loss == doctest::Approx(reference(p, p.logits, p.values, 0, 0).policy).epsilon(1e-5));
  CHECK(relative_error(
            to_vec_matrix(pg.grad),
            numeric_gradient([&](const Vec& v) { return reference(p, v, p.values, 0, 0).policy; },
                             p.logits)) < 1e-5);

  const auto ent = entropy_loss(logits, 0.1f);
  CHECK(relative_error(to_vec_matrix(ent.grad),
                       numeric_gradient(
                           [&](const Vec& v) { return reference(p, v, p.values, 0, 0.1).entropy; },
                           p.logits)) < 1e-5);

  const auto base = baseline_loss(values_array(p.values), p.vs, 2.0f);
  CHECK(base.loss ==
        doctest::Approx(reference(p, p.logits, p.values, 2.0, 0).baseline).epsilon(1e-5));
  CHECK(relative_error(to_vec_values(base.grad),
                       numeric_gradient(
                           [&](const Vec& v) { return reference(p, p.logits, v, 2.0, 0).baseline; },
                           p.values)) < 1e-5);

  const Eigen::ArrayXXf lp = action_log_probs(logits, p.actions);
  const RowMatrixXf all = math::log_softmax(logits);
  CHECK(lp(2, 1) == doctest::Approx(all(2 * kBatch + 1, p.actions(2, 1))));
}

// Each frame's entropy, ascending.
std::vector<double> sorted_entropies(const Problem& p) {
  const Eigen::VectorXf h =
      math::entropy_from_log_probs(math::log_softmax(logits_matrix(p.logits)));
  std::vector<double> out(h.data(), h.data() + h.size());
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("entropy ceiling: the bonus counts a frame's entropy up to c ln A, no gradient above") {
  const Problem p = make_problem(4);
  // A ceiling in the widest gap between two frames' entropies (k frames below it, the others
  // above), no frame within a finite-difference step of the kink.
  const std::vector<double> h = sorted_entropies(p);
  std::size_t k = 1;
  for (std::size_t i = 1; i + 1 < h.size(); ++i)
    if (h[i + 1] - h[i] > h[k + 1] - h[k]) k = i;
  REQUIRE(h[k + 1] - h[k] > 1e-2);
  const auto above = static_cast<int>(h.size() - k - 1);
  const double nats = 0.5 * (h[k] + h[k + 1]);
  const auto ceiling = static_cast<float>(nats / std::log(static_cast<double>(kActions)));
  const ActorCriticLossOptions options{
      .baseline_cost = 0.5f, .entropy_cost = 0.1f, .entropy_ceiling = ceiling};
  const ActorCriticLoss loss = actor_critic_loss(
      logits_matrix(p.logits), p.actions, values_array(p.values), {p.vs, p.advantages}, options);
  const double c = static_cast<float>(ceiling * std::log(static_cast<float>(kActions)));
  const Terms ref = reference(p, p.logits, p.values, 0.5, 0.1, c);
  CHECK(loss.entropy_loss == doctest::Approx(ref.entropy).epsilon(1e-5));
  CHECK(loss.total_loss == doctest::Approx(ref.policy + ref.baseline + ref.entropy).epsilon(1e-5));
  // The metric stays the policy's whole entropy.
  CHECK(loss.mean_entropy == doctest::Approx(-reference(p, p.logits, p.values, 0, 1).entropy));
  const Vec numeric = numeric_gradient(
      [&](const Vec& v) {
        const Terms t = reference(p, v, p.values, 0.5, 0.1, c);
        return t.policy + t.baseline + t.entropy;
      },
      p.logits);
  CHECK(relative_error(to_vec_matrix(loss.grad_logits), numeric) < 1e-5);

  // entropy_loss alone: the frames above the ceiling get no gradient; c = 1 is the plain bonus.
  const auto capped = entropy_loss(logits_matrix(p.logits), 0.1f, ceiling);
  const auto plain = entropy_loss(logits_matrix(p.logits), 0.1f);
  const Eigen::VectorXf frame_h =
      math::entropy_from_log_probs(math::log_softmax(logits_matrix(p.logits)));
  int zero_rows = 0;
  for (Eigen::Index row = 0; row < kFrames; ++row) {
    if (frame_h(row) > c) {
      CHECK(capped.grad.row(row).isZero());
      ++zero_rows;
    } else {
      CHECK(capped.grad.row(row).isApprox(plain.grad.row(row)));
    }
  }
  CHECK(zero_rows == above);
  CHECK(above > 0);
  CHECK(plain.loss ==
        doctest::Approx(reference(p, p.logits, p.values, 0, 0.1).entropy).epsilon(1e-5));
  CHECK(entropy_loss(logits_matrix(p.logits), 0.1f, 1.0f).loss == plain.loss);
  CHECK_THROWS_WITH_AS(entropy_loss(logits_matrix(p.logits), 0.1f, 0.0f),
                       doctest::Contains("entropy_ceiling must be in (0, 1], got 0"), Error);
  CHECK_THROWS_WITH_AS(entropy_loss(logits_matrix(p.logits), 0.1f, 1.5f),
                       doctest::Contains("entropy_ceiling"), Error);
}

TEST_CASE("loss inputs are validated") {
  const Problem p = make_problem(3);
  Eigen::ArrayXXi bad = p.actions;
  bad(1, 1) = kActions;
  CHECK_THROWS_WITH_AS(action_log_probs(logits_matrix(p.logits), bad),
                       doctest::Contains("action 4 out of range [0, 4)"), Error);
  CHECK_THROWS_WITH_AS(
      policy_gradient_loss(logits_matrix(p.logits).topRows(4), p.actions, p.advantages),
      doctest::Contains("logits have 4 rows, expected T * B = 6"), Error);
  CHECK_THROWS_WITH_AS(baseline_loss(Eigen::ArrayXXf(2, 2), p.vs, 0.5f),
                       doctest::Contains("values are [2, 2]"), Error);
  CHECK_THROWS_WITH_AS(actor_critic_loss(logits_matrix(p.logits), p.actions, values_array(p.values),
                                         {p.vs, p.advantages}, {-1.0f, 0.0f}),
                       doctest::Contains("baseline_cost"), Error);
}

}  // namespace test_actor_critic_loss
