// The tutorial environment (examples/corridor_env.hpp) behaves as its comments say.
#include <doctest/doctest.h>

#include "corridor_env.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_corridor_env {

using namespace seedrl;
using corridor::CorridorEnv;

TEST_CASE("CorridorEnv: walking right reaches the goal and terminates with +1") {
  CorridorEnv env(1, {5, false});
  Tensor obs = Tensor::empty({5});
  env.reset(obs);
  CHECK(obs.data<float>()[0] == 1.0f);
  StepResult r;
  for (int t = 0; t < 4; ++t) {
    r = env.step(1, obs);
    CHECK(obs.data<float>()[t + 1] == 1.0f);
    CHECK(obs.flat<float>().sum() == 1.0f);
  }
  CHECK(r.terminated);
  CHECK_FALSE(r.truncated);
  CHECK(r.reward == 1.0f);
}

TEST_CASE("CorridorEnv: dawdling is truncated after 4 x length steps, at -0.01 a step") {
  CorridorEnv env(1, {5, false});
  Tensor obs = Tensor::empty({5});
  env.reset(obs);
  StepResult r;
  int steps = 0;
  do {
    r = env.step(0, obs);  // into the wall
    ++steps;
    CHECK(r.reward == doctest::Approx(-0.01f));
  } while (!r.episode_over());
  CHECK(steps == 20);
  CHECK(r.truncated);
  CHECK_FALSE(r.terminated);
  CHECK(obs.data<float>()[0] == 1.0f);
  CHECK_THROWS_WITH_AS(env.step(2, obs), doctest::Contains("CorridorEnv: action 2 out of range"),
                       Error);
  CHECK_THROWS_WITH_AS(CorridorEnv(1, {1, false}), doctest::Contains("CorridorOptions.length"),
                       Error);
}

}  // namespace test_corridor_env
