// play_match: a trained policy against a scripted player in games of two players (issue 37).
//
// The policy acts greedily: the most likely action its mask allows (the network's "logits"; V-trace
// and PPO agents). It plays half the games as player 0 (the first to move, in a turn-based game)
// and half as player 1; the tallies say how it did from each side. It computes on the calling
// thread alone, flushing denormals (as inference does), and restores the thread's settings after:
// one observation at a time gains nothing from a thread team, and waking one for every move
// cost a loaded 2-core machine 27 ms a move.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "seedrl/acting/players_actor.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/core/float_mode.hpp"
#include "seedrl/league/league.hpp"
#include "seedrl/nn/network.hpp"

namespace seedrl {

struct MatchResult {
  GameTally as_first, as_second;  ///< the policy's games as player 0, and as player 1
  GameTally total() const {
    return {as_first.wins + as_second.wins, as_first.draws + as_second.draws,
            as_first.losses + as_second.losses};
  }
};

/// Plays `games` games of `game` (reset before each) between the network of `config` with
/// parameter values `values` (flat, on the CPU) and `opponent`.
template <PlayersEnvironment Game>
MatchResult play_match(const nn::NetworkOptions& config, const Tensor& values, Game game,
                       const ScriptedPlayer<Game>& opponent, int games, std::uint64_t seed) {
  SEEDRL_REQUIRE(game.players() == 2, "play_match: games of two players, got ", game.players());
  SEEDRL_REQUIRE(config.lstm_size == 0, "play_match: a feed-forward network");
  const int threads = cpu::num_threads();
  const bool flushing = flush_denormals_enabled();
  cpu::set_num_threads(1);
  set_flush_denormals(true);
  struct Restore {
    int threads;
    bool flushing;
    ~Restore() {
      cpu::set_num_threads(threads);
      set_flush_denormals(flushing);
    }
  } restore{threads, flushing};
  nn::Network<cpu::Backend> network(config);
  network.parameters().values().copy_from(values);
  network.parameters().bump_version();
  const StepSpec spec{game.observation_spec(), game.action_spec(), game.step_fields()};
  const int mask_field = spec.field_index(kActionMaskField);
  Tensor observation = Tensor::zeros(spec.observation.shape.prepend({1}), spec.observation.dtype);
  std::vector<Tensor> fields;
  for (const StepFieldSpec& f : spec.fields)
    fields.push_back(Tensor::zeros(f.spec.shape.prepend({1}), f.spec.dtype));
  const StepRow row(observation[0], spec.fields, fields, 0);
  const Tensor resets = Tensor::zeros({1, 1}, DType::u8);
  Rng rng(seed);
  MatchResult result;
  for (int g = 0; g < games; ++g) {
    const int policy_player = g % 2;
    game.reset();
    PlayersStepResult step;
    float policy_return = 0.0f;
    while (!step.episode_over()) {
      std::int32_t actions[2] = {0, 0};
      for (int p = 0; p < 2; ++p) {
        if (!game.acts(p)) continue;
        if (p != policy_player) {
          actions[p] = opponent(game, p, rng);
          continue;
        }
        game.observe(p, row);
        const nn::NetworkOutputs& out = network.forward(
            observation.reshape(spec.observation.shape.prepend({1, 1})), {}, resets);
        const float* logits = out.logits.template data<float>();
        const std::uint8_t* mask =
            mask_field >= 0 ? fields[static_cast<std::size_t>(mask_field)].data<std::uint8_t>()
                            : nullptr;
        float best = -std::numeric_limits<float>::infinity();
        for (std::int32_t a = 0; a < spec.action.num_actions; ++a) {
          if ((mask == nullptr || mask[a]) && logits[a] > best) {
            best = logits[a];
            actions[p] = a;
          }
        }
      }
      step = game.step(actions);
      policy_return += step.rewards[static_cast<std::size_t>(policy_player)];
    }
    GameTally& t = policy_player == 0 ? result.as_first : result.as_second;
    (policy_return > 0.0f ? t.wins : policy_return < 0.0f ? t.losses : t.draws) += 1;
  }
  return result;
}

}  // namespace seedrl
