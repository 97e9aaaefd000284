// V-trace against a brute-force implementation written straight from the definition (nested
// sums of products, double precision), on random inputs with episode ends.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "seedrl/algo/vtrace.hpp"
#include "seedrl/core/random.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_vtrace {

using seedrl::Error;
using seedrl::VTraceOptions;

namespace {

struct Inputs {
  Eigen::ArrayXXf log_rhos, discounts, rewards, values;
  Eigen::ArrayXf bootstrap;
};

Inputs random_inputs(Eigen::Index steps, Eigen::Index batch, std::uint64_t seed, double done_rate) {
  seedrl::Rng rng(seed);
  Inputs in{Eigen::ArrayXXf(steps, batch), Eigen::ArrayXXf(steps, batch),
            Eigen::ArrayXXf(steps, batch), Eigen::ArrayXXf(steps, batch), Eigen::ArrayXf(batch)};
  for (Eigen::Index t = 0; t < steps; ++t)
    for (Eigen::Index b = 0; b < batch; ++b) {
      in.log_rhos(t, b) =
          static_cast<float>(rng.uniform(-2.0, 2.0));  // rho from 0.14 to 7.4: clipping is active
      in.discounts(t, b) = rng.uniform() < done_rate ? 0.0f : 0.97f;
      in.rewards(t, b) = static_cast<float>(rng.uniform(-1.0, 1.0));
      in.values(t, b) = static_cast<float>(rng.uniform(-2.0, 2.0));
    }
  for (Eigen::Index b = 0; b < batch; ++b)
    in.bootstrap(b) = static_cast<float>(rng.uniform(-2.0, 2.0));
  return in;
}

// v_s = V_s + sum_{t=s}^{T-1} (prod_{i=s}^{t-1} gamma_i c_i) delta_t   (IMPALA, eq. 1)
// A_s = min(rho_bar_pg, rho_s) (r_s + gamma_s v_{s+1} - V_s),  v_T = V_T = bootstrap
void brute_force(const Inputs& in, const VTraceOptions& o, std::vector<std::vector<double>>& vs,
                 std::vector<std::vector<double>>& adv) {
  const auto steps = in.log_rhos.rows(), batch = in.log_rhos.cols();
  vs.assign(static_cast<std::size_t>(steps), std::vector<double>(static_cast<std::size_t>(batch)));
  adv = vs;
  auto value = [&](Eigen::Index t, Eigen::Index b) -> double {
    return t < steps ? in.values(t, b) : in.bootstrap(b);
  };
  auto rho = [&](Eigen::Index t, Eigen::Index b) {
    return std::exp(static_cast<double>(in.log_rhos(t, b)));
  };
  for (Eigen::Index b = 0; b < batch; ++b) {
    for (Eigen::Index s = 0; s < steps; ++s) {
      double sum = 0.0;
      for (Eigen::Index t = s; t < steps; ++t) {
        double product = 1.0;
        for (Eigen::Index i = s; i < t; ++i)
          product *= in.discounts(i, b) * o.lambda * std::min(1.0, rho(i, b));
        const double delta =
            std::min<double>(o.clip_rho_threshold, rho(t, b)) *
            (in.rewards(t, b) + in.discounts(t, b) * value(t + 1, b) - value(t, b));
        sum += product * delta;
      }
      vs[static_cast<std::size_t>(s)][static_cast<std::size_t>(b)] = value(s, b) + sum;
    }
    for (Eigen::Index s = 0; s < steps; ++s) {
      const double next = s + 1 < steps
                              ? vs[static_cast<std::size_t>(s + 1)][static_cast<std::size_t>(b)]
                              : in.bootstrap(b);
      adv[static_cast<std::size_t>(s)][static_cast<std::size_t>(b)] =
          std::min<double>(o.clip_pg_rho_threshold, rho(s, b)) *
          (in.rewards(s, b) + in.discounts(s, b) * next - value(s, b));
    }
  }
}

void check_against_brute_force(const Inputs& in, const VTraceOptions& o) {
  const seedrl::VTraceReturns got =
      seedrl::vtrace(in.log_rhos, in.discounts, in.rewards, in.values, in.bootstrap, o);
  std::vector<std::vector<double>> vs, adv;
  brute_force(in, o, vs, adv);
  double worst = 0.0;
  for (Eigen::Index t = 0; t < in.log_rhos.rows(); ++t)
    for (Eigen::Index b = 0; b < in.log_rhos.cols(); ++b) {
      worst = std::max(
          worst,
          std::abs(got.vs(t, b) - vs[static_cast<std::size_t>(t)][static_cast<std::size_t>(b)]));
      worst =
          std::max(worst, std::abs(got.pg_advantages(t, b) -
                                   adv[static_cast<std::size_t>(t)][static_cast<std::size_t>(b)]));
    }
  CHECK(worst < 1e-4);  // f32 recursion vs double sums, values of order 1-10
}

}  // namespace

