// CartPole with the exact dynamics, constants, thresholds and 500-step time limit of Gymnasium's
// CartPole-v1 (Barto, Sutton & Anderson 1983, as in Sutton's pole.c): explicit Euler
// integration in double precision with Gymnasium's update order, observations as f32
// [x, x_dot, theta, theta_dot], reward 1 for every step including the terminating one.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "seedrl/core/random.hpp"
#include "seedrl/env/environment.hpp"

namespace seedrl {

struct CartPoleOptions {
  std::int32_t max_episode_steps = 500;  ///< truncation (CartPole-v1: 500)
};

class CartPole {
 public:
  static constexpr double kGravity = 9.8;
  static constexpr double kMassCart = 1.0;
  static constexpr double kMassPole = 0.1;
  static constexpr double kTotalMass = kMassPole + kMassCart;
  static constexpr double kLength = 0.5;  // half the pole's length
  static constexpr double kPoleMassLength = kMassPole * kLength;
  static constexpr double kForceMag = 10.0;
  static constexpr double kTau = 0.02;  // seconds between state updates
  static constexpr double kThetaThreshold = 12.0 * 2.0 * std::numbers::pi / 360.0;
  static constexpr double kXThreshold = 2.4;

  explicit CartPole(std::uint64_t seed = 0, const CartPoleOptions& options = {})
      : options_(options), rng_(seed) {
    SEEDRL_REQUIRE(options.max_episode_steps > 0,
                   "CartPoleOptions.max_episode_steps must be positive, got ",
                   options.max_episode_steps);
  }

  TensorSpec observation_spec() const { return {{4}, DType::f32}; }
  ActionSpec action_spec() const { return {2}; }

  /// Each state variable uniform in [-0.05, 0.05).
  void reset(const Tensor& observation) {
    for (double& v : state_) v = rng_.uniform(-0.05, 0.05);
    steps_ = 0;
    over_ = false;
    write(observation);
  }

  /// Action 1 pushes the cart right, 0 left.
  StepResult step(std::int32_t action, const Tensor& observation) {
    SEEDRL_REQUIRE(action == 0 || action == 1, "CartPole: action ", action, " out of range [0, 2)");
    SEEDRL_REQUIRE(!over_, "CartPole: step after the episode ended; call reset()");
    auto& [x, x_dot, theta, theta_dot] = state_;
    const double force = action == 1 ? kForceMag : -kForceMag;
    const double cos_theta = std::cos(theta);
    const double sin_theta = std::sin(theta);
    const double temp = (force + kPoleMassLength * theta_dot * theta_dot * sin_theta) / kTotalMass;
    const double theta_acc =
        (kGravity * sin_theta - cos_theta * temp) /
        (kLength * (4.0 / 3.0 - kMassPole * cos_theta * cos_theta / kTotalMass));
    const double x_acc = temp - kPoleMassLength * theta_acc * cos_theta / kTotalMass;
    x = x + kTau * x_dot;
    x_dot = x_dot + kTau * x_acc;
    theta = theta + kTau * theta_dot;
    theta_dot = theta_dot + kTau * theta_acc;
    ++steps_;

    StepResult result;
    result.reward = 1.0f;
    result.terminated =
        x < -kXThreshold || x > kXThreshold || theta < -kThetaThreshold || theta > kThetaThreshold;
    result.truncated = !result.terminated && steps_ >= options_.max_episode_steps;
    over_ = result.episode_over();
    write(observation);
    return result;
  }

  /// The exact double-precision state [x, x_dot, theta, theta_dot] (observations are its f32 cast).
  const std::array<double, 4>& state() const { return state_; }
  /// Sets the state, e.g. to replay a published trajectory.
  void set_state(const std::array<double, 4>& state) {
    state_ = state;
    over_ = false;
  }
  std::int32_t episode_steps() const { return steps_; }

 private:
  void write(const Tensor& observation) const {
    require_observation(observation, observation_spec(), "CartPole");
    float* out = observation.data<float>();
    for (int i = 0; i < 4; ++i) out[i] = static_cast<float>(state_[static_cast<std::size_t>(i)]);
  }

  CartPoleOptions options_;
  Rng rng_;
  std::array<double, 4> state_{};
  std::int32_t steps_ = 0;
  bool over_ = true;
};

static_assert(Environment<CartPole>);

}  // namespace seedrl
