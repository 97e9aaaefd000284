// CardPick (env/card_pick.hpp) for the tests of legal-action masks: the game with a count of the
// illegal picks its environments make in a run, a small network and run for it, training on it,
// and the greedy play of a trained checkpoint through Policy.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/env/card_pick.hpp"
#include "seedrl/env/flatten_observation.hpp"
#include "seedrl/nn/network_options.hpp"
#include "seedrl/policy/policy.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"

namespace seedrl::test {

/// CardPick that counts the illegal picks of every environment of a run (only they score < 0).
struct CountedCardPick {
  FlattenObservation<CardPick> game;
  std::shared_ptr<std::atomic<std::int64_t>> illegal;

  TensorSpec observation_spec() const { return game.observation_spec(); }
  ActionSpec action_spec() const { return game.action_spec(); }
  std::vector<StepFieldSpec> step_fields() const { return game.step_fields(); }
  void reset(const StepRow& row) { game.reset(row); }
  StepResult step(std::int32_t action, const StepRow& row) {
    const StepResult r = game.step(action, row);
    if (r.reward < 0.0f) ++*illegal;
    return r;
  }
};

/// An MLP over CardPick's 16 observations and 8 actions.
inline nn::NetworkOptions card_network(std::int64_t hidden = 32) {
  return nn::NetworkOptions::mlp(16, 8, {hidden});
}

/// 2 actors of 8 deals, unrolls of 8, for `frames` frames.
inline LocalTrainerOptions card_pick_run(std::int64_t frames) {
  LocalTrainerOptions r;
  r.total_frames = frames;
  r.num_actors = 2;
  r.envs_per_actor = 8;
  r.server.unroll_length = 8;
  r.server.seed = 1;
  return r;
}

/// Trains `agent` on CardPick with or without its mask; the illegal picks the training made.
template <class A>
std::int64_t train_card_pick(const A& agent, bool masks, const LocalTrainerOptions& run) {
  auto illegal = std::make_shared<std::atomic<std::int64_t>>(0);
  train_locally<A, cpu::Backend>(
      agent,
      [&](std::int32_t a, std::int32_t e) {
        return CountedCardPick{FlattenObservation(CardPick(static_cast<std::uint64_t>(100 * a + e),
                                                           {.action_mask = masks})),
                               illegal};
      },
      run);
  return illegal->load();
}

struct CardPickPlay {
  double mean_return = 0.0;
  std::int64_t illegal = 0;  ///< illegal picks (each ends its episode)
};

/// `episodes` deals (seeds 50,000 + i, unseen in training) played by the checkpoint's Policy
/// (greedy unless `acting` says otherwise), with the mask where `masks`.
inline CardPickPlay play_card_pick(const std::string& checkpoint, int episodes, bool masks,
                                   PolicyOptions options = {}) {
  Policy<> policy(checkpoint, options);
  CardPickPlay out;
  const Tensor observation = Tensor::zeros({2, 8});
  const std::vector<Tensor> mask_batches{Tensor::zeros({1, 8}, DType::u8)};
  const std::vector<Tensor> no_fields;
  for (int e = 0; e < episodes; ++e) {
    CardPick game(50'000 + static_cast<std::uint64_t>(e), {.action_mask = masks});
    const std::vector<StepFieldSpec> specs = game.step_fields();
    const StepRow row(observation, specs, masks ? mask_batches : no_fields, 0);
    game.reset(row);
    policy.reset();
    for (bool over = false; !over;) {
      const std::vector<std::int32_t> action =
          policy.act({observation.reshape({1, 16}), masks ? mask_batches : no_fields});
      const StepResult r = game.step(action[0], row);
      out.mean_return += r.reward;
      out.illegal += r.reward < 0.0f;
      over = r.terminated || r.truncated;
    }
  }
  out.mean_return /= episodes;
  return out;
}

}  // namespace seedrl::test
