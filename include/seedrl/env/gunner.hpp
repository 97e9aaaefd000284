// Gunner: a game of two action branches that must be coordinated, with a legal-action mask per
// branch (issue 36).
//
// Rules: a gun moves along a track of `width` cells below a target. Every step the player chooses
// a move (branch 0: 0 left, 1 stay, 2 right) and a trigger (branch 1: 0 hold, 1 fire), together.
// The gun moves first; then, if it fires, the shot hits when the gun is under the target: +1, and
// a new target appears at a random cell other than the gun's; a shot that misses scores
// `miss_reward` (-0.1). A gun that fired reloads during the next step (it cannot fire then). After
// the shot, a target that was not hit drifts one cell left or right with probability `drift`
// each (staying on the track). An episode lasts `steps` steps (then it is truncated: the game
// itself never ends).
//
// Illegal actions: moving left from cell 0, right from the last cell, and firing while reloading.
// Each scores `illegal_reward` (-1) and does nothing (the gun stays; no shot); the step goes on
// with the other branch's action. So scoring needs both branches at once: move under the target
// and fire in the same step, without firing while reloading.
//
// Observation f32 [2 width + 2]: the gun's cell one-hot, the target's cell one-hot, 1 while
// reloading, and the fraction of the episode left. Step field "action_mask" u8 [5] (the branches
// side by side: left, stay, right, hold, fire): 0 where illegal (GunnerOptions::action_mask
// false: not declared).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "seedrl/core/random.hpp"
#include "seedrl/env/environment.hpp"

namespace seedrl {

struct GunnerOptions {
  std::int32_t width = 7;
  std::int32_t steps = 40;
  float drift = 0.25f;  ///< the probability that the target moves left, and that it moves right
  float miss_reward = -0.1f;
  float illegal_reward = -1.0f;
  bool action_mask = true;  ///< declare the mask (false: the same game for agents without one)
};

class Gunner {
 public:
  static constexpr std::int32_t kLeft = 0, kStay = 1, kRight = 2;  // branch 0
  static constexpr std::int32_t kHold = 0, kFire = 1;              // branch 1

  explicit Gunner(std::uint64_t seed = 0, const GunnerOptions& options = {})
      : options_(options), rng_(seed) {
    SEEDRL_REQUIRE(options.width >= 2 && options.width <= 64, "GunnerOptions.width must be in ",
                   "[2, 64], got ", options.width);
    SEEDRL_REQUIRE(options.steps >= 1, "GunnerOptions.steps must be >= 1, got ", options.steps);
    SEEDRL_REQUIRE(options.drift >= 0.0f && options.drift <= 0.5f,
                   "GunnerOptions.drift must be in [0, 0.5], got ", options.drift);
  }

  TensorSpec observation_spec() const { return {{2 * options_.width + 2}, DType::f32}; }
  ActionSpec action_spec() const { return ActionSpec::branched({3, 2}); }
  std::vector<StepFieldSpec> step_fields() const {
    if (!options_.action_mask) return {};
    return {{kActionMaskField, {{5}, DType::u8}}};
  }

  void reset(const StepRow& row) {
    gun_ = static_cast<std::int32_t>(rng_.below(static_cast<std::uint64_t>(options_.width)));
    respawn();
    reloading_ = false;
    left_ = options_.steps;
    write(row);
  }

  StepResult step(std::span<const std::int32_t> actions, const StepRow& row) {
    SEEDRL_REQUIRE(actions.size() == 2 && actions[0] >= 0 && actions[0] < 3 && actions[1] >= 0 &&
                       actions[1] < 2,
                   "Gunner: actions are a move in [0, 3) and a trigger in [0, 2), got ",
                   actions.size(), " values");
    SEEDRL_REQUIRE(left_ > 0, "Gunner: step after the episode ended; call reset()");
    StepResult result;
    const std::int32_t move = actions[0] - 1;  // -1, 0 or +1
    if (gun_ + move < 0 || gun_ + move >= options_.width) {
      ++illegal_;
      result.reward += options_.illegal_reward;
    } else {
      gun_ += move;
    }
    const bool fire = actions[1] == kFire;
    bool hit = false;
    if (fire && reloading_) {
      ++illegal_;
      result.reward += options_.illegal_reward;
    } else if (fire) {
      hit = gun_ == target_;
      result.reward += hit ? 1.0f : options_.miss_reward;
      hits_ += hit ? 1 : 0;
    }
    reloading_ = fire && !reloading_;
    if (hit) {
      respawn();
    } else {
      const double u = rng_.uniform();
      const std::int32_t drift = u < options_.drift ? -1 : u < 2 * options_.drift ? 1 : 0;
      if (target_ + drift >= 0 && target_ + drift < options_.width) target_ += drift;
    }
    result.truncated = --left_ == 0;
    write(row);
    return result;
  }

  /// What a player who chases the target plays: move towards it, fire when the move ends under
  /// it and the gun is loaded (the expert the results compare with).
  std::vector<std::int32_t> chase() const {
    const std::int32_t move = target_ < gun_ ? kLeft : target_ > gun_ ? kRight : kStay;
    const std::int32_t after = gun_ + move - 1;
    return {move, after == target_ && !reloading_ ? kFire : kHold};
  }

  std::int32_t gun() const { return gun_; }
  std::int32_t target() const { return target_; }
  bool reloading() const { return reloading_; }
  /// Illegal actions (each branch's counts) and hits since construction.
  std::int64_t illegal_actions() const { return illegal_; }
  std::int64_t hits() const { return hits_; }

 private:
  void respawn() {
    const auto others = static_cast<std::uint64_t>(options_.width - 1);
    target_ = static_cast<std::int32_t>(rng_.below(others));
    if (target_ >= gun_) ++target_;  // uniform over the cells other than the gun's
  }

  void write(const StepRow& row) const {
    require_observation(row.observation(), observation_spec(), "Gunner");
    float* obs = row.observation().data<float>();
    const auto w = static_cast<std::size_t>(options_.width);
    std::fill(obs, obs + 2 * w + 2, 0.0f);
    obs[static_cast<std::size_t>(gun_)] = 1.0f;
    obs[w + static_cast<std::size_t>(target_)] = 1.0f;
    obs[2 * w] = reloading_ ? 1.0f : 0.0f;
    obs[2 * w + 1] = static_cast<float>(left_) / static_cast<float>(options_.steps);
    if (!options_.action_mask) return;
    std::uint8_t* mask = row.field(kActionMaskField).data<std::uint8_t>();
    mask[kLeft] = gun_ > 0 ? 1 : 0;
    mask[kStay] = 1;
    mask[kRight] = gun_ < options_.width - 1 ? 1 : 0;
    mask[3 + kHold] = 1;
    mask[3 + kFire] = reloading_ ? 0 : 1;
  }

  GunnerOptions options_;
  Rng rng_;
  std::int32_t gun_ = 0, target_ = 1, left_ = 0;
  bool reloading_ = false;
  std::int64_t illegal_ = 0, hits_ = 0;
};

static_assert(Environment<Gunner> && FieldEnvironment<Gunner> && BranchedEnvironment<Gunner>);

}  // namespace seedrl
