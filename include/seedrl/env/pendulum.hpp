// Pendulum with the dynamics, reward, start distribution and 200-step time limit of Gymnasium's
// Pendulum-v1: swing a frictionless pendulum up and hold it upright with a torque in [-2, 2].
//
//   state (theta, theta_dot), theta = 0 upright; observation f32 [cos theta, sin theta, theta_dot]
//   u = clip(action, -2, 2)
//   reward = -(normalize(theta)^2 + 0.1 theta_dot^2 + 0.001 u^2)   (from the state before the step)
//   theta_dot' = clip(theta_dot + (3 g / (2 l) sin theta + 3 / (m l^2) u) dt, -8, 8)
//   theta' = theta + theta_dot' dt
// with g = 10, m = 1, l = 1, dt = 0.05 (semi-implicit Euler, as Gymnasium integrates it, in
// double precision). Episodes start at theta ~ U[-pi, pi], theta_dot ~ U[-1, 1], never terminate,
// and are truncated after 200 steps. Returns lie in about [-1700, 0]; a good policy gets about
// -150 on average.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <span>

#include "seedrl/core/random.hpp"
#include "seedrl/env/environment.hpp"

namespace seedrl {

struct PendulumOptions {
  std::int32_t max_episode_steps = 200;  ///< truncation (Pendulum-v1: 200)
  double gravity = 10.0;                 ///< Pendulum-v1's default g
};

class Pendulum {
 public:
  static constexpr double kMaxSpeed = 8.0;
  static constexpr double kMaxTorque = 2.0;
  static constexpr double kDt = 0.05;
  static constexpr double kMass = 1.0;
  static constexpr double kLength = 1.0;

  explicit Pendulum(std::uint64_t seed = 0, const PendulumOptions& options = {})
      : options_(options), rng_(seed) {
    SEEDRL_REQUIRE(options.max_episode_steps > 0,
                   "PendulumOptions.max_episode_steps must be positive, got ",
                   options.max_episode_steps);
    SEEDRL_REQUIRE(std::isfinite(options.gravity), "PendulumOptions.gravity must be finite");
  }

  TensorSpec observation_spec() const { return {{3}, DType::f32}; }
  ActionSpec action_spec() const {
    return ActionSpec::box(1, static_cast<float>(-kMaxTorque), static_cast<float>(kMaxTorque));
  }

  void reset(const Tensor& observation) {
    theta_ = rng_.uniform(-std::numbers::pi, std::numbers::pi);
    theta_dot_ = rng_.uniform(-1.0, 1.0);
    steps_ = 0;
    over_ = false;
    write(observation);
  }

  /// One torque value; outside [-2, 2] it is clipped (as Gymnasium does). A non-finite torque or
  /// another number of values is an error.
  StepResult step(std::span<const float> action, const Tensor& observation) {
    SEEDRL_REQUIRE(action.size() == 1, "Pendulum: an action is 1 torque value, got ",
                   action.size());
    SEEDRL_REQUIRE(std::isfinite(action[0]), "Pendulum: the torque is not finite (", action[0],
                   ")");
    SEEDRL_REQUIRE(!over_, "Pendulum: step after the episode ended; call reset()");
    const double u = std::clamp(static_cast<double>(action[0]), -kMaxTorque, kMaxTorque);
    const double angle = normalize_angle(theta_);
    const double cost = angle * angle + 0.1 * theta_dot_ * theta_dot_ + 0.001 * u * u;

    const double g = options_.gravity;
    theta_dot_ +=
        (3.0 * g / (2.0 * kLength) * std::sin(theta_) + 3.0 / (kMass * kLength * kLength) * u) *
        kDt;
    theta_dot_ = std::clamp(theta_dot_, -kMaxSpeed, kMaxSpeed);
    theta_ += theta_dot_ * kDt;
    ++steps_;

    StepResult result;
    result.reward = static_cast<float>(-cost);
    result.truncated = steps_ >= options_.max_episode_steps;
    over_ = result.episode_over();
    write(observation);
    return result;
  }

  /// The angle (0 upright, unbounded as it winds) and angular velocity.
  double theta() const { return theta_; }
  double theta_dot() const { return theta_dot_; }
  /// Puts the pendulum in a state (tests, demonstrations) and writes its observation; the step
  /// count is unchanged.
  void set_state(double theta, double theta_dot, const Tensor& observation) {
    theta_ = theta;
    theta_dot_ = theta_dot;
    write(observation);
  }

  /// x mapped into [-pi, pi), as Gymnasium's angle_normalize: ((x + pi) mod 2 pi) - pi.
  static double normalize_angle(double x) {
    const double two_pi = 2.0 * std::numbers::pi;
    double r = std::fmod(x + std::numbers::pi, two_pi);
    if (r < 0.0) r += two_pi;
    return r - std::numbers::pi;
  }

 private:
  void write(const Tensor& observation) const {
    require_observation(observation, observation_spec(), "Pendulum");
    float* out = observation.data<float>();
    out[0] = static_cast<float>(std::cos(theta_));
    out[1] = static_cast<float>(std::sin(theta_));
    out[2] = static_cast<float>(theta_dot_);
  }

  PendulumOptions options_;
  Rng rng_;
  double theta_ = 0.0, theta_dot_ = 0.0;
  std::int32_t steps_ = 0;
  bool over_ = false;
};

static_assert(Environment<Pendulum>);
static_assert(BoxEnvironment<Pendulum>);

}  // namespace seedrl
