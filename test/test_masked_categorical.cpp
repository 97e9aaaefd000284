// Masked, branched categorical policies (math/masked_categorical.hpp): log-probabilities, the
// joint log-probability and the entropy against a float64 loop over the legal actions only, their
// gradients against central differences of that loop (none for illegal logits), the masked argmax
// against a brute force, sampling and epsilon-greedy frequencies over the legal actions only, and
// the masks that are refused.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/math/masked_categorical.hpp"

namespace test_masked_categorical {

using namespace seedrl;
using math::Branches;

namespace {

const Branches kBranches({3, 4, 2});
constexpr Eigen::Index kRows = 6;

// Random logits and a random mask with at least one legal action per branch (row 0: all legal).
struct Case {
  RowMatrixXf logits;
  std::vector<std::uint8_t> mask;
  std::vector<std::int32_t> actions;  // legal ones, [N, K]
};

Case make_case(std::uint64_t seed) {
  Rng rng(seed);
  Case c;
  const std::int64_t total = kBranches.total();
  c.logits = RowMatrixXf(kRows, total);
  for (Eigen::Index i = 0; i < kRows; ++i)
    for (std::int64_t j = 0; j < total; ++j)
      c.logits(i, j) = static_cast<float>(rng.uniform(-3, 3));
  c.mask.assign(static_cast<std::size_t>(kRows * total), 1);
  for (Eigen::Index i = 1; i < kRows; ++i)
    for (std::int64_t k = 0; k < kBranches.count(); ++k) {
      const std::int64_t keep =
          kBranches.offset(k) + static_cast<std::int64_t>(rng.uniform() * kBranches.size(k));
      for (std::int64_t j = kBranches.offset(k); j < kBranches.offset(k) + kBranches.size(k); ++j)
        if (j != keep && rng.uniform() < 0.5) c.mask[static_cast<std::size_t>(i * total + j)] = 0;
    }
  for (Eigen::Index i = 0; i < kRows; ++i)
    for (std::int64_t k = 0; k < kBranches.count(); ++k) {
      std::vector<std::int32_t> legal;
      for (std::int64_t j = 0; j < kBranches.size(k); ++j)
        if (c.mask[static_cast<std::size_t>(i * total + kBranches.offset(k) + j)])
          legal.push_back(static_cast<std::int32_t>(j));
      c.actions.push_back(
          legal[static_cast<std::size_t>(rng.uniform() * legal.size()) % legal.size()]);
    }
  return c;
}

bool is_legal(const Case& c, Eigen::Index i, std::int64_t column) {
  return c.mask[static_cast<std::size_t>(i * kBranches.total() + column)] != 0;
}

// The float64 reference: log-probabilities of branch k's legal actions in row i.
std::vector<double> reference_log_probs(const Case& c, const std::vector<double>& z, Eigen::Index i,
                                        std::int64_t k) {
  const std::int64_t total = kBranches.total(), offset = kBranches.offset(k);
  double log_sum = 0.0, max_z = -1e300;
  for (std::int64_t j = 0; j < kBranches.size(k); ++j)
    if (is_legal(c, i, offset + j))
      max_z = std::max(max_z, z[static_cast<std::size_t>(i * total + offset + j)]);
  for (std::int64_t j = 0; j < kBranches.size(k); ++j)
    if (is_legal(c, i, offset + j))
      log_sum += std::exp(z[static_cast<std::size_t>(i * total + offset + j)] - max_z);
  log_sum = max_z + std::log(log_sum);
  std::vector<double> out(static_cast<std::size_t>(kBranches.size(k)), -INFINITY);
  for (std::int64_t j = 0; j < kBranches.size(k); ++j)
    if (is_legal(c, i, offset + j))
      out[static_cast<std::size_t>(j)] =
          z[static_cast<std::size_t>(i * total + offset + j)] - log_sum;
  return out;
}

// sum_i w_i log pi(a_i) + v_i H_i in float64 over the legal actions.
double reference_objective(const Case& c, const std::vector<double>& z,
                           const std::vector<double>& w, const std::vector<double>& v) {
  double f = 0.0;
  for (Eigen::Index i = 0; i < kRows; ++i)
    for (std::int64_t k = 0; k < kBranches.count(); ++k) {
      const std::vector<double> lp = reference_log_probs(c, z, i, k);
      f += w[static_cast<std::size_t>(i)] *
           lp[static_cast<std::size_t>(
               c.actions[static_cast<std::size_t>(i * kBranches.count() + k)])];
      for (const double l : lp)
        if (std::isfinite(l)) f -= v[static_cast<std::size_t>(i)] * std::exp(l) * l;
    }
  return f;
}

std::vector<double> as_doubles(const RowMatrixXf& m) {
  return {m.data(), m.data() + m.size()};
}

}  // namespace

TEST_CASE("Masked categorical: log-probabilities, joint log-probability and entropy by float64") {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const Case c = make_case(seed);
    const RowMatrixXf lp = math::branch_log_softmax(c.logits, c.mask, kBranches);
    const Eigen::VectorXf joint = math::joint_log_prob(lp, c.actions, kBranches);
    const Eigen::VectorXf entropy = math::branch_entropy(lp, kBranches);
    const std::vector<double> z = as_doubles(c.logits);
    for (Eigen::Index i = 0; i < kRows; ++i) {
      double joint_ref = 0.0, entropy_ref = 0.0;
      for (std::int64_t k = 0; k < kBranches.count(); ++k) {
        const std::vector<double> ref = reference_log_probs(c, z, i, k);
        double total_p = 0.0;
        for (std::int64_t j = 0; j < kBranches.size(k); ++j) {
          CAPTURE(seed);
          CAPTURE(i);
          CAPTURE(j);
          const float ours = lp(i, kBranches.offset(k) + j);
          if (is_legal(c, i, kBranches.offset(k) + j)) {
            CHECK(ours == doctest::Approx(ref[static_cast<std::size_t>(j)]).epsilon(1e-5));
            entropy_ref -=
                std::exp(ref[static_cast<std::size_t>(j)]) * ref[static_cast<std::size_t>(j)];
          } else {
            CHECK(std::exp(ours) == 0.0f);  // an illegal action has probability exactly 0
          }
          total_p += std::exp(static_cast<double>(ours));
        }
        CHECK(total_p == doctest::Approx(1.0).epsilon(1e-6));
        joint_ref += ref[static_cast<std::size_t>(
            c.actions[static_cast<std::size_t>(i * kBranches.count() + k)])];
      }
      CHECK(joint(i) == doctest::Approx(joint_ref).epsilon(1e-5));
      CHECK(entropy(i) == doctest::Approx(entropy_ref).epsilon(1e-5));
      CHECK(std::isfinite(entropy(i)));
    }
  }
  // Without a mask one branch is the plain log-softmax.
  const Case c = make_case(9);
  const Branches one({kBranches.total()});
  const RowMatrixXf lp = math::branch_log_softmax(c.logits, {}, one);
  const RowMatrixXf plain = math::log_softmax(c.logits);
  CHECK((lp - plain).cwiseAbs().maxCoeff() < 1e-5f);
}

