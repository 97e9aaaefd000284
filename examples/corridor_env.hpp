// corridor_env.hpp: a complete seedrl environment, commented line by line. It is the tutorial
// for writing your own (docs/environments.md walks through it); copy it and change the physics.
//
// The task: an agent stands in a corridor of `length` cells and must walk to the far end.
//   actions:      0 = step left, 1 = step right
//   observation:  one-hot position, f32 [length]
//   reward:       +1 on reaching the last cell, -0.01 for every other step
//   episode end:  reaching the goal *terminates* the episode (there is no future);
//                 running out of time (4 x length steps) *truncates* it (the agent could still
//                 have arrived: the learner bootstraps from the value of where it stood).
#pragma once

#include <algorithm>
#include <cstdint>

// An environment needs only the environment header (Tensor, TensorSpec, ActionSpec, StepResult)
// and whatever it uses itself; the seeded Rng makes it reproducible.
#include "seedrl/core/random.hpp"
#include "seedrl/env/environment.hpp"

namespace corridor {

// Settings live in a plain struct: easy to fill from command-line options.
struct CorridorOptions {
  std::int32_t length = 8;    // cells, the agent starts in cell 0... or a random one
  bool random_start = false;  // start anywhere in the first half instead of cell 0
};

class CorridorEnv {
 public:
  // Each environment instance gets its own seed: actors create many of them.
  explicit CorridorEnv(std::uint64_t seed = 0, const CorridorOptions& options = {})
      : options_(options), rng_(seed) {
    // Bad settings throw seedrl::Error with a message that names the setting.
    SEEDRL_REQUIRE(options.length >= 2, "CorridorOptions.length must be >= 2, got ",
                   options.length);
  }

  // The shape and element type of one observation. The actor allocates one row per environment
  // of this spec, and reset()/step() write into it: observations are never copied on the actor.
  seedrl::TensorSpec observation_spec() const { return {{options_.length}, seedrl::DType::f32}; }

  // Discrete actions are numbered 0 .. num_actions - 1.
  seedrl::ActionSpec action_spec() const { return {2}; }

  // Start a new episode and write its first observation.
  void reset(const seedrl::Tensor& observation) {
    position_ =
        options_.random_start
            ? static_cast<std::int32_t>(rng_.below(static_cast<std::uint64_t>(options_.length / 2)))
            : 0;
    steps_ = 0;
    write(observation);
  }

  // Apply the action, write the next observation, and say what happened.
  seedrl::StepResult step(std::int32_t action, const seedrl::Tensor& observation) {
    // Actions come from the network: anything else is a bug worth an error, not a guess.
    SEEDRL_REQUIRE(action == 0 || action == 1, "CorridorEnv: action ", action,
                   " out of range [0, 2)");
    position_ = std::clamp(position_ + (action == 1 ? 1 : -1), 0, options_.length - 1);
    ++steps_;
    write(observation);

    seedrl::StepResult result;
    if (position_ == options_.length - 1) {
      result.reward = 1.0f;
      result.terminated = true;  // a terminal state: nothing follows, no bootstrap
    } else {
      result.reward = -0.01f;
      result.truncated = steps_ >= 4 * options_.length;  // a time limit: bootstrap from here
    }
    // After either, the actor calls reset() before the next step().
    return result;
  }

 private:
  void write(const seedrl::Tensor& observation) const {
    // Check what the caller gave us; then write through the typed pointer.
    seedrl::require_observation(observation, observation_spec(), "CorridorEnv");
    float* cells = observation.data<float>();
    std::fill(cells, cells + options_.length, 0.0f);
    cells[position_] = 1.0f;
  }

  CorridorOptions options_;
  seedrl::Rng rng_;
  std::int32_t position_ = 0;
  std::int32_t steps_ = 0;
};

// The concept check: a compile-time proof that seedrl can use this type as an environment.
static_assert(seedrl::Environment<CorridorEnv>);

}  // namespace corridor
