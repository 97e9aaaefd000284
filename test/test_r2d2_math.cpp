// R2D2 math: value rescaling, n-step double-Q targets, sequence priorities, the epsilon schedule.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "seedrl/algo/epsilon_schedule.hpp"
#include "seedrl/algo/n_step_targets.hpp"
#include "seedrl/algo/sequence_priority.hpp"
#include "seedrl/algo/value_rescale.hpp"
#include "seedrl/core/random.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_r2d2_math {

using seedrl::Error;

TEST_CASE("value_rescale: known values and the exact inverse over [-1000, 1000]") {
  CHECK(seedrl::value_rescale(0.0) == 0.0);
  CHECK(seedrl::value_rescale(3.0) == doctest::Approx(1.0 + 3e-3));  // sqrt(4) - 1 + eps * 3
  CHECK(seedrl::value_rescale(-8.0) == doctest::Approx(-2.0 - 8e-3));
  CHECK(seedrl::value_rescale(3.0, 0.0) == doctest::Approx(1.0));
  double worst_double = 0.0, worst_float = 0.0;
  for (int i = 0; i <= 200000; ++i) {
    const double x = -1000.0 + 0.01 * i;
    worst_double = std::max(worst_double,
                            std::abs(seedrl::value_rescale(seedrl::inverse_value_rescale(x)) - x));
    worst_double = std::max(worst_double,
                            std::abs(seedrl::inverse_value_rescale(seedrl::value_rescale(x)) - x) /
                                std::max(1.0, std::abs(x)));
    const auto xf = static_cast<float>(x);
    worst_float = std::max(
        worst_float, static_cast<double>(
                         std::abs(seedrl::value_rescale(seedrl::inverse_value_rescale(xf)) - xf)) /
                         std::max(1.0, std::abs(x)));
  }
  CHECK(worst_double < 1e-12);
  CHECK(worst_float < 1e-6);
  // The inverse of eps = 0 and tiny values (no cancellation).
  CHECK(seedrl::inverse_value_rescale(1.0, 0.0) == doctest::Approx(3.0));
  CHECK(seedrl::inverse_value_rescale(1e-9) == doctest::Approx(1e-9 / (0.5 + 1e-3)).epsilon(1e-6));
  CHECK_THROWS_WITH_AS(seedrl::value_rescale(1.0, -1.0),
                       doctest::Contains("eps must be finite and >= 0"), Error);
}

TEST_CASE("value_rescale works element-wise on Eigen arrays") {
  Eigen::ArrayXXf x(2, 2);
  x << -5, 0, 2.5f, 100;
  const Eigen::ArrayXXf y = seedrl::value_rescale(x);
  CHECK(y(1, 1) == doctest::Approx(seedrl::value_rescale(100.0)));
  CHECK((seedrl::inverse_value_rescale(y) - x).abs().maxCoeff() < 1e-4f);
}

TEST_CASE("n_step_targets: an episode end inside the window and the shrinking window") {
  // T = 4, n = 3, gamma = 0.5; the episode ends with reward r_1.
  Eigen::ArrayXXf rewards(4, 1), dones(4, 1), q_next(4, 1);
  rewards << 1, 2, 3, 4;
  dones << 0, 1, 0, 0;
  q_next << 10, 20, 30, 40;
  const Eigen::ArrayXXf y = seedrl::n_step_targets(rewards, dones, q_next, 3, 0.5);
  CHECK(y(0, 0) == doctest::Approx(1 + 0.5 * 2));              // r0 + g r1, then cut by d1
  CHECK(y(1, 0) == doctest::Approx(2));                        // ends with r1: no bootstrap
  CHECK(y(2, 0) == doctest::Approx(3 + 0.5 * 4 + 0.25 * 40));  // m = 2: bootstrap q_next[3]
  CHECK(y(3, 0) == doctest::Approx(4 + 0.5 * 40));             // m = 1
}