TEST_CASE("Masked categorical: the most entropy a row can have, ln of its legal actions summed") {
  const Case c = make_case(3);
  const Eigen::VectorXf most = math::max_branch_entropy(c.mask, kRows, kBranches);
  for (Eigen::Index i = 0; i < kRows; ++i) {
    double ref = 0.0;
    for (std::int64_t k = 0; k < kBranches.count(); ++k) {
      int legal = 0;
      for (std::int64_t j = 0; j < kBranches.size(k); ++j)
        legal += is_legal(c, i, kBranches.offset(k) + j) ? 1 : 0;
      ref += std::log(static_cast<double>(legal));
    }
    CAPTURE(i);
    CHECK(most(i) == doctest::Approx(ref).epsilon(1e-6));
  }
  // Uniform logits reach it; row 0 allows everything: ln 3 + ln 4 + ln 2.
  CHECK(most(0) == doctest::Approx(std::log(24.0)).epsilon(1e-6));
  const RowMatrixXf uniform = RowMatrixXf::Zero(kRows, kBranches.total());
  const Eigen::VectorXf h =
      math::branch_entropy(math::branch_log_softmax(uniform, c.mask, kBranches), kBranches);
  CHECK((h - most).cwiseAbs().maxCoeff() < 1e-5f);
  // No mask: every action of every branch.
  CHECK(math::max_branch_entropy({}, 2, kBranches)(1) == doctest::Approx(std::log(24.0)));
  std::vector<std::uint8_t> none(c.mask);
  std::fill(none.begin() + kBranches.total(), none.begin() + kBranches.total() + 3, 0);
  CHECK_THROWS_WITH_AS(math::max_branch_entropy(none, kRows, kBranches),
                       doctest::Contains("row 1 allows no action in branch 0"), Error);
}

