// The ACTIONS frame of docs/protocol.md: the answer to a STEP, whose action section is the action
// space's: num_envs rows of spec.dims() values, i32 for discrete actions and branches, f32 for a
// box. Which kind a connection carries is asked here, once per frame, and nowhere in the session
// or the client: they hand over an ActionBuffer and the spec. The rest of the codec is
// protocol.cpp; hostile bytes become a refusing Verdict through wire_format.hpp's Cursor.
#include <cmath>
#include <cstring>

#include "seedrl/core/error.hpp"
#include "seedrl/transport/protocol.hpp"

#include "wire_format.hpp"

namespace seedrl::protocol {

using namespace wire;  // the codec's primitives (src/transport/wire_format.hpp)

namespace {

// Discrete actions (or rows of K branches) of `spec`, each within its action count or branch.
Verdict check_discrete(const ActionSpec& spec, std::span<const std::int32_t> actions) {
  const std::size_t k = static_cast<std::size_t>(spec.dims());
  for (std::size_t i = 0; i < actions.size(); ++i) {
    const std::int32_t size = spec.is_branched() ? spec.branches[i % k] : spec.num_actions;
    if (actions[i] < 0 || actions[i] >= size) {
      return refuse(ErrorCode::malformed,
                    spec.is_branched()
                        ? str_cat("ACTIONS frame: action ", actions[i], " of branch ", i % k,
                                  " for environment ", i / k, " is outside [0, ", size, ")")
                        : str_cat("ACTIONS frame: action ", actions[i], " for environment ", i,
                                  " is outside [0, ", size, ")"));
    }
  }
  return Verdict::ok();
}

// Box actions of `spec`: rows of D values, each finite and within its dimension's bounds.
Verdict check_box(const ActionSpec& spec, std::span<const float> actions) {
  const std::size_t dims = spec.low.size();
  for (std::size_t i = 0; i < actions.size(); ++i) {
    const std::size_t d = i % dims;
    const float a = actions[i];
    // Written so that a NaN fails as well.
    if (!(std::isfinite(a) && a >= spec.low[d] && a <= spec.high[d])) {
      return refuse(
          ErrorCode::malformed,
          str_cat("ACTIONS frame: box action ", a, " for environment ", i / dims, ", dimension ", d,
                  " is outside [", spec.low[d], ", ", spec.high[d], "]"));
    }
  }
  return Verdict::ok();
}

// `actions` is room for whole rows of `spec`'s kind (internal: the caller's buffers are wrong).
Verdict check_room(const ActionSpec& spec, ActionBuffer actions, std::size_t* num_envs) {
  const auto dims = static_cast<std::size_t>(spec.dims());
  const std::string wrong =
      dims == 0 ? "no action dimensions" : actions.mismatch(spec, actions.size() / dims);
  if (!wrong.empty())
    return refuse(ErrorCode::internal,
                  str_cat("ACTIONS frame for ", spec.to_string(), ": ", wrong));
  *num_envs = actions.size() / dims;
  return Verdict::ok();
}

}  // namespace

std::size_t actions_frame_bytes(std::uint32_t num_envs) {
  return kHeaderBytes + 4 + 4 * std::size_t{num_envs};  // count, then one i32 per environment
}

std::size_t actions_frame_bytes(std::uint32_t num_envs, const ActionSpec& spec) {
  // count, then one i32 or a row of D f32 per environment
  return kHeaderBytes + 4 + 4 * std::size_t{num_envs} * static_cast<std::size_t>(spec.dims());
}

void encode_actions(std::string& out, std::uint32_t sequence,
                    std::span<const std::int32_t> actions) {
  const std::size_t start = begin_frame(out, FrameType::actions, sequence);
  put<std::uint32_t>(out, checked_u32(actions.size(), "action count"));
  for (std::int32_t a : actions) put<std::int32_t>(out, a);
  patch_length(out, start);
}

void encode_box_actions(std::string& out, std::uint32_t sequence, std::span<const float> actions,
                        std::uint32_t dims) {
  SEEDRL_REQUIRE(dims >= 1 && actions.size() % dims == 0, "protocol: ", actions.size(),
                 " box action values do not split into rows of ", dims);
  const std::size_t start = begin_frame(out, FrameType::actions, sequence);
  put<std::uint32_t>(out, checked_u32(actions.size() / dims, "environment count"));
  for (float a : actions) put<float>(out, a);
  patch_length(out, start);
}

Verdict encode_actions(std::string& out, std::uint32_t sequence, const ActionSpec& spec,
                       ActionBuffer actions) {
  std::size_t num_envs = 0;
  if (Verdict v = check_room(spec, actions, &num_envs); !v.is_ok()) return v;
  if (spec.is_box()) {
    // The inference server clips its draws to the bounds; another endpoint might not, and the
    // actor would refuse the frame.
    if (Verdict v = check_box(spec, actions.box()); !v.is_ok()) return v;
    encode_box_actions(out, sequence, actions.box(), static_cast<std::uint32_t>(spec.dims()));
  } else {
    if (Verdict v = check_discrete(spec, actions.discrete()); !v.is_ok()) return v;
    encode_actions(out, sequence, actions.discrete());
  }
  return Verdict::ok();
}

Verdict decode_actions(std::span<const std::uint8_t> payload, std::uint32_t num_actions,
                       std::span<std::int32_t> actions) {
  Cursor in(payload, "ACTIONS");
  std::uint32_t n = 0;
  if (!in.get(&n)) return in.truncated("action count");
  if (n != actions.size()) {
    return refuse(ErrorCode::malformed,
                  str_cat("ACTIONS frame: ", n, " actions for ", actions.size(), " environments"));
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    std::int32_t a = 0;
    if (!in.get(&a)) return in.truncated("actions");
    if (a < 0 || static_cast<std::uint32_t>(a) >= num_actions) {
      return refuse(ErrorCode::malformed, str_cat("ACTIONS frame: action ", a, " for environment ",
                                                  i, " is outside [0, ", num_actions, ")"));
    }
    actions[i] = a;
  }
  if (in.remaining() != 0) return in.trailing();
  return Verdict::ok();
}

Verdict decode_actions(std::span<const std::uint8_t> payload, const ActionSpec& spec,
                       ActionBuffer actions) {
  std::size_t num_envs = 0;
  if (Verdict v = check_room(spec, actions, &num_envs); !v.is_ok()) return v;
  if (!spec.is_box()) {
    const std::span<std::int32_t> values = actions.discrete();
    // Every value below the action count (of all branches together) first; then, with
    // branches, each against its own.
    if (Verdict v = decode_actions(payload, static_cast<std::uint32_t>(spec.num_actions), values);
        !v.is_ok())
      return v;
    return spec.is_branched() ? check_discrete(spec, values) : Verdict::ok();
  }
  const std::span<float> values = actions.box();
  const std::size_t dims = static_cast<std::size_t>(spec.dims());
  Cursor in(payload, "ACTIONS");
  std::uint32_t n = 0;
  if (!in.get(&n)) return in.truncated("environment count");
  if (n != num_envs) {
    return refuse(ErrorCode::malformed, str_cat("ACTIONS frame: box actions for ", n,
                                                " environments, expected ", num_envs));
  }
  if (in.remaining() != 4 * values.size()) {
    return refuse(ErrorCode::malformed,
                  str_cat("ACTIONS frame: ", in.remaining(), " bytes of box actions; ", n,
                          " environments of ", dims, " f32 need ", 4 * values.size()));
  }
  const std::uint8_t* bytes = nullptr;
  if (!in.take(4 * values.size(), &bytes)) return in.truncated("box actions");
  for (std::size_t i = 0; i < values.size(); ++i) {
    float a;
    std::memcpy(&a, bytes + 4 * i, 4);
    values[i] = detail::to_little_endian(a);
  }
  return check_box(spec, values);
}

}  // namespace seedrl::protocol