TEST_CASE("vtrace matches the definition: default thresholds, no episode ends") {
  check_against_brute_force(random_inputs(20, 8, 1, 0.0), {});
}

TEST_CASE("vtrace matches the definition with episode ends, rho_bar != rho_bar_pg and lambda < 1") {
  check_against_brute_force(random_inputs(20, 8, 2, 0.15), {1.0f, 1.0f, 1.0f});
  check_against_brute_force(random_inputs(25, 5, 3, 0.2), {2.0f, 0.5f, 0.9f});
  check_against_brute_force(random_inputs(13, 3, 4, 0.3), {0.7f, 3.0f, 0.5f});
  check_against_brute_force(random_inputs(7, 4, 5, 0.1),
                            {1.0f, 1.0f, 0.0f});  // lambda 0: one-step targets
  check_against_brute_force(random_inputs(1, 6, 6, 0.5), {1.0f, 1.0f, 1.0f});  // a single step
}

TEST_CASE("vtrace on-policy with lambda 1 gives discounted returns bootstrapped at the end") {
  Inputs in = random_inputs(10, 3, 7, 0.2);
  in.log_rhos.setZero();
  const auto got = seedrl::vtrace(in.log_rhos, in.discounts, in.rewards, in.values, in.bootstrap);
  for (Eigen::Index b = 0; b < 3; ++b) {
    double ret = in.bootstrap(b);
    for (Eigen::Index t = 9; t >= 0; --t) {
      ret = in.rewards(t, b) + in.discounts(t, b) * ret;
      CHECK(got.vs(t, b) == doctest::Approx(ret).epsilon(1e-5));
    }
  }
}

TEST_CASE("vtrace: a zero discount stops the trace and the bootstrap") {
  Eigen::ArrayXXf zeros = Eigen::ArrayXXf::Zero(3, 1), rewards(3, 1), discounts(3, 1), values(3, 1);
  rewards << 1, 2, 3;
  discounts << 0.9f, 0.0f, 0.9f;  // the episode ends with reward 2
  values << 10, 20, 30;
  Eigen::ArrayXf bootstrap(1);
  bootstrap << 100;
  const auto got = seedrl::vtrace(zeros, discounts, rewards, values, bootstrap);
  CHECK(got.vs(2, 0) == doctest::Approx(3 + 0.9 * 100));
  CHECK(got.vs(1, 0) == doctest::Approx(2));
  CHECK(got.vs(0, 0) == doctest::Approx(1 + 0.9 * 2));
  CHECK(got.pg_advantages(1, 0) == doctest::Approx(2 - 20));
}

TEST_CASE("vtrace: invalid thresholds and shapes are errors naming the setting") {
  const Inputs in = random_inputs(4, 2, 8, 0.0);
  auto run = [&](VTraceOptions o) {
    seedrl::vtrace(in.log_rhos, in.discounts, in.rewards, in.values, in.bootstrap, o);
  };
  CHECK_THROWS_WITH_AS(run({0.0f, 1.0f, 1.0f}), doctest::Contains("clip_rho_threshold must be > 0"),
                       Error);
  CHECK_THROWS_WITH_AS(run({-1.0f, 1.0f, 1.0f}), doctest::Contains("clip_rho_threshold"), Error);
  CHECK_THROWS_WITH_AS(run({NAN, 1.0f, 1.0f}), doctest::Contains("clip_rho_threshold"), Error);
  CHECK_THROWS_WITH_AS(run({1.0f, NAN, 1.0f}),
                       doctest::Contains("clip_pg_rho_threshold must be > 0"), Error);
  CHECK_THROWS_WITH_AS(run({1.0f, 0.0f, 1.0f}), doctest::Contains("clip_pg_rho_threshold"), Error);
  CHECK_THROWS_WITH_AS(run({1.0f, 1.0f, 1.5f}), doctest::Contains("lambda must be in [0, 1]"),
                       Error);
  CHECK_THROWS_WITH_AS(
      seedrl::vtrace(in.log_rhos, in.discounts.topRows(3), in.rewards, in.values, in.bootstrap),
      doctest::Contains("discounts is [3, 2], expected [4, 2]"), Error);
  CHECK_THROWS_WITH_AS(
      seedrl::vtrace(in.log_rhos, in.discounts, in.rewards, in.values, Eigen::ArrayXf(3)),
      doctest::Contains("bootstrap_value has 3 entries, expected 2"), Error);
}

}  // namespace test_vtrace
