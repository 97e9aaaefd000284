// check_environment (env/check.hpp): the built-in environments pass; an environment of known
// episodes gives exactly the report a hand count gives; each broken environment is refused with
// a message that names what is wrong.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "seedrl/env/by_name.hpp"
#include "seedrl/env/card_pick.hpp"
#include "seedrl/env/check.hpp"
#include "seedrl/env/float_pixels.hpp"
#include "seedrl/env/gunner.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_env_check {

using namespace seedrl;

namespace {

/// Episodes of exactly `length` steps (truncated), reward -0.5 then +2 at the last step
/// (terminated every third episode); observation one-hot of the step. What it breaks is chosen.
struct Clockwork {
  enum class Fault { none, unwritten, unseeded, nan_reward, endless, unwritten_field };
  std::int64_t length = 7;
  Fault fault = Fault::none;
  std::uint64_t seed = 0;
  std::int64_t t = 0, episode = 0;
  static inline std::uint64_t global_counter = 0;

  TensorSpec observation_spec() const { return {{length}, DType::f32}; }
  ActionSpec action_spec() const { return {2}; }
  std::vector<StepFieldSpec> step_fields() const {
    return {{"phase", {{}, DType::i32}}, {std::string(kActionMaskField), {{2}, DType::u8}}};
  }
  void write(const StepRow& row) const {
    float* o = row.observation().data<float>();
    for (std::int64_t i = 0; i < length; ++i)
      if (fault != Fault::unwritten || i == t) o[i] = i == t ? 1.0f : 0.0f;
    if (fault != Fault::unwritten_field) row.field("phase").data<std::int32_t>()[0] = 3;
    std::uint8_t* mask = row.field(kActionMaskField).data<std::uint8_t>();
    mask[0] = 0;  // only action 1 is legal: step() refuses action 0
    mask[1] = 1;
  }
  void reset(const StepRow& row) {
    t = 0;
    write(row);
  }
  StepResult step(std::int32_t action, const StepRow& row) {
    SEEDRL_REQUIRE(action == 1, "Clockwork: illegal action ", action);
    ++t;
    StepResult r;
    r.reward = t == length ? 2.0f : -0.5f;
    if (fault == Fault::unseeded) r.reward += static_cast<float>(global_counter++ % 2);
    if (fault == Fault::nan_reward && t == 3) r.reward = std::numeric_limits<float>::quiet_NaN();
    if (t == length && fault != Fault::endless) {
      (episode++ % 3 == 2 ? r.terminated : r.truncated) = true;
      t = 0;
    }
    write(row);
    return r;
  }
};

Clockwork clockwork(Clockwork::Fault fault) {
  Clockwork c;
  c.fault = fault;
  return c;
}

}  // namespace

TEST_CASE("check_environment: the built-in environments pass, every kind of action") {
  EnvironmentCheckOptions o;
  o.steps = 3000;
  const auto check = [&](auto make_env) {
    const EnvironmentCheckReport r = check_environment(make_env, o);
    CHECK(r.steps == 3000);
    CHECK(r.episodes == r.terminated + r.truncated);
    CHECK(r.episodes > 0);
    CHECK(r.min_reward <= r.max_reward);
    return r;
  };
  // CartPole: random play falls within a few dozen steps, never reaching the 500-step limit.
  const EnvironmentCheckReport cartpole = check([](std::uint64_t s) { return CartPole(s); });
  CHECK(cartpole.truncated == 0);
  CHECK(cartpole.longest_episode < 200);
  CHECK(cartpole.min_reward == 1.0f);
  check([](std::uint64_t s) { return FlattenObservation(Catch(s)); });
  for (const std::string& game : minatar_games()) {
    CAPTURE(game);
    with_minatar_game(game, [&](auto make_env) { return check(make_env); });
    with_minatar_game(game, [&](auto make_env) {
      return check([make_env](std::uint64_t s) { return FloatPixels(make_env(s)); });
    });
  }
  const EnvironmentCheckReport pendulum = check([](std::uint64_t s) { return Pendulum(s); });
  CHECK(pendulum.max_reward <= 0.0f);                  // Pendulum's cost is never negative
  check([](std::uint64_t s) { return CardPick(s); });  // masks
  check([](std::uint64_t s) { return Gunner(s); });    // branches and masks
}

TEST_CASE("check_environment: the report of episodes of known length is the hand count") {
  EnvironmentCheckOptions o;
  o.steps = 100;
  const EnvironmentCheckReport r =
      check_environment([](std::uint64_t) { return clockwork(Clockwork::Fault::none); }, o);
  // 100 steps of 7-step episodes: 14 ended (98 steps); every third terminated: 2, 5, 8, 11.
  CHECK(r.steps == 100);
  CHECK(r.episodes == 14);
  CHECK(r.terminated == 4);
  CHECK(r.truncated == 10);
  CHECK(r.longest_episode == 7);
  CHECK(r.min_reward == -0.5f);
  CHECK(r.max_reward == 2.0f);
  CHECK(r.describe() ==
        "100 steps, 14 episodes (4 terminated, 10 truncated), longest 7 steps, rewards in "
        "[-0.5, 2]");
}

TEST_CASE("check_environment: each broken environment is refused, naming what is wrong") {
  using F = Clockwork::Fault;
  EnvironmentCheckOptions o;
  o.steps = 100;
  const auto refuses = [&](F fault, const char* message) {
    CAPTURE(message);
    CHECK_THROWS_WITH_AS(check_environment([fault](std::uint64_t) { return clockwork(fault); }, o),
                         doctest::Contains(message), Error);
  };
  refuses(F::unwritten, "reset() left part of the observation unwritten");
  refuses(F::unwritten_field, "reset() left part of field 'phase' unwritten");
  refuses(F::unseeded, "two environments of the same seed returned different rewards");
  refuses(F::nan_reward, "step 3: reward is nan");
  o.max_episode_steps = 50;
  refuses(F::endless, "an episode ran 50 steps without ending");

  // Without the determinism check, an unseeded environment passes (its buffers are not compared).
  o.deterministic = false;
  CHECK(check_environment([](std::uint64_t) { return clockwork(F::unseeded); }, o).steps == 100);
  o.steps = 0;
  CHECK_THROWS_WITH_AS(check_environment([](std::uint64_t) { return clockwork(F::none); }, o),
                       doctest::Contains("EnvironmentCheckOptions.steps"), Error);
}

}  // namespace test_env_check
