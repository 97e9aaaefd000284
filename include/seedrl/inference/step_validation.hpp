// What a step must be before it may reach an inference batch: its shapes against the server's
// step spec (the observations, the actions' room, every declared field), and its values (finite
// rewards, valid flags, finite f32 observations and fields: a NaN would reach the network, the
// unrolls and the learner's loss). A peer's bad step is
// answered with Status::invalid_argument naming the part; it never disturbs the other actors
// (inference/inference_server.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seedrl/acting/inference_endpoint.hpp"
#include "seedrl/agent/agent.hpp"
#include "seedrl/core/status.hpp"
#include "seedrl/core/step_flags.hpp"
#include "seedrl/core/tensor_spec.hpp"
#include "seedrl/env/environment.hpp"

namespace seedrl {

/// What a server accepts.
struct StepRequirements {
  const StepSpec& spec;
  std::int32_t max_slots = 0;
};

/// The index of the first value of `t` (f32) that is not finite, or -1. One pass that compilers
/// vectorise, then a search only where there is something to find.
inline std::int64_t first_non_finite_f32(const Tensor& t) {
  const float* values = t.data<float>();
  const std::int64_t n = t.numel();
  std::uint32_t any = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, values + i, sizeof bits);
    any |= static_cast<std::uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
  }
  if (any == 0) return -1;
  for (std::int64_t i = 0; i < n; ++i)
    if (!std::isfinite(values[i])) return i;
  return -1;
}

/// Throws naming `who` unless `spec` is valid and `agent`'s network acts on its observations and
/// actions (a box only for a BoxAgent with a Gaussian head of as many dimensions).
template <Agent A>
void require_agent_serves(const A& agent, const StepSpec& spec, std::string_view who) {
  spec.validate(who);
  const nn::NetworkOptions& network = agent.network_config();
  SEEDRL_REQUIRE(spec.observation.shape == network.observation_shape, who, ": observations ",
                 spec.observation.to_string(), " do not match the network's observation shape ",
                 network.observation_shape);
  SEEDRL_REQUIRE(network.takes_observations(spec.observation.dtype), who, ": observations ",
                 spec.observation.to_string(), " but the network's torso takes ",
                 network.torso == nn::Torso::mlp ? "f32 only" : "f32 or u8");
  const ActionSpec& action = spec.action;
  if (action.is_box()) {
    SEEDRL_REQUIRE(BoxAgent<A>, who, ": actions ", action.to_string(), " but the agent '", A::kName,
                   "' acts on discrete actions only");
    SEEDRL_REQUIRE(action.dims() == network.action_dims, who, ": actions ", action.to_string(),
                   " but the network's Gaussian head has ", network.action_dims, " dimensions");
  } else {
    SEEDRL_REQUIRE(action.num_actions == network.num_actions, who, ": ", action.num_actions,
                   " actions but the network has ", network.num_actions,
                   network.box_actions() ? " (it has a Gaussian head)" : "");
    network.require_branches_of(action, who);
  }
}

/// Ok, or invalid_argument saying what is wrong with `r`.
inline Status validate_step(const StepRequest& r, const StepRequirements& layout) {
  const Connection& c = r.connection;
  if (!c.connected() || c.first_slot + c.num_envs > layout.max_slots)
    return Status::invalid_argument("step on an unconnected actor");
  const auto n = static_cast<std::size_t>(c.num_envs);
  const StepSpec& spec = layout.spec;
  const StepRecord& step = r.step;
  auto wrong_tensor = [&](const Tensor& t, const TensorSpec& want,
                          std::string_view what) -> std::optional<Status> {
    const Shape expected = want.shape.prepend({c.num_envs});
    if (t.defined() && t.shape() == expected && t.dtype() == want.dtype &&
        t.device() == Device::cpu)
      return std::nullopt;
    return Status::invalid_argument(
        str_cat(what, " must be ", name(want.dtype), expected, " on the CPU, got ",
                t.defined() ? std::string(name(t.dtype())) + t.shape().to_string() : "nothing"));
  };
  if (auto wrong = wrong_tensor(step.observations, spec.observation, "observations")) return *wrong;
  if (step.fields.size() != spec.fields.size()) {
    return Status::invalid_argument(str_cat("the step has ", step.fields.size(),
                                            " declared fields; this server's steps have ",
                                            StepSpec::fields_to_string(spec.fields)));
  }
  for (std::size_t k = 0; k < spec.fields.size(); ++k) {
    if (auto wrong = wrong_tensor(step.fields[k], spec.fields[k].spec,
                                  str_cat("step field '", spec.fields[k].name, "'")))
      return *wrong;
  }
  if (step.rewards.size() != n || step.flags.size() != n) {
    return Status::invalid_argument(str_cat("rewards and flags must have ", n, " entries"));
  }
  if (std::string wrong = r.actions.mismatch(spec.action, n); !wrong.empty())
    return Status::invalid_argument(std::move(wrong));
  auto not_finite = [&](const Tensor& t, const TensorSpec& want,
                        std::string_view what) -> std::optional<Status> {
    if (want.dtype != DType::f32) return std::nullopt;
    const std::int64_t bad = first_non_finite_f32(t);
    if (bad < 0) return std::nullopt;
    const std::int64_t per_env = std::max<std::int64_t>(want.shape.numel(), 1);
    return Status::invalid_argument(str_cat("environment ", bad / per_env, ": ", what, " holds ",
                                            t.data<float>()[bad], " at element ", bad % per_env,
                                            "; values must be finite"));
  };
  if (auto bad = not_finite(step.observations, spec.observation, "its observation")) return *bad;
  for (std::size_t k = 0; k < spec.fields.size(); ++k) {
    if (auto bad = not_finite(step.fields[k], spec.fields[k].spec,
                              str_cat("its step field '", spec.fields[k].name, "'")))
      return *bad;
  }
  // A legal-action mask allows an action in every branch, except at an episode's last step (a
  // full board) and at a waiting seat's step, whose actions nobody plays.
  if (const int k = spec.field_index(kActionMaskField); k >= 0) {
    const Tensor& masks = step.fields[static_cast<std::size_t>(k)];
    const auto width = static_cast<std::size_t>(spec.action.num_actions);
    const std::uint8_t* m = masks.data<std::uint8_t>();
    const std::vector<std::int64_t> sizes = spec.action.branch_sizes();
    for (std::size_t e = 0; e < n; ++e) {
      if (is_last(step.flags[e]) || is_waiting(step.flags[e])) continue;
      std::size_t offset = 0;
      for (std::size_t b = 0; b < sizes.size(); ++b) {
        const auto size = static_cast<std::size_t>(sizes[b]);
        bool any = false;
        for (std::size_t a = offset; a < offset + size && !any; ++a) any = m[e * width + a] != 0;
        offset += size;
        if (!any)
          return Status::invalid_argument(
              str_cat("environment ", e, ": its ", kActionMaskField, " allows no action",
                      sizes.size() > 1 ? str_cat(" in branch ", b) : std::string()));
      }
    }
  }
  for (std::size_t e = 0; e < n; ++e) {
    if (!std::isfinite(step.rewards[e]))
      return Status::invalid_argument(str_cat("environment ", e, ": reward is not finite"));
    if (!valid_step_flags(step.flags[e])) {
      return Status::invalid_argument(
          str_cat("environment ", e, ": invalid step flags ", int(step.flags[e])));
    }
  }
  return Status::ok();
}

}  // namespace seedrl
