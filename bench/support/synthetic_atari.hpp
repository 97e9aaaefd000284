// SyntheticAtari: an environment of Atari's shape for benchmarks (4 x 84 x 84 u8 frames, 18
// actions, an episode every 2,000 steps), whose own cost is a 28 KB frame shift per step: what a
// pipeline of Atari's sizes costs without an emulator.
#pragma once

#include <cstdint>
#include <cstring>

#include "seedrl/core/random.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/core/tensor_spec.hpp"
#include "seedrl/env/environment.hpp"

namespace seedrl::bench {

class SyntheticAtari {
 public:
  explicit SyntheticAtari(std::uint64_t seed) : rng_(seed) {}
  TensorSpec observation_spec() const { return {{4, 84, 84}, DType::u8}; }
  ActionSpec action_spec() const { return ActionSpec(18); }
  void reset(const Tensor& observation) {
    steps_ = 0;
    std::memset(observation.raw_data(), 0, observation.bytes());
  }
  StepResult step(std::int32_t action, const Tensor& observation) {
    // The newest of the 4 frames replaces the oldest; a few pixels change.
    auto* frames = observation.data<std::uint8_t>();
    constexpr std::size_t kFrame = 84 * 84;
    std::memmove(frames, frames + kFrame, 3 * kFrame);
    std::uint8_t* newest = frames + 3 * kFrame;
    for (int i = 0; i < 16; ++i)
      newest[rng_.below(kFrame)] = static_cast<std::uint8_t>(rng_.below(256) ^ action);
    StepResult r;
    r.reward = rng_.below(50) == 0 ? 1.0f : 0.0f;
    r.terminated = ++steps_ >= 2000;
    if (r.terminated) reset(observation);
    return r;
  }

 private:
  Rng rng_;
  int steps_ = 0;
};

}  // namespace seedrl::bench
