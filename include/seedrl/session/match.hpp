// Matches in games of two players (issue 37): any two players, scripted, a trained policy or a
// person, play a series of games from both sides.
//
// - PlayerView: one player's view of a game (its observation and step fields, the legal-action
//   mask among them), in tensors of one row, as an agent sees it.
// - random_legal_player: a uniformly random move among those the mask allows.
// - network_player, policy_player: a trained agent's greedy move, the most likely action its mask
//   allows (the network's "logits": V-trace and PPO agents), or as the checkpoint's Policy acts.
// - play_games: a series between two players, the first taking side 0 (the first to move, in a
//   turn-based game) in even games and side 1 in odd ones; the tallies are the first player's.
// - play_match: a network's greedy policy against a scripted player. It computes on the calling
//   thread alone, flushing denormals (as inference does), and restores the thread's settings
//   after: one observation at a time gains nothing from a thread team, and waking one for every
//   move cost a loaded 2-core machine 27 ms a move.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "seedrl/acting/players_actor.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/core/float_mode.hpp"
#include "seedrl/league/league.hpp"
#include "seedrl/nn/network.hpp"
#include "seedrl/policy/policy.hpp"

namespace seedrl {

struct MatchResult {
  GameTally as_first, as_second;  ///< the player's games from side 0, and from side 1
  GameTally total() const {
    return {as_first.wins + as_second.wins, as_first.draws + as_second.draws,
            as_first.losses + as_second.losses};
  }
};

/// One player's view of a game in tensors of one row: observation [1, ...] and each declared step
/// field [1, ...], as Policy::act and a network's forward pass take them.
template <PlayersEnvironment Game>
class PlayerView {
 public:
  explicit PlayerView(const Game& game)
      : spec_{game.observation_spec(), game.action_spec(), game.step_fields()},
        observation_(Tensor::zeros(spec_.observation.shape.prepend({1}), spec_.observation.dtype)),
        mask_field_(spec_.field_index(kActionMaskField)) {
    for (const StepFieldSpec& f : spec_.fields)
      fields_.push_back(Tensor::zeros(f.spec.shape.prepend({1}), f.spec.dtype));
  }
  PlayerView(const PlayerView&) = delete;
  PlayerView& operator=(const PlayerView&) = delete;

  /// Fills the view with what `player` sees of `game` now.
  void observe(const Game& game, int player) {
    game.observe(player, StepRow(observation_[0], spec_.fields, fields_, 0));
  }
  const StepSpec& spec() const { return spec_; }
  const Tensor& observation() const { return observation_; }
  const std::vector<Tensor>& fields() const { return fields_; }
  PolicyInput input() const { return PolicyInput(observation_, fields_); }
  /// Whether the last observe() allows `action` (every action is allowed where no mask is
  /// declared; none outside [0, actions)).
  bool allows(std::int32_t action) const {
    if (action < 0 || action >= spec_.action.num_actions) return false;
    return mask_field_ < 0 ||
           fields_[static_cast<std::size_t>(mask_field_)].data<std::uint8_t>()[action] != 0;
  }

