// MinAtar Freeway: each rule pinned on a scripted sequence (cool-down, crossing, cars, time limit).
#include <doctest/doctest.h>

#include <cstdlib>

#include "seedrl/env/minatar/freeway.hpp"
#include "support/minatar_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_minatar_freeway {

using namespace seedrl;
using namespace seedrl::minatar;
using namespace seedrl::test;

TEST_CASE("MinAtar Freeway: the start, per the rules") {
  MinAtarFreeway env(5);
  CHECK(env.observation_spec() == TensorSpec{{10, 10, 7}, DType::u8});
  Tensor obs = observation_for(env);
  env.reset(obs);
  const FreewayRules& g = env.game();
  CHECK(cell(obs, 9, 4, FreewayRules::kChicken) == 1);
  CHECK(channel_count(obs, FreewayRules::kChicken) == 1);
  CHECK(channel_count(obs, FreewayRules::kCar) == 8);
  std::int64_t trails = 0;
  for (std::int32_t c = FreewayRules::kSpeed1; c < FreewayRules::kChannels; ++c)
    trails += channel_count(obs, c);
  CHECK(trails == 8);
  for (std::size_t i = 0; i < g.cars.size(); ++i) {
    const FreewayRules::Car& car = g.cars[i];
    CHECK(car.x == 0);
    CHECK(car.y == static_cast<std::int32_t>(i) + 1);
    CHECK(std::abs(car.speed) >= 1);
    CHECK(std::abs(car.speed) <= 5);
    CHECK(car.timer == std::abs(car.speed));
    // The trail: behind the car (wrapping), in the channel of its speed.
    const std::int32_t behind = car.speed > 0 ? 9 : 1;
    CHECK(cell(obs, car.y, behind, FreewayRules::kSpeed1 + std::abs(car.speed) - 1) == 1);
  }
}

TEST_CASE("MinAtar Freeway: crossing takes 28 frames of 'up' and scores; speeds are redrawn") {
  MinAtarFreeway env(6, kNoSticky);
  Tensor obs = observation_for(env);
  env.reset(obs);
  FreewayRules& g = env.game();
  for (FreewayRules::Car& car : g.cars) {  // parked out of the way
    car.x = 0;
    car.timer = 1'000'000;
  }
  // The chicken moves when its cool-down is 0; the cool-down starts at 3, is set to 3 by a move
  // and counts down at the end of each frame: moves on frames 4, 7, 10, ..., the ninth (row 0)
  // on frame 28.
  for (int frame = 1; frame < 28; ++frame) {
    CHECK(env.step(action::kUp, obs).reward == 0.0f);
    CHECK(g.chicken == (frame < 4 ? 9 : 9 - ((frame - 4) / 3 + 1)));
  }
  CHECK(g.chicken == 1);
  CHECK(env.step(action::kUp, obs).reward == 1.0f);
  CHECK(g.chicken == 9);
  for (const FreewayRules::Car& car : g.cars) CHECK(car.timer <= 5);  // redrawn
  // 'down' at the bottom stays there.
  for (int i = 0; i < 8; ++i) env.step(action::kDown, obs);
  CHECK(g.chicken == 9);
}

TEST_CASE("MinAtar Freeway: a car sends the chicken back, before or after it moves; cars wrap") {
  MinAtarFreeway env(7, kNoSticky);
  Tensor obs = observation_for(env);
  env.reset(obs);
  FreewayRules& g = env.game();
  for (FreewayRules::Car& car : g.cars) car.timer = 1'000'000;
  g.chicken = 8;
  g.cars[7] = {3, 8, 0, 1};  // moves right this frame, onto the chicken
  env.step(action::kNoop, obs);
  CHECK(g.cars[7].x == 4);
  CHECK(g.cars[7].timer == 1);
  CHECK(g.chicken == 9);

  g.chicken = 5;
  g.cars[4] = {4, 5, 3, -3};  // already on the chicken's cell
  env.step(action::kNoop, obs);
  CHECK(g.chicken == 9);
  CHECK(g.cars[4].timer == 2);

  g.cars[0] = {9, 1, 0, 2};  // off the right edge: back at column 0
  env.step(action::kNoop, obs);
  CHECK(g.cars[0].x == 0);
  g.cars[1] = {0, 2, 0, -4};  // off the left edge: column 9
  env.step(action::kNoop, obs);
  CHECK(g.cars[1].x == 9);
}

TEST_CASE("MinAtar Freeway: 2,500 frames, then the episode is truncated (not terminated)") {
  MinAtarFreeway env(8);
  Tensor obs = observation_for(env);
  env.reset(obs);
  for (int frame = 1; frame <= FreewayRules::kTimeLimit; ++frame)
    REQUIRE_FALSE(env.step(action::kUp, obs).episode_over());
  const StepResult r = env.step(action::kUp, obs);
  CHECK(r.truncated);
  CHECK_FALSE(r.terminated);
}

}  // namespace test_minatar_freeway
