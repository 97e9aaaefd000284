// Catch as in bsuite (Osband et al. 2020): a ball falls one row per step down a 10 x 5 board
// from a random column of the top row; the paddle on the bottom row moves left, stays or moves
// right (actions 0, 1, 2). When the ball reaches the bottom row the episode terminates with
// reward +1 if the paddle is under it, else -1. Observation: the board [rows, columns] f32, 1 where
// the ball or the paddle is.
#pragma once

#include <algorithm>
#include <cstdint>

#include "seedrl/core/random.hpp"
#include "seedrl/env/environment.hpp"

namespace seedrl {

struct CatchOptions {
  std::int32_t rows = 10;
  std::int32_t columns = 5;
};

class Catch {
 public:
  explicit Catch(std::uint64_t seed = 0, const CatchOptions& options = {})
      : options_(options), rng_(seed) {
    SEEDRL_REQUIRE(options.rows >= 2, "CatchOptions.rows must be >= 2, got ", options.rows);
    SEEDRL_REQUIRE(options.columns >= 1, "CatchOptions.columns must be >= 1, got ",
                   options.columns);
  }

  TensorSpec observation_spec() const { return {{options_.rows, options_.columns}, DType::f32}; }
  ActionSpec action_spec() const { return {3}; }

  void reset(const Tensor& observation) {
    ball_x_ = static_cast<std::int32_t>(rng_.below(static_cast<std::uint64_t>(options_.columns)));
    ball_y_ = 0;
    paddle_x_ = options_.columns / 2;
    over_ = false;
    write(observation);
  }

  StepResult step(std::int32_t action, const Tensor& observation) {
    SEEDRL_REQUIRE(action >= 0 && action < 3, "Catch: action ", action, " out of range [0, 3)");
    SEEDRL_REQUIRE(!over_, "Catch: step after the episode ended; call reset()");
    paddle_x_ = std::clamp(paddle_x_ + action - 1, 0, options_.columns - 1);
    ++ball_y_;
    StepResult result;
    if (ball_y_ == options_.rows - 1) {
      result.reward = paddle_x_ == ball_x_ ? 1.0f : -1.0f;
      result.terminated = true;
      over_ = true;
    }
    write(observation);
    return result;
  }

  std::int32_t ball_x() const { return ball_x_; }
  std::int32_t ball_y() const { return ball_y_; }
  std::int32_t paddle_x() const { return paddle_x_; }

 private:
  void write(const Tensor& observation) const {
    require_observation(observation, observation_spec(), "Catch");
    float* board = observation.data<float>();
    std::fill(board, board + options_.rows * options_.columns, 0.0f);
    board[ball_y_ * options_.columns + ball_x_] = 1.0f;
    board[(options_.rows - 1) * options_.columns + paddle_x_] = 1.0f;
  }

  CatchOptions options_;
  Rng rng_;
  std::int32_t ball_x_ = 0, ball_y_ = 0, paddle_x_ = 0;
  bool over_ = true;
};

static_assert(Environment<Catch>);

}  // namespace seedrl
