// Catch (bsuite) on scripted action sequences.
#include <doctest/doctest.h>

#include "seedrl/env/catch.hpp"
#include "seedrl/env/flatten_observation.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_catch {

using namespace seedrl;

namespace {

int ones(const Tensor& board) {
  int n = 0;
  for (std::int64_t i = 0; i < board.numel(); ++i) n += board.data<float>()[i] == 1.0f;
  return n;
}

}  // namespace

TEST_CASE("Catch: the ball falls one row per step; catching it gives +1 at the bottom") {
  Catch env(3);
  Tensor board = Tensor::empty({10, 5});
  env.reset(board);
  CHECK(env.ball_y() == 0);
  CHECK(env.paddle_x() == 2);
  CHECK(board.data<float>()[env.ball_x()] == 1.0f);  // ball on the top row
  CHECK(board.data<float>()[9 * 5 + 2] == 1.0f);     // paddle on the bottom row, middle column
  CHECK(ones(board) == 2);
  StepResult r;
  for (int t = 0; t < 9; ++t) {
    const int action = env.paddle_x() < env.ball_x() ? 2 : env.paddle_x() > env.ball_x() ? 0 : 1;
    r = env.step(action, board);
    CHECK(env.ball_y() == t + 1);
    if (t < 8) {
      CHECK(r.reward == 0.0f);
      CHECK_FALSE(r.episode_over());
    }
  }
  CHECK(r.reward == 1.0f);
  CHECK(r.terminated);
  CHECK_FALSE(r.truncated);
  CHECK(ones(board) == 1);  // ball and paddle share the cell
  CHECK_THROWS_WITH_AS(env.step(1, board), doctest::Contains("step after the episode ended"),
                       Error);
}

TEST_CASE("Catch: missing gives -1; the paddle stops at the walls") {
  Catch env(1);
  Tensor board = Tensor::empty({10, 5});
  for (int episode = 0; episode < 20; ++episode) {
    env.reset(board);
    const int ball = env.ball_x();
    // Run to the wall opposite to the ball (or to the left wall when the ball is on the right).
    const int action = ball >= 2 ? 0 : 2;
    StepResult r;
    for (int t = 0; t < 9; ++t) r = env.step(action, board);
    CHECK(env.paddle_x() == (action == 0 ? 0 : 4));
    CHECK(r.terminated);
    CHECK(r.reward == (env.paddle_x() == ball ? 1.0f : -1.0f));
  }
}

TEST_CASE("Catch: seeded and validated") {
  Catch a(9), b(9);
  Tensor ba = Tensor::empty({10, 5}), bb = Tensor::empty({10, 5});
  int columns[5] = {0, 0, 0, 0, 0};
  for (int i = 0; i < 500; ++i) {
    a.reset(ba);
    b.reset(bb);
    REQUIRE(a.ball_x() == b.ball_x());
    ++columns[a.ball_x()];
  }
  for (int c : columns) CHECK(c > 50);  // every column is used
  CHECK_THROWS_WITH_AS(a.step(3, ba), doctest::Contains("Catch: action 3 out of range [0, 3)"),
                       Error);
  CHECK_THROWS_WITH_AS(Catch(0, {1, 5}), doctest::Contains("CatchOptions.rows must be >= 2"),
                       Error);
}

TEST_CASE("FlattenObservation: the same environment seen as a vector, without a copy") {
  FlattenObservation flat(Catch(9));
  static_assert(Environment<FlattenObservation<Catch>>);
  CHECK(flat.observation_spec() == TensorSpec{{50}, DType::f32});
  CHECK(flat.action_spec().num_actions == 3);
  Tensor obs = Tensor::empty({50});
  flat.reset(obs);
  CHECK(obs.data<float>()[flat.environment().ball_x()] == 1.0f);
  CHECK(obs.data<float>()[45 + 2] == 1.0f);  // the paddle, bottom row, middle column
  CHECK_THROWS_WITH_AS(flat.reset(Tensor::empty({49})), doctest::Contains("cannot view [49]"),
                       Error);
}

}  // namespace test_catch