 private:
  StepSpec spec_;
  Tensor observation_;
  std::vector<Tensor> fields_;
  int mask_field_ = -1;
};

/// A uniformly random move among those `player`'s mask allows.
template <PlayersEnvironment Game>
ScriptedPlayer<Game> random_legal_player() {
  return [](const Game& game, int player, Rng& rng) {
    // One view per thread (actors' threads share the player), remade for a game of other sizes.
    thread_local std::unique_ptr<PlayerView<Game>> view;
    if (!view || view->spec().observation != game.observation_spec() ||
        view->spec().action != game.action_spec())
      view = std::make_unique<PlayerView<Game>>(game);
    view->observe(game, player);
    thread_local std::vector<std::int32_t> legal;
    legal.clear();
    for (std::int32_t a = 0; a < view->spec().action.num_actions; ++a)
      if (view->allows(a)) legal.push_back(a);
    SEEDRL_REQUIRE(!legal.empty(), "random_legal_player: player ", player,
                   " may make no move (is it its turn?)");
    return legal[static_cast<std::size_t>(rng.below(legal.size()))];
  };
}

/// The greedy move of the network of `config` with parameter values `values` (flat, on the CPU):
/// the highest of its logits that the mask allows. The player holds its own copy of the network;
/// its copies share it (not thread-safe: one thread plays it).
template <PlayersEnvironment Game>
ScriptedPlayer<Game> network_player(const nn::NetworkOptions& config, const Tensor& values,
                                    const Game& game) {
  SEEDRL_REQUIRE(config.lstm_size == 0, "network_player: a feed-forward network");
  SEEDRL_REQUIRE(config.policy_value_heads, "network_player: a network with policy logits");
  struct State {
    nn::Network<cpu::Backend> network;
    PlayerView<Game> view;
    Tensor resets = Tensor::zeros({1, 1}, DType::u8);
    State(const nn::NetworkOptions& c, const Game& g) : network(c), view(g) {}
  };
  auto state = std::make_shared<State>(config, game);
  state->network.parameters().values().copy_from(values);
  state->network.parameters().bump_version();
  return [state](const Game& g, int player, Rng&) {
    PlayerView<Game>& view = state->view;
    view.observe(g, player);
    const Shape rows = view.spec().observation.shape.prepend({1, 1});
    const nn::NetworkOutputs& out =
        state->network.forward(view.observation().reshape(rows), {}, state->resets);
    const float* logits = out.logits.template data<float>();
    std::int32_t best_action = 0;
    float best = -std::numeric_limits<float>::infinity();
    for (std::int32_t a = 0; a < view.spec().action.num_actions; ++a) {
      if (view.allows(a) && logits[a] > best) {
        best = logits[a];
        best_action = a;
      }
    }
    return best_action;
  };
}

/// The move of a checkpoint's Policy (as it acts: greedy for V-trace and PPO, unless its
/// PolicyOptions say otherwise), given its view with the mask. `policy` must outlive the player.
template <PlayersEnvironment Game, nn::Backend B>
ScriptedPlayer<Game> policy_player(Policy<B>& policy, const Game& game) {
  auto view = std::make_shared<PlayerView<Game>>(game);
  SEEDRL_REQUIRE(policy.network_config().observation_shape == view->spec().observation.shape,
                 "policy_player: ", policy.checkpoint(), " holds a network for observations ",
                 policy.network_config().observation_shape, ", the game gives ",
                 view->spec().observation.shape, " (another game?)");
  SEEDRL_REQUIRE(policy.action_spec() == view->spec().action,
                 "policy_player: ", policy.checkpoint(), " acts on ",
                 policy.action_spec().to_string(), ", the game on ",
                 view->spec().action.to_string());
  // A recurrent policy's state would run on from one game into the next.
  SEEDRL_REQUIRE(policy.network_config().lstm_size == 0, "policy_player: ", policy.checkpoint(),
                 " holds a recurrent network; games are played by feed-forward ones");
  return [&policy, view](const Game& g, int player, Rng&) {
    view->observe(g, player);
    std::int32_t action = 0;
    policy.act(view->input(), std::span<std::int32_t>(&action, 1));
    return action;
  };
}

/// Watches a series: after each game's reset (`step` nullptr) and after each step of game `game`,
/// in which the first player holds side `side`.
template <class Game>
using MatchWatcher =
    std::function<void(const Game& g, int game, int side, const PlayersStepResult* step)>;

/// Plays `games` games of `game` (reset before each) between `first` and `second`: `first` takes
/// side (g + first_side) % 2 in game g. The tallies are `first`'s. The first `opening_moves` steps
/// of every game are uniformly random legal moves, whoever makes them, so that two deterministic
/// players meet more than one game a side. The players and the openings draw their random numbers
/// from one Rng seeded with `seed`.
template <PlayersEnvironment Game>
MatchResult play_games(Game game, const std::type_identity_t<ScriptedPlayer<Game>>& first,
                       const std::type_identity_t<ScriptedPlayer<Game>>& second, int games,
                       std::uint64_t seed,
                       const std::type_identity_t<MatchWatcher<Game>>& watch = {},
                       int first_side = 0, int opening_moves = 0) {
  SEEDRL_REQUIRE(game.players() == 2, "play_games: games of two players, got ", game.players());
  SEEDRL_REQUIRE(first_side == 0 || first_side == 1, "play_games: first_side is 0 or 1, got ",
                 first_side);
  SEEDRL_REQUIRE(opening_moves >= 0, "play_games: opening_moves must be >= 0, got ", opening_moves);
  const ScriptedPlayer<Game> random = random_legal_player<Game>();
  Rng rng(seed);
  MatchResult result;
  for (int g = 0; g < games; ++g) {
    const int side = (g + first_side) % 2;
    game.reset();
    if (watch) watch(game, g, side, nullptr);
    PlayersStepResult step;
    float first_return = 0.0f;
    for (int moves = 0; !step.episode_over(); ++moves) {
      std::int32_t actions[2] = {0, 0};
      for (int p = 0; p < 2; ++p) {
        if (!game.acts(p)) continue;
        const ScriptedPlayer<Game>& player = moves < opening_moves ? random
                                             : p == side           ? first
                                                                   : second;
        actions[p] = player(game, p, rng);
      }
      step = game.step(actions);
      first_return += step.rewards[static_cast<std::size_t>(side)];
      if (watch) watch(game, g, side, &step);
    }
    GameTally& t = side == 0 ? result.as_first : result.as_second;
    (first_return > 0.0f ? t.wins : first_return < 0.0f ? t.losses : t.draws) += 1;
  }
  return result;
}

/// Plays `games` games of `game` between the network of `config` with parameter values `values`
/// (flat, on the CPU), greedy, and `opponent`; the tallies are the network's.
template <PlayersEnvironment Game>
MatchResult play_match(const nn::NetworkOptions& config, const Tensor& values, Game game,
                       const ScriptedPlayer<Game>& opponent, int games, std::uint64_t seed) {
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
  return play_games(game, network_player(config, values, game), opponent, games, seed);
}

}  // namespace seedrl
