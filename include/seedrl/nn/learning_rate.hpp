// Learning-rate schedules.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "seedrl/core/error.hpp"

namespace seedrl::nn {

/// Linear decay from `initial` to `final_value` over `decay_steps` updates, then constant
/// (tf.keras.optimizers.schedules.PolynomialDecay with power 1, as seed_rl uses it).
/// decay_steps = 0 means a constant rate.
struct LinearDecay {
  double initial = 1e-3;
  std::int64_t decay_steps = 0;
  double final_value = 0.0;

  void validate(std::string_view owner = "LinearDecay") const {
    SEEDRL_REQUIRE(std::isfinite(initial) && initial >= 0.0, owner,
                   ".initial (learning rate) must be finite and >= 0, got ", initial);
    SEEDRL_REQUIRE(std::isfinite(final_value) && final_value >= 0.0, owner,
                   ".final_value must be finite and >= 0, got ", final_value);
    SEEDRL_REQUIRE(decay_steps >= 0, owner, ".decay_steps must be >= 0, got ", decay_steps);
  }

  /// The rate for update number `step` (0-based).
  double at(std::int64_t step) const {
    if (decay_steps == 0) return initial;
    const double progress =
        std::clamp(static_cast<double>(step) / static_cast<double>(decay_steps), 0.0, 1.0);
    return initial + (final_value - initial) * progress;
  }
};

}  // namespace seedrl::nn
