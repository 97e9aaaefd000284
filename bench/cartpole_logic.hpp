// CartPole for the actor benchmarks, examples/c/cartpole_actor.c's arithmetic (Gymnasium's
// CartPole-v1 dynamics, a xorshift generator of its own): the same environment logic in every
// language an actor is measured in.
#pragma once

#include <cmath>
#include <cstdint>

#include "seedrl/core/step_flags.hpp"

namespace seedrl::bench {

struct CartPole {
  double x = 0, x_dot = 0, theta = 0, theta_dot = 0;
  int steps = 0;
  std::uint64_t rng;
  explicit CartPole(std::uint64_t seed) : rng(seed | 1) { reset(); }
  double uniform() {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return static_cast<double>((rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
  }
  void reset() {
    x = 0.1 * uniform() - 0.05;
    x_dot = 0.1 * uniform() - 0.05;
    theta = 0.1 * uniform() - 0.05;
    theta_dot = 0.1 * uniform() - 0.05;
    steps = 0;
  }
  std::uint8_t step(std::int32_t action) {
    const double gravity = 9.8, total = 1.1, pole_mass = 0.1, half_length = 0.5, tau = 0.02;
    const double force = action == 1 ? 10.0 : -10.0;
    const double cos_t = std::cos(theta), sin_t = std::sin(theta);
    const double temp = (force + pole_mass * half_length * theta_dot * theta_dot * sin_t) / total;
    const double theta_acc = (gravity * sin_t - cos_t * temp) /
                             (half_length * (4.0 / 3.0 - pole_mass * cos_t * cos_t / total));
    const double x_acc = temp - pole_mass * half_length * theta_acc * cos_t / total;
    x += tau * x_dot;
    x_dot += tau * x_acc;
    theta += tau * theta_dot;
    theta_dot += tau * theta_acc;
    steps += 1;
    if (std::fabs(x) > 2.4 || std::fabs(theta) > 12.0 * 2.0 * 3.14159265358979323846 / 360.0)
      return step_flags::kTerminated;
    return steps >= 500 ? step_flags::kTruncated : 0;
  }
  void observe(float* out) const {
    out[0] = static_cast<float>(x);
    out[1] = static_cast<float>(x_dot);
    out[2] = static_cast<float>(theta);
    out[3] = static_cast<float>(theta_dot);
  }
};

}  // namespace seedrl::bench
