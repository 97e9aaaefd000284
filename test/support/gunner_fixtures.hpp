// Gunner (env/gunner.hpp) for the tests of action branches: the game with a count of the illegal
// actions its environments take in a run, a network and run for it, training on it, and the
// greedy play of a trained checkpoint through Policy.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/env/gunner.hpp"
#include "seedrl/nn/network_options.hpp"
#include "seedrl/policy/policy.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"

namespace seedrl::test {

/// Gunner that counts the illegal actions of every environment of a run.
struct CountedGunner {
  Gunner game;
  std::shared_ptr<std::atomic<std::int64_t>> illegal;

  TensorSpec observation_spec() const { return game.observation_spec(); }
  ActionSpec action_spec() const { return game.action_spec(); }
  std::vector<StepFieldSpec> step_fields() const { return game.step_fields(); }
  void reset(const StepRow& row) { game.reset(row); }
  StepResult step(std::span<const std::int32_t> actions, const StepRow& row) {
    const std::int64_t before = game.illegal_actions();
    const StepResult r = game.step(actions, row);
    *illegal += game.illegal_actions() - before;
    return r;
  }
};

/// An MLP over Gunner's 16 observations and its branches of 3 and 2 actions.
inline nn::NetworkOptions gunner_network(std::int64_t hidden = 64) {
  return nn::NetworkOptions::mlp(16, 5, {hidden}).branches({3, 2});
}

/// 2 actors of 8 games, unrolls of 20, for `frames` frames.
inline LocalTrainerOptions gunner_run(std::int64_t frames) {
  LocalTrainerOptions r;
  r.total_frames = frames;
  r.num_actors = 2;
  r.envs_per_actor = 8;
  r.server.unroll_length = 20;
  r.server.seed = 1;
  return r;
}

/// Trains `agent` on Gunner with or without its mask; the illegal actions the training took.
template <class A>
std::int64_t train_gunner(const A& agent, bool masks, const LocalTrainerOptions& run) {
  auto illegal = std::make_shared<std::atomic<std::int64_t>>(0);
  train_locally<A, cpu::Backend>(
      agent,
      [&](std::int32_t a, std::int32_t e) {
        return CountedGunner{
            Gunner(static_cast<std::uint64_t>(100 * a + e), {.action_mask = masks}), illegal};
      },
      run);
  return illegal->load();
}

struct GunnerPlay {
  double mean_return = 0.0;
  std::int64_t illegal = 0;
};

/// `episodes` games (seeds 50,000 + i, unseen in training) played by the checkpoint's Policy
/// (greedy unless `options` say otherwise), with the mask where `masks`.
inline GunnerPlay play_gunner(const std::string& checkpoint, int episodes, bool masks,
                              PolicyOptions options = {}) {
  Policy<> policy(checkpoint, options);
  GunnerPlay out;
  const Tensor observation = Tensor::zeros({16});
  const std::vector<Tensor> mask_batches{Tensor::zeros({1, 5}, DType::u8)};
  const std::vector<Tensor> no_fields;
  for (int e = 0; e < episodes; ++e) {
    Gunner game(50'000 + static_cast<std::uint64_t>(e), {.action_mask = masks});
    const std::vector<StepFieldSpec> specs = game.step_fields();
    const StepRow row(observation, specs, masks ? mask_batches : no_fields, 0);
    game.reset(row);
    policy.reset();
    for (bool over = false; !over;) {
      const std::vector<std::int32_t> actions =
          policy.act({observation.reshape({1, 16}), masks ? mask_batches : no_fields});
      const StepResult r = game.step(actions, row);
      out.mean_return += r.reward;
      over = r.terminated || r.truncated;
    }
    out.illegal += game.illegal_actions();
  }
  out.mean_return /= episodes;
  return out;
}

}  // namespace seedrl::test