TEST_CASE(
    "n_step_targets: n = 1 is the one-step target; windows inside the unroll bootstrap at t + n - "
    "1") {
  seedrl::Rng rng(3);
  Eigen::ArrayXXf rewards(6, 2), dones = Eigen::ArrayXXf::Zero(6, 2), q_next(6, 2);
  for (Eigen::Index i = 0; i < rewards.size(); ++i) {
    rewards.data()[i] = static_cast<float>(rng.uniform(-1, 1));
    q_next.data()[i] = static_cast<float>(rng.uniform(-5, 5));
  }
  const Eigen::ArrayXXf one = seedrl::n_step_targets(rewards, dones, q_next, 1, 0.99);
  CHECK(((rewards + 0.99f * q_next) - one).abs().maxCoeff() < 1e-5f);
  const Eigen::ArrayXXf five = seedrl::n_step_targets(rewards, dones, q_next, 5, 0.9);
  const double expected = rewards(0, 1) + 0.9 * rewards(1, 1) + 0.81 * rewards(2, 1) +
                          0.729 * rewards(3, 1) + 0.6561 * rewards(4, 1) + 0.59049 * q_next(4, 1);
  CHECK(five(0, 1) == doctest::Approx(expected).epsilon(1e-5));
  CHECK_THROWS_WITH_AS(seedrl::n_step_targets(rewards, dones, q_next, 0, 0.9),
                       doctest::Contains("n must be >= 1"), Error);
  CHECK_THROWS_WITH_AS(seedrl::n_step_targets(rewards, dones.topRows(5), q_next, 2, 0.9),
                       doctest::Contains("same shape"), Error);
}

TEST_CASE("double_q_values: the target network evaluates the online network's choice") {
  seedrl::RowMatrixXf online(3, 3), target(3, 3);
  online << 1, 5, 2,     //
      9, 0, 0,           //
      3, 3, 1;           // a tie goes to the lowest index
  target << 10, 20, 30,  //
      40, 50, 60,        //
      70, 80, 90;
  const Eigen::ArrayXf v = seedrl::double_q_values(online, target);
  CHECK(v(0) == 20);
  CHECK(v(1) == 40);
  CHECK(v(2) == 70);
  const Eigen::ArrayXi greedy = seedrl::greedy_actions(online);
  CHECK(greedy(0) == 1);
  CHECK(greedy(1) == 0);
  CHECK(greedy(2) == 0);
}

TEST_CASE("double_q_values: with a mask, the online network's choice among the legal actions") {
  seedrl::RowMatrixXf online(3, 3), target(3, 3);
  online << 1, 5, 2,  //
      9, 0, 0,        //
      3, 3, 1;
  target << 10, 20, 30,  //
      40, 50, 60,        //
      70, 80, 90;
  const std::vector<std::uint8_t> legal = {1, 0, 1,   // the best (5) is illegal: 2 at column 2
                                           0, 1, 1,   // a tie among the legal: the lowest index
                                           0, 0, 1};  // one legal action, however poor
  const Eigen::ArrayXf v = seedrl::double_q_values(online, target, legal);
  CHECK(v(0) == 30);
  CHECK(v(1) == 50);
  CHECK(v(2) == 90);
  // The unmasked choice differs in every row, so the mask is what made these.
  const Eigen::ArrayXf unmasked = seedrl::double_q_values(online, target);
  CHECK((v != unmasked).all());
  const std::vector<std::uint8_t> none = {1, 1, 1, 0, 0, 0, 1, 1, 1};
  CHECK_THROWS_WITH_AS(seedrl::double_q_values(online, target, none),
                       doctest::Contains("row 1 allows no action"), Error);
}

TEST_CASE("sequence_priorities: eta * max |delta| + (1 - eta) * mean |delta| per sequence") {
  Eigen::ArrayXXf td(4, 2);
  td << 1, -0.5f,  //
      -3, 0.5f,    //
      0, 0.5f,     //
      2, -0.5f;
  const Eigen::ArrayXf p = seedrl::sequence_priorities(td);
  CHECK(p(0) == doctest::Approx(0.9 * 3 + 0.1 * 1.5));
  CHECK(p(1) == doctest::Approx(0.5));
  CHECK(seedrl::sequence_priorities(td, 0.0)(0) == doctest::Approx(1.5));
  CHECK_THROWS_WITH_AS(seedrl::sequence_priorities(td, 1.5),
                       doctest::Contains("eta must be in [0, 1]"), Error);
}

TEST_CASE("actor_epsilon: 0.4^(1 + 7 i / (N - 1))") {
  CHECK(seedrl::actor_epsilon(0, 1) == doctest::Approx(0.4));
  CHECK(seedrl::actor_epsilon(0, 8) == doctest::Approx(0.4));
  CHECK(seedrl::actor_epsilon(7, 8) == doctest::Approx(std::pow(0.4, 8)));
  CHECK(seedrl::actor_epsilon(3, 8) == doctest::Approx(std::pow(0.4, 4)));
  CHECK(seedrl::actor_epsilon(1, 3) == doctest::Approx(std::pow(0.4, 4.5)));
  CHECK_THROWS_WITH_AS(seedrl::actor_epsilon(8, 8),
                       doctest::Contains("actor 8 out of range [0, 8)"), Error);
  CHECK_THROWS_WITH_AS(seedrl::actor_epsilon(0, 0), doctest::Contains("num_actors must be >= 1"),
                       Error);
}

}  // namespace test_r2d2_math
