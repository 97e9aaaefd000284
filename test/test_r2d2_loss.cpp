// The R2D2 loss (algo/r2d2_loss.hpp) against a float64 reference written from the definitions
// (its own h and h^-1, the n-step sums walked literally) and finite differences of it; with
// action branches, the mean over the branches of that reference, each with its own actions and
// double-Q target.
#include <doctest/doctest.h>

#include <cmath>

#include "seedrl/algo/r2d2_loss.hpp"
#include "support/reference_nn.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_r2d2_loss {

using namespace seedrl;
using namespace seedrl::test;

namespace {

constexpr Eigen::Index kSteps = 5, kBatch = 3, kActions = 4;
constexpr Eigen::Index kRows = (kSteps + 1) * kBatch;  // the window's T + 1 steps

struct Problem {
  Vec q_online, q_target;  // [(T + 1) B, A] row-major
  Eigen::ArrayXXi actions{kSteps, kBatch};
  Eigen::ArrayXXf rewards{kSteps, kBatch}, dones{kSteps, kBatch}, mask{kSteps, kBatch};
  std::vector<float> weights;
};

// Random Q-values and transitions with terminations and boundaries (a boundary is followed by
// the first step of the next episode, whose transition is real again).
Problem make_problem(std::uint64_t seed) {
  Rng rng(seed);
  Problem p;
  p.q_online = random_vec(kRows * kActions, rng, -3, 3);
  p.q_target = random_vec(kRows * kActions, rng, -3, 3);
  for (Eigen::Index b = 0; b < kBatch; ++b) {
    p.weights.push_back(static_cast<float>(rng.uniform(0.2, 1.0)));
    for (Eigen::Index t = 0; t < kSteps; ++t) {
      p.actions(t, b) = static_cast<int>(rng.below(kActions));
      p.rewards(t, b) = static_cast<float>(rng.uniform(-2, 5));
      p.dones(t, b) = 0.0f;
      p.mask(t, b) = 1.0f;
    }
  }
  p.dones(1, 0) = 1.0f;  // a termination: x_2 of sequence 0 is terminal
  p.mask(2, 0) = 0.0f;   // ... so step 2 is a boundary
  p.dones(2, 0) = 1.0f;
  p.rewards(2, 0) = 0.0f;
  p.mask(3, 1) = 0.0f;  // a truncation: x_3 of sequence 1 ended its episode, not terminally
  p.dones(3, 1) = 1.0f;
  p.rewards(3, 1) = 0.0f;
  return p;
}

double h(double x, double eps) {
  return (x < 0 ? -1.0 : 1.0) * (std::sqrt(std::abs(x) + 1.0) - 1.0) + eps * x;
}
double h_inverse(double x, double eps) {  // Newton's method on h(y) = x: independent of the library
  double y = x * (std::abs(x) + 2.0);
  for (int i = 0; i < 100; ++i) {
    const double slope = 0.5 / std::sqrt(std::abs(y) + 1.0) + eps;
    y -= (h(y, eps) - x) / slope;
  }
  return y;
}

struct Reference {
  double loss = 0.0;
  Eigen::ArrayXXd td{kSteps, kBatch};
  Eigen::ArrayXd priorities{kBatch};
};

Reference reference(const Problem& p, const Vec& q_online, const R2D2LossOptions& o) {
  const double eps = o.value_rescale_epsilon;
  auto q = [&](const Vec& v, Eigen::Index step, Eigen::Index b, Eigen::Index a) {
    return v[static_cast<std::size_t>((step * kBatch + b) * kActions + a)];
  };
  auto value = [&](Eigen::Index step, Eigen::Index b) {  // double-Q bootstrap, raw units
    Eigen::Index best = 0;
    for (Eigen::Index a = 1; a < kActions; ++a)
      if (q(q_online, step, b, a) > q(q_online, step, b, best)) best = a;
    const double v = q(p.q_target, step, b, best);
    return o.value_rescaling ? h_inverse(v, eps) : v;
  };
  Reference ref;
  for (Eigen::Index b = 0; b < kBatch; ++b) {
    for (Eigen::Index t = 0; t < kSteps; ++t) {
      if (p.mask(t, b) == 0.0f) {
        ref.td(t, b) = 0.0;
        continue;
      }
      // Walk forward up to n rewards; a boundary contributes the value of its state and stops.
      const Eigen::Index m = std::min<Eigen::Index>(o.n_step, kSteps - t);
      double y = 0.0, discount = 1.0;
      bool stopped = false;
      for (Eigen::Index i = 0; i < m && !stopped; ++i) {
        const Eigen::Index k = t + i;
        y += discount * (p.mask(k, b) == 0.0f ? value(k, b) : p.rewards(k, b));
        stopped = p.dones(k, b) != 0.0f;
        discount *= o.discount;
      }
      if (!stopped) y += discount * value(t + m, b);
      const double target = o.value_rescaling ? h(y, eps) : y;
      ref.td(t, b) = q(q_online, t, b, p.actions(t, b)) - target;
    }
    const double w = p.weights[static_cast<std::size_t>(b)];
    ref.loss += w * 0.5 * ref.td.col(b).square().sum() / kBatch;
    const double max = ref.td.col(b).abs().maxCoeff(), mean = ref.td.col(b).abs().mean();
    ref.priorities(b) = o.priority_eta * max + (1.0 - o.priority_eta) * mean;
  }
  return ref;
}

R2D2Loss compute(const Problem& p, const R2D2LossOptions& o) {
  RowMatrixXf online(kRows, kActions), target(kRows, kActions);
  for (Eigen::Index i = 0; i < online.size(); ++i) {
    online.data()[i] = static_cast<float>(p.q_online[static_cast<std::size_t>(i)]);
    target.data()[i] = static_cast<float>(p.q_target[static_cast<std::size_t>(i)]);
  }
  return r2d2_loss(online, target, p.actions, p.rewards, p.dones, p.mask, p.weights, o);
}

}  // namespace

