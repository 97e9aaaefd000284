// MinAtar Seaquest: each rule pinned on a scripted sequence (surfacing, oxygen, divers, bullets).
#include <doctest/doctest.h>

#include "seedrl/env/minatar/seaquest.hpp"
#include "support/minatar_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_minatar_seaquest {

using namespace seedrl;
using namespace seedrl::minatar;
using namespace seedrl::test;

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

}  // namespace test_minatar_seaquest
