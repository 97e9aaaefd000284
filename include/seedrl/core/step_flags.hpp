// Step flags: how an environment step is marked on the wire, in unrolls and in the kernels.
//
// kFirst marks the first observation of an episode (after a reset; reward 0); kTerminated /
// kTruncated mark its last observation. The action chosen at a last step is not executed: the
// actor resets instead, so the transition from a last step to the next first step is a boundary,
// not experience. A step is never both first and last.
//
// kWaiting (games of several players, env/players.hpp) marks a seat that does not act at this
// step: its row is answered with an action nobody plays, and the server keeps nothing of it (no
// experience, no episode figures, no recurrent state). It is never combined with another flag.
#pragma once

#include <cstdint>

#include "seedrl/core/host_device.hpp"

namespace seedrl {

namespace step_flags {
inline constexpr std::uint8_t kFirst = 1;
inline constexpr std::uint8_t kTerminated = 2;
inline constexpr std::uint8_t kTruncated = 4;
inline constexpr std::uint8_t kWaiting = 8;
inline constexpr std::uint8_t kAll = kFirst | kTerminated | kTruncated | kWaiting;
}  // namespace step_flags

SEEDRL_HOST_DEVICE inline bool is_first(std::uint8_t flags) {
  return (flags & step_flags::kFirst) != 0;
}
SEEDRL_HOST_DEVICE inline bool is_last(std::uint8_t flags) {
  return (flags & (step_flags::kTerminated | step_flags::kTruncated)) != 0;
}
SEEDRL_HOST_DEVICE inline bool is_waiting(std::uint8_t flags) {
  return (flags & step_flags::kWaiting) != 0;
}
/// Flags a well-behaved sender can produce: known bits only, not both first and last, and
/// waiting alone.
SEEDRL_HOST_DEVICE inline bool valid_step_flags(std::uint8_t flags) {
  return (flags & ~step_flags::kAll) == 0 && !(is_first(flags) && is_last(flags)) &&
         (!is_waiting(flags) || flags == step_flags::kWaiting);
}

}  // namespace seedrl
