// MinAtar<Rules>, across the five games: sticky actions, determinism per seed, and long random
// play within the rules. Each game's own rules: test_minatar_<game>.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "seedrl/env/minatar/asterix.hpp"
#include "seedrl/env/minatar/breakout.hpp"
#include "seedrl/env/minatar/freeway.hpp"
#include "seedrl/env/minatar/seaquest.hpp"
#include "seedrl/env/minatar/space_invaders.hpp"
#include "support/minatar_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_minatar {

using namespace seedrl;
using namespace seedrl::minatar;
using namespace seedrl::test;

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

TEST_CASE_TEMPLATE("MinAtar: the minimal action set plays the game's own actions, by index", Env,
                   MinAtarBreakout, MinAtarFreeway, MinAtarAsterix, MinAtarSeaquest,
                   MinAtarSpaceInvaders) {
  Options minimal;
  minimal.minimal_action_set = true;
  Env full(5), small(5, minimal);
  const auto& set = std::remove_cvref_t<decltype(full.game())>::kMinimalActions;
  REQUIRE(small.action_spec().num_actions == static_cast<std::int64_t>(set.size()));
  CHECK(full.action_spec().num_actions == kNumActions);
  // The same seed and the same choices, one by full index and one by index into the set: the
  // same frames, rewards and played actions (sticky ones included).
  Tensor a = observation_for(full), b = observation_for(small);
  full.reset(a);
  small.reset(b);
  Rng choices(6);
  for (int t = 0; t < 3000; ++t) {
    const auto i = static_cast<std::int32_t>(choices.below(set.size()));
    const StepResult rf = full.step(set[static_cast<std::size_t>(i)], a);
    const StepResult rs = small.step(i, b);
    REQUIRE(rf.reward == rs.reward);
    REQUIRE(rf.episode_over() == rs.episode_over());
    REQUIRE(full.last_action() == small.last_action());
    REQUIRE(std::equal(a.data<std::uint8_t>(), a.data<std::uint8_t>() + a.numel(),
                       b.data<std::uint8_t>()));
    if (rf.episode_over()) {
      full.reset(a);
      small.reset(b);
    }
  }
  CHECK_THROWS_WITH_AS(small.step(static_cast<std::int32_t>(set.size()), b),
                       doctest::Contains("out of range"), Error);
}

TEST_CASE("MinAtar: the minimal action sets are MinAtar's") {
  CHECK(std::vector<std::int32_t>(BreakoutRules::kMinimalActions.begin(),
                                  BreakoutRules::kMinimalActions.end()) ==
        std::vector<std::int32_t>{action::kNoop, action::kLeft, action::kRight});
  CHECK(FreewayRules::kMinimalActions.size() == 3);
  CHECK(AsterixRules::kMinimalActions.size() == 5);
  CHECK(SeaquestRules::kMinimalActions.size() == 6);
  CHECK(SpaceInvadersRules::kMinimalActions.size() == 4);
  CHECK_FALSE(Options{}.minimal_action_set);  // all six unless asked
}

}  // namespace test_minatar
