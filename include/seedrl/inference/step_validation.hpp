// What a step must be before it may reach an inference batch: its shapes against the server's
// specs, and its values (finite rewards, valid flags, finite observations where they are
// normalised). A peer's bad step is answered with Status::invalid_argument naming the part; it
// never disturbs the other actors (inference/inference_server.hpp).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "seedrl/acting/inference_endpoint.hpp"
#include "seedrl/core/status.hpp"
#include "seedrl/core/step_flags.hpp"
#include "seedrl/core/tensor_spec.hpp"
#include "seedrl/env/environment.hpp"

namespace seedrl {

/// What a server accepts.
struct StepRequirements {
  TensorSpec observation;
  ActionSpec action;
  std::int32_t max_slots = 0;
  bool finite_observations = false;  ///< observations must be finite (they are normalised)
};

/// Ok, or invalid_argument saying what is wrong with `r`.
inline Status validate_step(const StepRequest& r, const StepRequirements& layout) {
  const Connection& c = r.connection;
  if (!c.connected() || c.first_slot + c.num_envs > layout.max_slots)
    return Status::invalid_argument("step on an unconnected actor");
  const auto n = static_cast<std::size_t>(c.num_envs);
  const Shape expected = layout.observation.shape.prepend({c.num_envs});
  const Tensor& obs = r.observations;
  if (!obs.defined() || obs.shape() != expected || obs.dtype() != layout.observation.dtype ||
      obs.device() != Device::cpu) {
    return Status::invalid_argument(str_cat(
        "observations must be ", name(layout.observation.dtype), expected, ", got ",
        obs.defined() ? std::string(name(obs.dtype())) + obs.shape().to_string() : "nothing"));
  }
  if (r.rewards.size() != n || r.flags.size() != n) {
    return Status::invalid_argument(str_cat("rewards and flags must have ", n, " entries"));
  }
  if (layout.action.is_box()) {
    const std::size_t values = n * static_cast<std::size_t>(layout.action.dims());
    if (!r.actions.empty() || r.box_actions.size() != values) {
      return Status::invalid_argument(str_cat("box actions need room for ", values, " values (", n,
                                              " environments x ", layout.action.dims(), "), got ",
                                              r.box_actions.size(),
                                              r.actions.empty() ? "" : " and discrete actions"));
    }
  } else if (r.actions.size() != n || !r.box_actions.empty()) {
    return Status::invalid_argument(str_cat("discrete actions need room for ", n, " values, got ",
                                            r.actions.size(),
                                            r.box_actions.empty() ? "" : " and box actions"));
  }
  if (layout.finite_observations) {
    const float* values = obs.data<float>();
    for (std::int64_t i = 0; i < obs.numel(); ++i) {
      if (!std::isfinite(values[i])) {
        return Status::invalid_argument(
            str_cat("environment ", i / layout.observation.shape.numel(),
                    ": observation is not finite (observations are normalised)"));
      }
    }
  }
  for (std::size_t e = 0; e < n; ++e) {
    if (!std::isfinite(r.rewards[e]))
      return Status::invalid_argument(str_cat("environment ", e, ": reward is not finite"));
    if (!valid_step_flags(r.flags[e])) {
      return Status::invalid_argument(
          str_cat("environment ", e, ": invalid step flags ", int(r.flags[e])));
    }
  }
  return Status::ok();
}

}  // namespace seedrl
