// ExperienceNormalizer: observation normalisation and reward scaling against a brute-force
// recomputation over everything seen, evaluation rows, slot restarts, and the checkpoint text.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "seedrl/core/random.hpp"
#include "seedrl/experience/normalization.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_normalization {

using namespace seedrl;

namespace {

// Mean and variance of `samples` together with the prior (1e-4 samples of mean 0, variance 1),
// by the two-pass definition in double.
std::pair<double, double> with_prior(const std::vector<double>& samples) {
  const double prior = 1e-4;
  const double n = prior + static_cast<double>(samples.size());
  double sum = 0.0;
  for (double x : samples) sum += x;
  const double mean = sum / n;
  double squares = prior * (1.0 + mean * mean);  // the prior's variance and its offset
  for (double x : samples) squares += (x - mean) * (x - mean);
  return {mean, squares / n};
}

NormalizationOptions both() {
  NormalizationOptions o;
  o.observations = true;
  o.rewards = true;
  return o;
}

}  // namespace

TEST_CASE(
    "ExperienceNormalizer: observations are normalised by the statistics of every training row") {
  ExperienceNormalizer n(both(), 2, 0.99f, 4);
  Rng rng(7);
  std::vector<double> seen0, seen1;
  for (int batch = 0; batch < 4; ++batch) {
    RowMatrixXf x(3, 2);
    for (int i = 0; i < 3; ++i) {
      x(i, 0) = static_cast<float>(5.0 + 2.0 * rng.normal());
      x(i, 1) = static_cast<float>(-1.0 + 0.1 * rng.normal());
    }
    const std::vector<std::uint8_t> evaluation = {0, 1, 0};  // row 1 is not counted
    const RowMatrixXf raw = x;
    n.normalize_observations(x, evaluation);
    for (int i : {0, 2}) {
      seen0.push_back(raw(i, 0));
      seen1.push_back(raw(i, 1));
    }
    const auto [m0, v0] = with_prior(seen0);
    const auto [m1, v1] = with_prior(seen1);
    for (int i = 0; i < 3; ++i) {
      CHECK(x(i, 0) == doctest::Approx((raw(i, 0) - m0) / std::sqrt(v0 + 1e-8)).epsilon(1e-4));
      CHECK(x(i, 1) == doctest::Approx((raw(i, 1) - m1) / std::sqrt(v1 + 1e-8)).epsilon(1e-4));
    }
  }
  // Clipping at observation_clip.
  RowMatrixXf far(1, 2);
  far << 1e6f, -1e6f;
  n.normalize_observations(far, std::vector<std::uint8_t>{1});
  CHECK(far(0, 0) == 10.0f);
  CHECK(far(0, 1) == -10.0f);
}

TEST_CASE("ExperienceNormalizer: rewards are divided by the std of each slot's discounted return") {
  const float gamma = 0.9f;
  NormalizationOptions o;
  o.rewards = true;
  ExperienceNormalizer n(o, 1, gamma, 3);
  std::vector<double> returns;
  double g0 = 0.0, g2 = 0.0;
  const std::vector<std::int32_t> slots = {0, 2};
  for (int step = 0; step < 6; ++step) {
    // Slot 2 restarts its episode at step 3 (first flag: the return starts again).
    const std::vector<std::uint8_t> flags = {
        static_cast<std::uint8_t>(step == 0 ? step_flags::kFirst : 0),
        static_cast<std::uint8_t>(step == 0 || step == 3 ? step_flags::kFirst : 0)};
    std::vector<float> rewards = {static_cast<float>(step), 1.0f - static_cast<float>(step)};
    const std::vector<float> raw = rewards;
    g0 = (step == 0 ? 0.0 : gamma * g0) + raw[0];
    g2 = (step == 0 || step == 3 ? 0.0 : gamma * g2) + raw[1];
    returns.push_back(g0);
    returns.push_back(g2);
    n.scale_rewards(slots, flags, std::vector<std::uint8_t>{0, 0}, rewards);
    const double std = std::sqrt(with_prior(returns).second + 1e-8);
    CHECK(rewards[0] == doctest::Approx(raw[0] / std).epsilon(1e-5));
    CHECK(rewards[1] == doctest::Approx(raw[1] / std).epsilon(1e-5));
  }
  // A restarted slot's return starts from zero: the next scaled reward counts only itself.
  n.restart_slot(0);
  std::vector<float> r = {2.0f};
  n.scale_rewards(std::vector<std::int32_t>{0}, std::vector<std::uint8_t>{0},
                  std::vector<std::uint8_t>{0}, r);
  returns.push_back(2.0);
  CHECK(r[0] == doctest::Approx(2.0 / std::sqrt(with_prior(returns).second + 1e-8)).epsilon(1e-5));
  CHECK(n.return_moments().count() == doctest::Approx(13.0001));
}

