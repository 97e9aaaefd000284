// MinAtar games: each rule pinned on scripted action sequences (scoring, death, bounces, the
// time limit), sticky actions, observations, determinism per seed.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <vector>

#include "seedrl/env/minatar/asterix.hpp"
#include "seedrl/env/minatar/breakout.hpp"
#include "seedrl/env/minatar/freeway.hpp"
#include "seedrl/env/minatar/seaquest.hpp"
#include "seedrl/env/minatar/space_invaders.hpp"

using namespace seedrl;
using namespace seedrl::minatar;

namespace {

constexpr Options kNoSticky{0.0, true};

template <class Env>
Tensor observation_for(const Env& env) {
  return Tensor::zeros(env.observation_spec().shape, DType::u8);
}

std::uint8_t cell(const Tensor& obs, std::int32_t row, std::int32_t column, std::int32_t channel) {
  const auto channels = static_cast<std::int32_t>(obs.shape()[2]);
  return obs.data<std::uint8_t>()[(row * kSize + column) * channels + channel];
}

std::int64_t channel_count(const Tensor& obs, std::int32_t channel) {
  std::int64_t n = 0;
  for (std::int32_t r = 0; r < kSize; ++r)
    for (std::int32_t c = 0; c < kSize; ++c) n += cell(obs, r, c, channel);
  return n;
}

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

TEST_CASE("MinAtar Asterix: spawning, moving, the player's bounds") {
  MinAtarAsterix env(10, kNoSticky);
  CHECK(env.observation_spec() == TensorSpec{{10, 10, 4}, DType::u8});
  Tensor obs = observation_for(env);
  env.reset(obs);
  const AsterixRules& g = env.game();
  CHECK(cell(obs, 5, 5, AsterixRules::kPlayer) == 1);
  // The spawn timer starts at 10 and counts down at the end of each frame: the first entity
  // appears on frame 11 at an edge of a row 1-8; entities move on frames 6, 11, 16, ... (move
  // timer 5), so it has already stepped one column in.
  auto entities = [&] {
    int n = 0;
    for (const auto& e : g.rows) n += e.has_value();
    return n;
  };
  for (int frame = 1; frame <= 10; ++frame) env.step(action::kNoop, obs);
  CHECK(entities() == 0);
  env.step(action::kNoop, obs);
  REQUIRE(entities() == 1);
  for (std::size_t i = 0; i < g.rows.size(); ++i) {
    if (!g.rows[i]) continue;
    const AsterixRules::Entity& e = *g.rows[i];
    CHECK(e.x == (e.moving_right ? 1 : 8));
    CHECK(cell(obs, static_cast<std::int32_t>(i) + 1, e.moving_right ? 0 : 9,
               AsterixRules::kTrail) == 1);
    CHECK(channel_count(obs, e.gold ? AsterixRules::kGold : AsterixRules::kEnemy) == 1);
    CHECK(cell(obs, static_cast<std::int32_t>(i) + 1, e.x,
               e.gold ? AsterixRules::kGold : AsterixRules::kEnemy) == 1);
  }
  // The player stays within rows 1-8 and columns 0-9.
  for (int i = 0; i < 12; ++i) {
    env.game().rows = {};
    env.step(action::kUp, obs);
  }
  CHECK(g.player_y == 1);
  for (int i = 0; i < 12; ++i) {
    env.game().rows = {};
    env.step(action::kDown, obs);
  }
  CHECK(g.player_y == 8);
  for (int i = 0; i < 12; ++i) {
    env.game().rows = {};
    env.step(action::kLeft, obs);
  }
  CHECK(g.player_x == 0);
}

TEST_CASE("MinAtar Asterix: gold scores, an enemy ends the episode, entities leave the board") {
  MinAtarAsterix env(11, kNoSticky);
  Tensor obs = observation_for(env);
  env.reset(obs);
  AsterixRules& g = env.game();
  g.spawn_timer = 1'000'000;
  // Gold one cell left of the player, moving right, moving this frame: collected.
  g.rows[4] = AsterixRules::Entity{4, true, true};  // row 5
  g.move_timer = 0;
  CHECK(env.step(action::kNoop, obs).reward == 1.0f);
  CHECK_FALSE(g.rows[4].has_value());
  CHECK(g.move_timer == 4);  // reset to the period (5), minus this frame
  // Walking onto gold that does not move this frame: collected too.
  g.rows[3] = AsterixRules::Entity{5, false, true};  // row 4
  CHECK(env.step(action::kUp, obs).reward == 1.0f);
  // An entity leaving the board disappears.
  g.rows[0] = AsterixRules::Entity{9, true, false};
  g.move_timer = 0;
  CHECK_FALSE(env.step(action::kNoop, obs).episode_over());
  CHECK_FALSE(g.rows[0].has_value());
  // An enemy arriving on the player's cell ends the episode.
  g.rows[3] = AsterixRules::Entity{6, false, false};
  g.move_timer = 0;
  const StepResult r = env.step(action::kNoop, obs);
  CHECK(r.terminated);
  CHECK(r.reward == 0.0f);
}

TEST_CASE("MinAtar Asterix: difficulty ramps on frame 102 and every 102 frames, unless disabled") {
  for (const bool ramping : {true, false}) {
    MinAtarAsterix env(12, Options{0.0, ramping});
    Tensor obs = observation_for(env);
    env.reset(obs);
    AsterixRules& g = env.game();
    auto frame = [&] {
      env.step(action::kNoop, obs);
      g.rows = {};  // keep the player alive
    };
    for (int f = 1; f <= 101; ++f) frame();
    CHECK(g.spawn_period == 10);
    frame();  // 102
    CHECK(g.spawn_period == (ramping ? 9 : 10));
    CHECK(g.move_period == 5);  // only every second ramp
    CHECK(g.ramp_index == (ramping ? 1 : 0));
    for (int f = 103; f <= 204; ++f) frame();
    CHECK(g.spawn_period == (ramping ? 8 : 10));
    CHECK(g.move_period == (ramping ? 4 : 5));
    CHECK(g.ramp_index == (ramping ? 2 : 0));
  }
}

TEST_CASE("MinAtar Space Invaders: the start; firing, its cool-down and a kill") {
  MinAtarSpaceInvaders env(13, kNoSticky);
  CHECK(env.observation_spec() == TensorSpec{{10, 10, 6}, DType::u8});
  Tensor obs = observation_for(env);
  env.reset(obs);
  SpaceInvadersRules& g = env.game();
  CHECK(cell(obs, 9, 5, SpaceInvadersRules::kCannon) == 1);
  CHECK(channel_count(obs, SpaceInvadersRules::kAlien) == 24);
  CHECK(channel_count(obs, SpaceInvadersRules::kAlienLeft) == 24);
  CHECK(channel_count(obs, SpaceInvadersRules::kAlienRight) == 0);
  CHECK(cell(obs, 0, 2, SpaceInvadersRules::kAlien) == 1);
  CHECK(cell(obs, 3, 7, SpaceInvadersRules::kAlien) == 1);
  CHECK(cell(obs, 4, 5, SpaceInvadersRules::kAlien) == 0);
  g.alien_shot_timer = g.march_timer = 1'000'000;  // a still, silent block
  // Fire on frame 1: the bullet starts on the cannon's cell and moves up at once (row 8).
  CHECK(env.step(action::kFire, obs).reward == 0.0f);
  CHECK(cell(obs, 8, 5, SpaceInvadersRules::kCannonBullet) == 1);
  // Holding fire: the next shot leaves on frame 6 (cool-down 5).
  for (int f = 2; f <= 5; ++f) {
    CHECK(env.step(action::kFire, obs).reward == 0.0f);
    CHECK(channel_count(obs, SpaceInvadersRules::kCannonBullet) == 1);
  }
  CHECK(cell(obs, 4, 5, SpaceInvadersRules::kCannonBullet) == 1);
  // Frame 6: the first bullet reaches the lowest alien of column 5 (row 3): +1, both gone; a
  // second bullet is fired.
  CHECK(env.step(action::kFire, obs).reward == 1.0f);
  CHECK(g.count(g.aliens) == 23);
  CHECK_FALSE(g.at(g.aliens, 3, 5));
  CHECK(channel_count(obs, SpaceInvadersRules::kCannonBullet) == 1);
  CHECK(cell(obs, 8, 5, SpaceInvadersRules::kCannonBullet) == 1);
}

TEST_CASE("MinAtar Space Invaders: the block marches, turns and steps down at the edge") {
  MinAtarSpaceInvaders env(14, kNoSticky);
  Tensor obs = observation_for(env);
  env.reset(obs);
  SpaceInvadersRules& g = env.game();
  g.alien_shot_timer = 1'000'000;
  // The first march is on frame 13 (timer 12): one column left.
  for (int f = 1; f <= 12; ++f) env.step(action::kNoop, obs);
  CHECK(g.at(g.aliens, 0, 2));
  env.step(action::kNoop, obs);
  CHECK(g.at(g.aliens, 0, 1));
  CHECK_FALSE(g.at(g.aliens, 0, 7));
  CHECK(g.march_timer == 11);  // min(24 aliens, 12), minus this frame
  // At the left edge: it turns and steps down instead of moving sideways.
  g.aliens = {};
  g.aliens[2][0] = g.aliens[2][1] = g.aliens[2][2] = true;
  g.march_timer = 0;
  env.step(action::kNoop, obs);
  CHECK(g.direction == 1);
  CHECK(g.at(g.aliens, 3, 0));
  CHECK_FALSE(g.at(g.aliens, 2, 0));
  CHECK(g.march_timer == 2);  // 3 aliens left: they march every 3 frames
  CHECK(channel_count(obs, SpaceInvadersRules::kAlienRight) == 3);
  // Then right.
  g.march_timer = 0;
  env.step(action::kNoop, obs);
  CHECK(g.at(g.aliens, 3, 1));
  CHECK(g.at(g.aliens, 3, 3));
}

TEST_CASE("MinAtar Space Invaders: the nearest alien shoots, and its bullet ends the episode") {
  MinAtarSpaceInvaders env(15, kNoSticky);
  Tensor obs = observation_for(env);
  env.reset(obs);
  SpaceInvadersRules& g = env.game();
  g.march_timer = 1'000'000;
  g.aliens = {};
  g.aliens[1][2] = g.aliens[4][2] = g.aliens[3][8] = true;  // columns 2 and 8: 3 from the cannon
  g.alien_shot_timer = 0;
  env.step(action::kNoop, obs);
  // The tie goes to the lower column; the shot comes from its lowest alien.
  CHECK(g.at(g.alien_bullets, 4, 2));
  CHECK(channel_count(obs, SpaceInvadersRules::kAlienBullet) == 1);
  CHECK(g.alien_shot_timer == 9);
  // It falls a row per frame; the cannon steps under it and is hit on row 9.
  g.alien_shot_timer = 1'000'000;
  for (int i = 0; i < 3; ++i) CHECK_FALSE(env.step(action::kLeft, obs).episode_over());
  CHECK(g.cannon == 2);
  CHECK(g.at(g.alien_bullets, 7, 2));
  CHECK_FALSE(env.step(action::kNoop, obs).episode_over());  // row 8
  const StepResult r = env.step(action::kNoop, obs);         // row 9: the cannon
  CHECK(r.terminated);
}

TEST_CASE("MinAtar Space Invaders: a cleared wave comes back marching faster, if ramping") {
  for (const bool ramping : {true, false}) {
    MinAtarSpaceInvaders env(16, Options{0.0, ramping});
    Tensor obs = observation_for(env);
    env.reset(obs);
    SpaceInvadersRules& g = env.game();
    g.march_timer = g.alien_shot_timer = 1'000'000;
    g.aliens = {};
    g.aliens[7][5] = true;
    CHECK(env.step(action::kFire, obs).reward == 0.0f);  // bullet at row 8
    CHECK(env.step(action::kNoop, obs).reward == 1.0f);  // row 7: the last alien
    CHECK(g.count(g.aliens) == 24);
    CHECK(g.march_period == (ramping ? 11 : 12));
    CHECK(g.ramp_index == (ramping ? 1 : 0));
  }
}

namespace {

// A Seaquest with nothing spawning unless a test asks for it.
struct QuietSeaquest {
  MinAtarSeaquest env;
  Tensor obs;
  explicit QuietSeaquest(std::uint64_t seed, bool ramping = true)
      : env(seed, Options{0.0, ramping}), obs(observation_for(env)) {
    env.reset(obs);
    game().spawn_timer = game().diver_timer = 1'000'000;
  }
  SeaquestRules& game() { return env.game(); }
  StepResult step(std::int32_t a) { return env.step(a, obs); }
};

}  // namespace

TEST_CASE("MinAtar Seaquest: the start, and surfacing without a diver ends the episode") {
  QuietSeaquest q(20);
  CHECK(q.env.observation_spec() == TensorSpec{{10, 10, 10}, DType::u8});
  CHECK(cell(q.obs, 0, 5, SeaquestRules::kSubFront) == 1);
  CHECK(cell(q.obs, 0, 6, SeaquestRules::kSubBack) == 1);  // heading left
  CHECK(channel_count(q.obs, SeaquestRules::kOxygen) == 10);
  CHECK(channel_count(q.obs, SeaquestRules::kDiverGauge) == 0);
  CHECK_FALSE(q.step(action::kNoop).episode_over());  // at the surface nothing is used up
  CHECK(q.game().oxygen == 200);
  CHECK_FALSE(q.step(action::kDown).episode_over());
  CHECK(q.game().oxygen == 199);
  const StepResult r = q.step(action::kUp);
  CHECK(r.terminated);
}

TEST_CASE("MinAtar Seaquest: oxygen lasts 201 frames under water") {
  QuietSeaquest q(21);
  for (int frame = 1; frame <= 201; ++frame) {
    REQUIRE_FALSE(q.step(frame == 1 ? action::kDown : action::kNoop).episode_over());
    if (frame == 20) CHECK(channel_count(q.obs, SeaquestRules::kOxygen) == 9);
  }
  CHECK(q.game().oxygen == -1);
  CHECK(q.step(action::kNoop).terminated);
}

TEST_CASE("MinAtar Seaquest: divers are picked up; surfacing lets one off and refills oxygen") {
  for (const bool ramping : {true, false}) {
    QuietSeaquest q(22, ramping);
    SeaquestRules& g = q.game();
    q.step(action::kDown);                   // (row 1, column 5)
    g.divers.push_back({4, 1, true, 0, 0});  // moves onto the sub this frame
    q.step(action::kNoop);
    CHECK(g.divers.empty());
    CHECK(g.divers_aboard == 1);
    CHECK(cell(q.obs, 9, 8, SeaquestRules::kDiverGauge) == 1);
    g.divers.push_back({5, 1, false, 3, 0});  // already on the sub's cell
    q.step(action::kNoop);
    CHECK(g.divers_aboard == 2);
    const StepResult r = q.step(action::kUp);
    CHECK_FALSE(r.episode_over());
    CHECK(r.reward == 0.0f);
    CHECK(g.divers_aboard == 1);
    CHECK(g.oxygen == 200);
    CHECK(g.spawn_period == (ramping ? 19 : 20));
    CHECK(g.ramp_index == (ramping ? 1 : 0));
    CHECK(g.move_period == 5);  // only on every second surfacing
  }
}

TEST_CASE("MinAtar Seaquest: surfacing with six divers pays for the oxygen left") {
  QuietSeaquest q(23);
  SeaquestRules& g = q.game();
  q.step(action::kDown);
  g.divers_aboard = 6;
  g.oxygen = 101;
  q.step(action::kNoop);  // one more frame under water: 100 left
  CHECK(channel_count(q.obs, SeaquestRules::kDiverGauge) == 6);
  CHECK(channel_count(q.obs, SeaquestRules::kOxygen) == 5);
  const StepResult r = q.step(action::kUp);
  CHECK(r.reward == 5.0f);  // 100 * 10 / 200
  CHECK(g.divers_aboard == 0);
  CHECK(g.oxygen == 200);
  // All six were let off: the next surfacing without a rescue ends the episode (the reference
  // implementation's diver count would be -1 here; see seaquest.hpp).
  q.step(action::kDown);
  CHECK(q.step(action::kUp).terminated);
}

TEST_CASE("MinAtar Seaquest: bullets: the sub's kill a fish; an enemy sub's kill the sub") {
  QuietSeaquest q(24);
  SeaquestRules& g = q.game();
  g.fish.push_back({2, 0, true, 1'000'000, 0});
  CHECK(q.step(action::kFire).reward == 0.0f);  // fired from (0, 5) heading left: now at column 4
  CHECK(cell(q.obs, 0, 4, SeaquestRules::kBullet) == 1);
  CHECK(q.step(action::kFire).reward == 0.0f);  // cool-down: no second bullet
  CHECK(g.bullets.size() == 1);
  CHECK(q.step(action::kNoop).reward == 1.0f);  // column 2: the fish
  CHECK(g.fish.empty());
  CHECK(g.bullets.empty());

  for (int i = 0; i < 3; ++i) q.step(action::kDown);  // row 3, column 5
  g.subs.push_back({1, 3, true, 1'000'000, 0});       // fires this frame
  CHECK_FALSE(q.step(action::kNoop).episode_over());
  REQUIRE(g.enemy_bullets.size() == 1);
  CHECK(g.enemy_bullets[0].x == 2);  // fired from column 1 and moved at once
  CHECK(cell(q.obs, 3, 2, SeaquestRules::kEnemyBullet) == 1);
  CHECK_FALSE(q.step(action::kNoop).episode_over());  // 3
  CHECK_FALSE(q.step(action::kNoop).episode_over());  // 4
  CHECK(q.step(action::kNoop).terminated);            // 5: the sub
}

TEST_CASE("MinAtar Seaquest: enemies never spawn into a row held by one heading the other way") {
  QuietSeaquest q(25);
  SeaquestRules& g = q.game();
  for (std::int32_t row = 1; row <= 8; ++row) g.fish.push_back({5, row, true, 1'000'000, 0});
  for (int frame = 0; frame < 300; ++frame) {
    g.spawn_timer = 0;
    q.step(action::kNoop);  // the sub stays at the surface, out of their way
    REQUIRE_FALSE(g.over());
  }
  CHECK(g.fish.size() + g.subs.size() > 8);  // some spawned
  for (const auto& m : g.fish) CHECK(m.right);
  for (const auto& m : g.subs) CHECK(m.right);
}

TEST_CASE_TEMPLATE("MinAtar: long random play stays within the rules", Env, MinAtarBreakout,
                   MinAtarFreeway, MinAtarAsterix, MinAtarSeaquest, MinAtarSpaceInvaders) {
  // Under AddressSanitizer this also proves no cell is written outside the grid.
  Env env(31);
  Tensor obs = observation_for(env);
  env.reset(obs);
  Rng actions(32);
  std::int64_t episodes = 0;
  double total_reward = 0.0;
  for (int t = 0; t < 20000; ++t) {
    // Random, but 'up' half the time (a uniformly random chicken never crosses Freeway).
    const auto a =
        actions.below(2) == 0 ? action::kUp : static_cast<std::int32_t>(actions.below(6));
    const StepResult r = env.step(a, obs);
    REQUIRE(r.reward >= 0.0f);
    REQUIRE_FALSE((r.terminated && r.truncated));
    total_reward += r.reward;
    const std::uint8_t* grid = obs.data<std::uint8_t>();
    REQUIRE(std::all_of(grid, grid + obs.numel(), [](std::uint8_t v) { return v <= 1; }));
    if (r.episode_over()) {
      ++episodes;
      env.reset(obs);
    }
  }
  CHECK(episodes > 0);        // every game ends under a random policy
  CHECK(total_reward > 0.0);  // and scores now and then
}

TEST_CASE("MinAtar: sticky actions repeat the last action with the configured probability") {
  // After reset the last action is no-op; always choosing 'right', the first frame plays no-op
  // exactly when the action sticks.
  for (const double p : {0.0, 0.1, 0.25}) {
    MinAtarBreakout env(9, Options{p, true});
    Tensor obs = observation_for(env);
    int stuck = 0;
    const int episodes = 4000;
    for (int e = 0; e < episodes; ++e) {
      env.reset(obs);
      env.step(action::kRight, obs);
      stuck += env.last_action() == action::kNoop;
    }
    const double rate = static_cast<double>(stuck) / episodes;
    CAPTURE(p);
    if (p == 0.0) {
      CHECK(stuck == 0);
    } else {
      CHECK(std::abs(rate - p) < 0.02);  // about 3 standard deviations at n = 4000
    }
  }
  CHECK(Options{}.sticky_action_probability == 0.1);  // MinAtar's default
  CHECK_THROWS_WITH_AS(MinAtarBreakout(1, Options{1.0, true}),
                       doctest::Contains("sticky_action_probability"), Error);
}

TEST_CASE("MinAtar: episodes are a function of the seed") {
  auto play = [](std::uint64_t seed) {
    MinAtarFreeway freeway(seed);
    MinAtarBreakout breakout(seed);
    Tensor a = observation_for(freeway), b = observation_for(breakout);
    freeway.reset(a);
    breakout.reset(b);
    Rng actions(seed + 100);
    std::vector<std::uint8_t> trace;
    for (int t = 0; t < 300; ++t) {
      const auto action = static_cast<std::int32_t>(actions.below(6));
      if (!freeway.game().over()) freeway.step(action, a);
      if (breakout.game().over()) breakout.reset(b);
      breakout.step(action, b);
      trace.insert(trace.end(), a.data<std::uint8_t>(), a.data<std::uint8_t>() + a.numel());
      trace.insert(trace.end(), b.data<std::uint8_t>(), b.data<std::uint8_t>() + b.numel());
    }
    return trace;
  };
  CHECK(play(11) == play(11));
  CHECK(play(11) != play(12));
}
