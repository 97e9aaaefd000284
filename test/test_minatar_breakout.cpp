// MinAtar Breakout: each rule pinned on a scripted sequence (bounces, bricks, the miss).
#include <doctest/doctest.h>

#include <set>

#include "seedrl/env/minatar/breakout.hpp"
#include "support/minatar_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_minatar_breakout {

using namespace seedrl;
using namespace seedrl::minatar;
using namespace seedrl::test;

namespace {

// Puts the Breakout ball at (x, y) moving in `direction`, its trail on it.
void place_ball(MinAtarBreakout& env, std::int32_t x, std::int32_t y, std::int32_t direction) {
  BreakoutRules& g = env.game();
  g.ball_x = g.last_x = x;
  g.ball_y = g.last_y = y;
  g.direction = direction;
}

}  // namespace

TEST_CASE("MinAtar Breakout: the start, per the rules") {
  std::set<std::int32_t> starts;
  for (std::uint64_t seed = 0; seed < 64; ++seed) {
    MinAtarBreakout env(seed);
    CHECK(env.observation_spec() == TensorSpec{{10, 10, 4}, DType::u8});
    CHECK(env.action_spec().num_actions == 6);
    Tensor obs = observation_for(env);
    env.reset(obs);
    const BreakoutRules& g = env.game();
    CHECK(g.ball_y == 3);
    CHECK(((g.ball_x == 0 && g.direction == BreakoutRules::kDownRight) ||
           (g.ball_x == 9 && g.direction == BreakoutRules::kDownLeft)));
    starts.insert(g.ball_x);
    CHECK(channel_count(obs, BreakoutRules::kBrick) == 30);
    for (std::int32_t c = 0; c < kSize; ++c) {
      CHECK(cell(obs, 0, c, BreakoutRules::kBrick) == 0);
      CHECK(cell(obs, 1, c, BreakoutRules::kBrick) == 1);
      CHECK(cell(obs, 3, c, BreakoutRules::kBrick) == 1);
      CHECK(cell(obs, 4, c, BreakoutRules::kBrick) == 0);
    }
    CHECK(cell(obs, 9, 4, BreakoutRules::kPaddle) == 1);
    CHECK(channel_count(obs, BreakoutRules::kPaddle) == 1);
    CHECK(cell(obs, 3, g.ball_x, BreakoutRules::kBall) == 1);
    CHECK(cell(obs, 3, g.ball_x, BreakoutRules::kTrail) == 1);
  }
  CHECK(starts == std::set<std::int32_t>{0, 9});  // both starts happen
}

TEST_CASE("MinAtar Breakout: a scripted rally: paddle bounce, wall, a brick, then a miss") {
  MinAtarBreakout env(1, kNoSticky);
  Tensor obs = observation_for(env);
  env.reset(obs);
  place_ball(env, 0, 3, BreakoutRules::kDownRight);
  const BreakoutRules& g = env.game();
  // Five frames down-right to (5, 8); on the sixth the paddle steps right under the ball
  // (column 5), which bounces straight back up: up-right from (6, 8).
  for (int i = 0; i < 5; ++i) CHECK(env.step(action::kNoop, obs).reward == 0.0f);
  CHECK(g.ball_x == 5);
  CHECK(g.ball_y == 8);
  StepResult r = env.step(action::kRight, obs);
  CHECK_FALSE(r.episode_over());
  CHECK(g.paddle == 5);
  CHECK(g.ball_x == 6);
  CHECK(g.ball_y == 8);
  CHECK(g.direction == BreakoutRules::kUpRight);
  // (7,7), (8,6), (9,5), then the right wall: (9,4) going up-left.
  for (int i = 0; i < 4; ++i) CHECK(env.step(action::kNoop, obs).reward == 0.0f);
  CHECK(g.ball_x == 9);
  CHECK(g.ball_y == 4);
  CHECK(g.direction == BreakoutRules::kUpLeft);
  // Into the brick at (8, 3): +1, the brick is gone, the ball stays in row 4 going down-left.
  r = env.step(action::kNoop, obs);
  CHECK(r.reward == 1.0f);
  CHECK_FALSE(g.brick(3, 8));
  CHECK(g.brick_count() == 29);
  CHECK(channel_count(obs, BreakoutRules::kBrick) == 29);
  CHECK(g.ball_x == 8);
  CHECK(g.ball_y == 4);
  CHECK(g.direction == BreakoutRules::kDownLeft);
  CHECK(cell(obs, 4, 8, BreakoutRules::kBall) == 1);
  CHECK(cell(obs, 4, 9, BreakoutRules::kTrail) == 1);  // where it came from
  // (7,5), (6,6), (5,7), (4,8), then row 9 at column 3 with the paddle at 5: the episode ends.
  for (int i = 0; i < 4; ++i) CHECK_FALSE(env.step(action::kNoop, obs).episode_over());
  r = env.step(action::kNoop, obs);
  CHECK(r.terminated);
  CHECK_FALSE(r.truncated);
  CHECK(r.reward == 0.0f);
  CHECK_THROWS_AS(env.step(action::kNoop, obs), Error);
}

TEST_CASE("MinAtar Breakout: landing on the paddle's column sends the ball back the way it came") {
  MinAtarBreakout env(2, kNoSticky);
  Tensor obs = observation_for(env);
  env.reset(obs);
  place_ball(env, 4, 8, BreakoutRules::kDownRight);
  env.game().paddle = 5;
  CHECK_FALSE(env.step(action::kNoop, obs).episode_over());
  CHECK(env.game().direction == BreakoutRules::kUpLeft);
  CHECK(env.game().ball_x == 5);
  CHECK(env.game().ball_y == 8);
}

TEST_CASE("MinAtar Breakout: right after breaking a brick the ball passes into the next one") {
  MinAtarBreakout env(3, kNoSticky);
  Tensor obs = observation_for(env);
  env.reset(obs);
  BreakoutRules& g = env.game();
  place_ball(env, 2, 4, BreakoutRules::kUpRight);
  g.brick(5, 4) = true;                                // an extra brick in the way back down
  CHECK(env.step(action::kNoop, obs).reward == 1.0f);  // breaks (3, 3), back to row 4
  CHECK(g.ball_x == 3);
  CHECK(g.ball_y == 4);
  CHECK(env.step(action::kNoop, obs).reward == 0.0f);  // enters (4, 5) without breaking it
  CHECK(g.ball_x == 4);
  CHECK(g.ball_y == 5);
  CHECK(g.brick(5, 4));
  CHECK(g.direction == BreakoutRules::kDownRight);
}

TEST_CASE("MinAtar Breakout: the bricks come back once all are broken") {
  MinAtarBreakout env(4, kNoSticky);
  Tensor obs = observation_for(env);
  env.reset(obs);
  BreakoutRules& g = env.game();
  g.bricks = {};
  place_ball(env, 3, 8, BreakoutRules::kDownRight);
  g.paddle = 3;  // under the ball: bounces
  CHECK_FALSE(env.step(action::kNoop, obs).episode_over());
  CHECK(g.brick_count() == 30);
  CHECK(channel_count(obs, BreakoutRules::kBrick) == 30);
}

}  // namespace test_minatar_breakout