TEST_CASE("ExperienceNormalizer: the checkpoint text restores the statistics exactly") {
  ExperienceNormalizer a(both(), 3, 0.99f, 2);
  RowMatrixXf x(2, 3);
  x << 1.0f, 2.0f, 3.0f, -4.0f, 0.5f, 1e-3f;
  a.normalize_observations(x, std::vector<std::uint8_t>{0, 0});
  std::vector<float> r = {0.3f, -7.0f};
  a.scale_rewards(std::vector<std::int32_t>{0, 1}, std::vector<std::uint8_t>{0, 0},
                  std::vector<std::uint8_t>{0, 0}, r);
  const std::string text = a.to_text();

  ExperienceNormalizer b(both(), 3, 0.99f, 2);
  b.restore(text, "ckpt");
  CHECK(b.to_text() == text);
  CHECK(b.observation_moments().mean() == a.observation_moments().mean());
  CHECK(b.observation_moments().variance() == a.observation_moments().variance());
  CHECK(b.return_moments().variance() == a.return_moments().variance());

  // A Policy normalises as inference does.
  const ObservationNormalization policy = ObservationNormalization::parse(text, "ckpt");
  REQUIRE(policy.active());
  RowMatrixXf p(1, 3), q(1, 3);
  p << 0.25f, -1.0f, 4.0f;
  q = p;
  policy.apply(p);
  b.normalize_observations(q, std::vector<std::uint8_t>{1});  // evaluation: not counted
  CHECK(p == q);
  CHECK_FALSE(ObservationNormalization::parse("", "none").active());

  // What does not fit is refused by name.
  ExperienceNormalizer other_size(both(), 4, 0.99f, 2);
  CHECK_THROWS_WITH_AS(other_size.restore(text, "ckpt"), doctest::Contains("this run has 4"),
                       Error);
  NormalizationOptions only_rewards;
  only_rewards.rewards = true;
  ExperienceNormalizer rewards_only(only_rewards, 3, 0.99f, 2);
  CHECK_THROWS_WITH_AS(rewards_only.restore(text, "ckpt"),
                       doctest::Contains("does not normalise observations"), Error);
  CHECK_THROWS_WITH_AS(b.restore("normalization-v1 returns 1 1 0 1", "ckpt"),
                       doctest::Contains("lacks the observation statistics"), Error);
  CHECK_THROWS_WITH_AS(b.restore("normalization-v1 observations 1 3 0 x", "ckpt"),
                       doctest::Contains("'x' is not a number"), Error);
  CHECK_THROWS_WITH_AS(b.restore("normalization-v1 observations 1 3 0 0", "ckpt"),
                       doctest::Contains("end before"), Error);
  CHECK_THROWS_WITH_AS(b.restore("garbage", "ckpt"), doctest::Contains("do not start"), Error);
  CHECK_THROWS_WITH_AS(ObservationNormalization::parse("normalization-v1 observations 1 -3", "c"),
                       doctest::Contains("size -3"), Error);
}

}  // namespace test_normalization