TEST_CASE("r2d2_loss: TD errors, priorities, loss and gradient match the definition") {
  for (const bool rescaling : {true, false}) {
    CAPTURE(rescaling);
    const Problem p = make_problem(rescaling ? 1 : 2);
    R2D2LossOptions o;
    o.n_step = 3;
    o.discount = 0.9;
    o.value_rescaling = rescaling;
    const R2D2Loss loss = compute(p, o);
    const Reference ref = reference(p, p.q_online, o);
    CHECK(loss.loss == doctest::Approx(ref.loss).epsilon(1e-5));
    for (Eigen::Index b = 0; b < kBatch; ++b) {
      CHECK(loss.priorities(b) == doctest::Approx(ref.priorities(b)).epsilon(1e-5));
      for (Eigen::Index t = 0; t < kSteps; ++t)
        CHECK(loss.td_errors(t, b) == doctest::Approx(ref.td(t, b)).epsilon(1e-4).scale(1.0));
    }
    CHECK(loss.transitions == kSteps * kBatch - 2);
    CHECK(loss.td_errors(2, 0) == 0.0f);  // boundaries carry no error

    // The gradient w.r.t. the online Q-values (targets are constants) by central differences of
    // the reference; the last step's rows only bootstrap and get none.
    const Vec numeric =
        numeric_gradient([&](const Vec& v) { return reference(p, v, o).loss; }, p.q_online, 1e-6);
    const Vec analytic(loss.grad_q.data(), loss.grad_q.data() + loss.grad_q.size());
    CHECK(relative_error(analytic, numeric) < 1e-5);
    CHECK(loss.grad_q.bottomRows(kBatch).cwiseAbs().maxCoeff() == 0.0f);
  }
}

