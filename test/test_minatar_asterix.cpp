// MinAtar Asterix: each rule pinned on a scripted sequence (spawns, contact, ramping).
#include <doctest/doctest.h>

#include "seedrl/env/minatar/asterix.hpp"
#include "support/minatar_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_minatar_asterix {

using namespace seedrl;
using namespace seedrl::minatar;
using namespace seedrl::test;

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

}  // namespace test_minatar_asterix
