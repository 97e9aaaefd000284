// GAE(lambda) against a brute-force implementation written from the definition (the
// lambda-weighted sum of discounted TD errors up to the episode's end, double precision), on
// random inputs with episode ends; its two limits (lambda 0: the TD error; lambda 1: the
// discounted return minus the value); and clear errors.
#include <doctest/doctest.h>

#include <cmath>

#include "seedrl/algo/gae.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_gae {

using seedrl::Error;

namespace {

struct Inputs {
  Eigen::ArrayXXf rewards, values, dones;
  Eigen::ArrayXf bootstrap;
};

Inputs random_inputs(Eigen::Index steps, Eigen::Index batch, std::uint64_t seed, double done_rate) {
  seedrl::Rng rng(seed);
  Inputs in{Eigen::ArrayXXf(steps, batch), Eigen::ArrayXXf(steps, batch),
            Eigen::ArrayXXf(steps, batch), Eigen::ArrayXf(batch)};
  for (Eigen::Index t = 0; t < steps; ++t)
    for (Eigen::Index b = 0; b < batch; ++b) {
      in.rewards(t, b) = static_cast<float>(rng.uniform(-1, 2));
      in.values(t, b) = static_cast<float>(rng.uniform(-3, 3));
      in.dones(t, b) = rng.uniform() < done_rate ? 1.0f : 0.0f;
    }
  for (Eigen::Index b = 0; b < batch; ++b) in.bootstrap(b) = static_cast<float>(rng.uniform(-3, 3));
  return in;
}

// A_t = sum_{l >= 0} (gamma lambda)^l delta_{t+l}, the sum ending at the episode's last step;
// delta_s = r_s + gamma V_{s+1} (0 after a terminal step) - V_s.
double brute_force(const Inputs& in, Eigen::Index t, Eigen::Index b, double gamma, double lambda) {
  const Eigen::Index steps = in.rewards.rows();
  double total = 0.0, weight = 1.0;
  for (Eigen::Index s = t; s < steps; ++s) {
    const bool done = in.dones(s, b) != 0.0f;
    const double next = s + 1 < steps ? in.values(s + 1, b) : in.bootstrap(b);
    const double delta = in.rewards(s, b) + (done ? 0.0 : gamma * next) - in.values(s, b);
    total += weight * delta;
    if (done) break;
    weight *= gamma * lambda;
  }
  return total;
}

}  // namespace

TEST_CASE("gae: matches the definition on random unrolls with episode ends") {
  for (const double lambda : {0.0, 0.5, 0.95, 1.0}) {
    for (const double gamma : {0.0, 0.9, 0.99, 1.0}) {
      CAPTURE(lambda);
      CAPTURE(gamma);
      const Inputs in = random_inputs(23, 5, 7, 0.15);
      const Eigen::ArrayXXf a = seedrl::gae(in.rewards, in.values, in.dones, in.bootstrap,
                                            static_cast<float>(gamma), static_cast<float>(lambda));
      REQUIRE(a.rows() == 23);
      REQUIRE(a.cols() == 5);
      for (Eigen::Index t = 0; t < 23; ++t)
        for (Eigen::Index b = 0; b < 5; ++b)
          CHECK(a(t, b) == doctest::Approx(brute_force(in, t, b, gamma, lambda)).epsilon(1e-4));
    }
  }
}

TEST_CASE("gae: lambda 0 is the TD error, lambda 1 the discounted return minus the value") {
  const Inputs in = random_inputs(10, 3, 11, 0.2);
  const float gamma = 0.9f;
  const Eigen::ArrayXXf td = seedrl::gae(in.rewards, in.values, in.dones, in.bootstrap, gamma, 0);
  const Eigen::ArrayXXf mc = seedrl::gae(in.rewards, in.values, in.dones, in.bootstrap, gamma, 1);
  for (Eigen::Index b = 0; b < 3; ++b) {
    double discounted_return = in.bootstrap(b);
    for (Eigen::Index t = 9; t >= 0; --t) {
      const bool done = in.dones(t, b) != 0.0f;
      const double next = t + 1 < 10 ? in.values(t + 1, b) : in.bootstrap(b);
      CHECK(td(t, b) ==
            doctest::Approx(in.rewards(t, b) + (done ? 0.0 : gamma * next) - in.values(t, b))
                .epsilon(1e-5));
      discounted_return = in.rewards(t, b) + (done ? 0.0 : gamma * discounted_return);
      CHECK(mc(t, b) == doctest::Approx(discounted_return - in.values(t, b)).epsilon(1e-4));
    }
  }
}

TEST_CASE("gae: mismatched shapes and bad gamma or lambda are refused by name") {
  const Inputs in = random_inputs(4, 2, 1, 0.0);
  CHECK_THROWS_WITH_AS(
      seedrl::gae(in.rewards, in.values.topRows(3), in.dones, in.bootstrap, 0.9f, 0.95f),
      doctest::Contains("values [3, 2]"), Error);
  CHECK_THROWS_WITH_AS(
      seedrl::gae(in.rewards, in.values, in.dones, in.bootstrap.head(1), 0.9f, 0.95f),
      doctest::Contains("bootstrap_value [1]"), Error);
  CHECK_THROWS_WITH_AS(seedrl::gae(in.rewards, in.values, in.dones, in.bootstrap, 1.5f, 0.95f),
                       doctest::Contains("gamma must be in [0, 1]"), Error);
  CHECK_THROWS_WITH_AS(seedrl::gae(in.rewards, in.values, in.dones, in.bootstrap, 0.9f, -0.1f),
                       doctest::Contains("lambda must be in [0, 1]"), Error);
}

}  // namespace test_gae