TEST_CASE("r2d2_loss: without importance weights every sequence weighs 1; inputs are checked") {
  Problem p = make_problem(3);
  const R2D2LossOptions o;
  const R2D2Loss weighted = compute(p, o);
  p.weights.clear();
  const R2D2Loss plain = compute(p, o);
  CHECK(plain.loss > 0.0);
  CHECK((plain.td_errors == weighted.td_errors).all());  // weights scale the loss, not the errors

  p.weights = {1.0f};
  CHECK_THROWS_WITH_AS(compute(p, o), doctest::Contains("1 importance weights for 3 sequences"),
                       Error);
  p.weights.clear();
  p.actions(0, 0) = kActions;
  CHECK_THROWS_WITH_AS(compute(p, o), doctest::Contains("action 4 out of range [0, 4)"), Error);
  const RowMatrixXf short_q = RowMatrixXf::Zero(kSteps * kBatch, kActions);
  CHECK_THROWS_WITH_AS(r2d2_loss(short_q, short_q, p.actions, p.rewards, p.dones, p.mask, {}, o),
                       doctest::Contains("must be [(T + 1) B, A] = [18, A]"), Error);
}

TEST_CASE("r2d2_loss with branches: the mean of each branch's loss, targets per branch") {
  // Two branches of 4 actions: Q-values [rows, 8]; each branch is a Problem of its own (its
  // columns, its actions), sharing the rewards, dones, mask and weights.
  const Problem first = make_problem(4);
  Problem second = make_problem(5);
  second.rewards = first.rewards;
  second.dones = first.dones;
  second.mask = first.mask;
  second.weights = first.weights;
  const Problem* branch[2] = {&first, &second};
  RowMatrixXf online(kRows, 2 * kActions), target(kRows, 2 * kActions);
  for (int k = 0; k < 2; ++k)
    for (Eigen::Index r = 0; r < kRows; ++r)
      for (Eigen::Index a = 0; a < kActions; ++a) {
        const auto i = static_cast<std::size_t>(r * kActions + a);
        online(r, k * kActions + a) = static_cast<float>(branch[k]->q_online[i]);
        target(r, k * kActions + a) = static_cast<float>(branch[k]->q_target[i]);
      }
  R2D2LossOptions o;
  o.n_step = 2;
  o.discount = 0.95;
  const R2D2Loss loss =
      r2d2_loss(online, target, {first.actions, second.actions}, first.rewards, first.dones,
                first.mask, first.weights, o, {}, math::Branches({kActions, kActions}));
  const Reference refs[2] = {reference(first, first.q_online, o),
                             reference(second, second.q_online, o)};
  CHECK(loss.loss == doctest::Approx(0.5 * (refs[0].loss + refs[1].loss)).epsilon(1e-5));
  Eigen::ArrayXXd td = 0.5 * (refs[0].td.abs() + refs[1].td.abs());
  for (Eigen::Index b = 0; b < kBatch; ++b) {
    const double max = td.col(b).maxCoeff(), mean = td.col(b).mean();
    CHECK(loss.priorities(b) ==
          doctest::Approx(o.priority_eta * max + (1.0 - o.priority_eta) * mean).epsilon(1e-5));
    for (Eigen::Index t = 0; t < kSteps; ++t)
      CHECK(loss.td_errors(t, b) == doctest::Approx(td(t, b)).epsilon(1e-4).scale(1.0));
  }
  // Each branch's columns of the gradient: half the gradient of its own loss (central
  // differences of its reference); the branches' targets differ, so a shared target would fail.
  for (int k = 0; k < 2; ++k) {
    const Problem& p = *branch[k];
    const Vec numeric = numeric_gradient(
        [&](const Vec& v) { return 0.5 * reference(p, v, o).loss; }, p.q_online, 1e-6);
    const RowMatrixXf block = loss.grad_q.middleCols(k * kActions, kActions);
    const Vec analytic(block.data(), block.data() + block.size());
    CHECK(relative_error(analytic, numeric) < 1e-5);
  }
  CHECK(refs[0].td(0, 0) != doctest::Approx(refs[1].td(0, 0)));
  CHECK_THROWS_WITH_AS(r2d2_loss(online, target, {first.actions}, first.rewards, first.dones,
                                 first.mask, {}, o, {}, math::Branches({kActions, kActions})),
                       doctest::Contains("1 branches of actions"), Error);
}

}  // namespace test_r2d2_loss