TEST_CASE("Masked categorical: gradients by central differences; illegal logits get none") {
  for (std::uint64_t seed = 11; seed <= 13; ++seed) {
    const Case c = make_case(seed);
    Rng rng(seed + 100);
    std::vector<double> w(kRows), v(kRows);
    Eigen::VectorXf wf(kRows), vf(kRows);
    for (Eigen::Index i = 0; i < kRows; ++i) {
      w[static_cast<std::size_t>(i)] = rng.uniform(-1, 1);
      v[static_cast<std::size_t>(i)] = rng.uniform(-1, 1);
      wf(i) = static_cast<float>(w[static_cast<std::size_t>(i)]);
      vf(i) = static_cast<float>(v[static_cast<std::size_t>(i)]);
    }
    const RowMatrixXf lp = math::branch_log_softmax(c.logits, c.mask, kBranches);
    RowMatrixXf grad(kRows, kBranches.total());
    math::branch_backward(lp, c.actions, wf, vf, kBranches, grad);
    const std::vector<double> z = as_doubles(c.logits);
    for (Eigen::Index i = 0; i < kRows; ++i)
      for (std::int64_t j = 0; j < kBranches.total(); ++j) {
        CAPTURE(seed);
        CAPTURE(i);
        CAPTURE(j);
        if (!is_legal(c, i, j)) {
          CHECK(grad(i, j) == 0.0f);
          continue;
        }
        const double h = 1e-5;
        std::vector<double> plus = z, minus = z;
        plus[static_cast<std::size_t>(i * kBranches.total() + j)] += h;
        minus[static_cast<std::size_t>(i * kBranches.total() + j)] -= h;
        const double numeric =
            (reference_objective(c, plus, w, v) - reference_objective(c, minus, w, v)) / (2 * h);
        CHECK(grad(i, j) == doctest::Approx(numeric).epsilon(1e-4).scale(1.0));
      }
    // Only the log-probability term, or only the entropy term: the same function with the other
    // weight at 0.
    RowMatrixXf only_lp(kRows, kBranches.total()), only_h(kRows, kBranches.total());
    math::branch_backward(lp, c.actions, wf, Eigen::VectorXf(), kBranches, only_lp);
    math::branch_backward(lp, {}, Eigen::VectorXf(), vf, kBranches, only_h);
    CHECK(((only_lp + only_h) - grad).cwiseAbs().maxCoeff() < 1e-6f);
  }
}

TEST_CASE("Masked categorical: the greedy action is the best legal one, lowest index among ties") {
  const Case c = make_case(21);
  RowMatrixXf scores = c.logits;
  scores(0, 1) = scores(0, 2) = 10.0f;  // a tie in branch 0 of row 0 (all legal)
  std::vector<std::int32_t> actions(static_cast<std::size_t>(kRows * kBranches.count()));
  math::masked_greedy(scores, c.mask, kBranches, actions);
  CHECK(actions[0] == 1);
  for (Eigen::Index i = 0; i < kRows; ++i)
    for (std::int64_t k = 0; k < kBranches.count(); ++k) {
      int best = -1;
      for (std::int64_t j = 0; j < kBranches.size(k); ++j)
        if (is_legal(c, i, kBranches.offset(k) + j) &&
            (best < 0 ||
             scores(i, kBranches.offset(k) + j) > scores(i, kBranches.offset(k) + best)))
          best = static_cast<int>(j);
      CHECK(actions[static_cast<std::size_t>(i * kBranches.count() + k)] == best);
    }
  // A huge illegal score is never chosen.
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(kBranches.total()), 1);
  mask[3] = 0;  // branch 1, action 0
  RowMatrixXf one = RowMatrixXf::Zero(1, kBranches.total());
  one(0, 3) = 1e30f;
  std::vector<std::int32_t> three(3);
  math::masked_greedy(one, mask, kBranches, three);
  CHECK(three[1] == 1);
}

