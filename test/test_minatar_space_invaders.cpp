// MinAtar Space Invaders: each rule pinned on a scripted sequence (fire, march, shots, waves).
#include <doctest/doctest.h>

#include "seedrl/env/minatar/space_invaders.hpp"
#include "support/minatar_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_minatar_space_invaders {

using namespace seedrl;
using namespace seedrl::minatar;
using namespace seedrl::test;

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

}  // namespace test_minatar_space_invaders