TEST_CASE(
    "Masked categorical: sampling and epsilon-greedy draw legal actions only, at their rates") {
  // One row, branch 1 with actions 1 and 3 illegal.
  const std::int64_t total = kBranches.total();
  RowMatrixXf logits(1, total);
  logits << 0.5f, -0.5f, 1.0f, 2.0f, 5.0f, 0.0f, 9.0f, 0.3f, -0.3f;
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(total), 1);
  mask[4] = mask[6] = 0;
  const RowMatrixXf lp = math::branch_log_softmax(logits, mask, kBranches);
  Rng rng(5);
  constexpr int kDraws = 40'000;
  std::vector<int> counts(static_cast<std::size_t>(total), 0),
      eps_counts(static_cast<std::size_t>(total), 0);
  std::vector<std::int32_t> actions(3);
  for (int n = 0; n < kDraws; ++n) {
    math::masked_sample(logits, mask, kBranches, {}, actions, rng);
    for (std::int64_t k = 0; k < 3; ++k)
      ++counts[static_cast<std::size_t>(kBranches.offset(k) +
                                        actions[static_cast<std::size_t>(k)])];
    math::masked_epsilon_greedy(logits, mask, kBranches, 1.0, actions, rng);
    for (std::int64_t k = 0; k < 3; ++k)
      ++eps_counts[static_cast<std::size_t>(kBranches.offset(k) +
                                            actions[static_cast<std::size_t>(k)])];
  }
  for (std::int64_t j = 0; j < total; ++j) {
    CAPTURE(j);
    const double rate = counts[static_cast<std::size_t>(j)] / static_cast<double>(kDraws);
    const double eps_rate = eps_counts[static_cast<std::size_t>(j)] / static_cast<double>(kDraws);
    if (!mask[static_cast<std::size_t>(j)]) {
      CHECK(counts[static_cast<std::size_t>(j)] == 0);
      CHECK(eps_counts[static_cast<std::size_t>(j)] == 0);
      continue;
    }
    CHECK(std::abs(rate - std::exp(static_cast<double>(lp(0, j)))) < 0.01);
    const std::int64_t k = j < 3 ? 0 : j < 7 ? 1 : 2;
    const double legal = k == 1 ? 2.0 : static_cast<double>(kBranches.size(k));
    CHECK(std::abs(eps_rate - 1.0 / legal) < 0.01);
  }
  // Greedy flags and epsilon 0: the best legal actions (branch 1: action 0, as 3 is illegal).
  math::masked_sample(logits, mask, kBranches, std::vector<std::uint8_t>{1}, actions, rng);
  CHECK(actions == std::vector<std::int32_t>{2, 0, 0});
  math::masked_epsilon_greedy(logits, mask, kBranches, 0.0, actions, rng);
  CHECK(actions == std::vector<std::int32_t>{2, 0, 0});
}

TEST_CASE("Masked categorical: bad branches and masks are refused by name") {
  CHECK_THROWS_WITH_AS(Branches(std::vector<std::int64_t>{}),
                       doctest::Contains("at least one action branch"), Error);
  CHECK_THROWS_WITH_AS(Branches({3, 0}, "ActionSpec"),
                       doctest::Contains("ActionSpec: branch 1 has 0 actions"), Error);
  CHECK(kBranches.to_string() == "3 x 4 x 2");
  RowMatrixXf logits = RowMatrixXf::Zero(2, kBranches.total());
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(2 * kBranches.total()), 1);
  for (std::int64_t j = 3; j < 7; ++j) mask[static_cast<std::size_t>(kBranches.total() + j)] = 0;
  CHECK_THROWS_WITH_AS(math::branch_log_softmax(logits, mask, kBranches),
                       doctest::Contains("mask of row 1 allows no action in branch 1"), Error);
  std::vector<std::int32_t> actions(6);
  CHECK_THROWS_WITH_AS(math::masked_greedy(logits, std::span(mask).first(5), kBranches, actions),
                       doctest::Contains("a legal-action mask of 5 entries for 2 rows of 9"),
                       Error);
  CHECK_THROWS_WITH_AS(math::masked_greedy(RowMatrixXf::Zero(2, 8), {}, kBranches, actions),
                       doctest::Contains("rows of 8 scores for action branches 3 x 4 x 2"), Error);
  const RowMatrixXf lp = math::branch_log_softmax(logits, {}, kBranches);
  CHECK_THROWS_WITH_AS(
      math::joint_log_prob(lp, std::vector<std::int32_t>{0, 4, 0, 0, 0, 0}, kBranches),
      doctest::Contains("action 4 of branch 1 in row 0 is out of range [0, 4)"), Error);
}

}  // namespace test_masked_categorical
