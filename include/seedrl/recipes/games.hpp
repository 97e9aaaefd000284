// The recipes of the games (docs/results.md, "Games"): CardPick's legal-action masks and Gunner's
// action branches with each agent (examples/card_pick, gunner: 2 actor threads of 8 games and one
// greedy evaluation actor), and self-play on the board games and the duel (examples/selfplay).
// The networks are MLPs on the flattened observation (Connect Four's self-play: convolutions on
// the board's planes first); its size and the actions are the game's.
#pragma once

#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "seedrl/recipes/base.hpp"
#include "seedrl/session/self_play_league.hpp"

namespace seedrl::recipes {

namespace detail {
// The games' in-process run: 2 actor threads of 8 games, one greedy evaluation actor.
inline LocalTrainerOptions game_run(std::int64_t unroll_length) {
  LocalTrainerOptions run;
  run.num_actors = 2;
  run.envs_per_actor = 8;
  run.evaluation_actors = 1;
  run.server.unroll_length = unroll_length;
  return run;
}
// vtrace_base() and ppo_base() on a game: its MLP, Adam or RMSProp at 1e-3, its frames; PPO in
// batches of 4 unrolls without normalisation.
template <class Options>
Recipe<Options> on_game(Recipe<Options> r, std::vector<std::int64_t> hidden,
                        std::int64_t unroll_length, std::int64_t frames) {
  r.agent.network.mlp_hidden = std::move(hidden);
  r.agent.learning_rate.initial = 1e-3;
  r.run = game_run(unroll_length);
  r.frames = frames;
  if constexpr (std::is_same_v<Options, PpoAgentOptions>) {
    r.agent.batch_size = 4;
    r.agent.normalization.observations = false;
    r.agent.normalization.rewards = false;
  }
  return r;
}
// r2d2_base() on a game: its MLP and LSTM, batches of 16 sequences, 4,000 of replay from 64.
inline Recipe<R2D2AgentOptions> r2d2_on_game(std::vector<std::int64_t> hidden, std::int64_t lstm,
                                             std::int64_t n_step, std::int64_t target_period,
                                             std::int64_t unroll_length, std::int64_t frames) {
  Recipe<R2D2AgentOptions> r = r2d2_base();
  R2D2AgentOptions& a = r.agent;
  a.network.mlp_hidden = std::move(hidden);
  a.network.lstm_size = lstm;
  a.batch_size = 16;
  a.n_step = n_step;
  a.target_update_period = target_period;
  a.replay_capacity = 4'000;
  a.min_replay_size = 64;
  r.run = game_run(unroll_length);
  r.run.server.burn_in = 2;
  r.frames = frames;
  return r;
}
}  // namespace detail

/// CardPick (legal-action masks): an MLP of 32, unrolls of 8, 150 k frames.
inline Recipe<VTraceAgentOptions> card_pick_vtrace() {
  return detail::on_game(vtrace_base(), {32}, 8, 150'000);
}
inline Recipe<PpoAgentOptions> card_pick_ppo() {
  return detail::on_game(ppo_base(), {32}, 8, 150'000);
}
/// R2D2 on CardPick: an LSTM of 16, 2-step targets, a target copy every 50 steps.
inline Recipe<R2D2AgentOptions> card_pick_r2d2() {
  return detail::r2d2_on_game({32}, 16, 2, 50, 8, 150'000);
}

/// Gunner (action branches 3 + 2): an MLP of 64, unrolls of 20, 1 M frames (the budget its goal
/// of a mean return of 8 is set for).
inline Recipe<VTraceAgentOptions> gunner_vtrace() {
  return detail::on_game(vtrace_base(), {64}, 20, 1'000'000);
}
/// PPO on Gunner with an entropy bonus of 0.01: without it each seed's policy settles early, at
/// 7.8 to 11.1.
inline Recipe<PpoAgentOptions> gunner_ppo() {
  Recipe<PpoAgentOptions> r = detail::on_game(ppo_base(), {64}, 20, 1'000'000);
  r.agent.loss.entropy_cost = 0.01f;
  return r;
}
/// R2D2 on Gunner: an LSTM of 32, 3-step targets, a target copy every 100 steps, unrolls of 10.
inline Recipe<R2D2AgentOptions> gunner_r2d2() {
  return detail::r2d2_on_game({64}, 32, 3, 100, 10, 1'000'000);
}

/// A self-play recipe: the agent and the league's run, and what the example program sets up
/// around them: the fixed players that search ahead (one per depth, beside the random player) and
/// the random moves the training games of a board game open with.
struct SelfPlayRecipe : Recipe<VTraceAgentOptions, SelfPlayOptions> {
  std::vector<int> search_depths;  ///< a fixed player searching this many moves ahead, per entry
  int opening_moves = 0;           ///< board games: training games open with 0 - K random moves
};

/// Self-play V-trace against a league (examples/selfplay) on `game` ("tictactoe", "connect4" or
/// "standoff"): Adam 1e-3, unrolls of 16, discount 1 (a game's only reward is its result), entropy
/// cost 0.05; 2 actor threads of 32 games; the board games open with up to 4 random moves.
/// Tic-tac-toe and Standoff: an MLP of 128 x 128, batches of 16, a snapshot every 200 learner
/// steps, 3 M and 2 M frames. Connect Four: the board torso (two 3x3 convolutions of 32, then 256),
/// batches of 32, a snapshot every 500 steps, search players of depth 2 and 4 in the league with
/// 30% of the games against the fixed players, 120 M frames (1 h 45 min - 2 h on 2 cores; the
/// recipe of docs/results.md, "Self-play").
inline SelfPlayRecipe selfplay(std::string_view game) {
  SelfPlayRecipe r;
  const Recipe<VTraceAgentOptions> base = vtrace_base();
  r.agent = base.agent;
  VTraceAgentOptions& a = r.agent;
  a.network.mlp_hidden = {128, 128};
  a.optimizer.kind = nn::OptimizerKind::adam;
  a.learning_rate.initial = 1e-3;
  a.batch_size = 16;
  a.discount = 1.0f;
  // Wide policies keep meeting the positions a careless opponent leads to: at 0.01 every seed's
  // tic-tac-toe policy lost to a random player (5 - 26% of its games as player 1) and to the
  // perfect player; at 0.05 seed 1 drew every game with the perfect player and lost none to
  // random.
  a.loss.entropy_cost = 0.05f;
  r.run.num_actors = 2;
  r.run.games_per_actor = 32;
  r.run.server.unroll_length = 16;
  r.run.league.snapshot_every = 200;
  // With openings of up to 4 random moves every tic-tac-toe seed stopped losing to a random player
  // (without, 1 seed in 3 did; docs/results_log.md, "Random openings"); the duel has none.
  r.opening_moves = game == "standoff" ? 0 : 4;
  r.frames = game == "tictactoe" ? 3'000'000 : 2'000'000;
  if (game == "connect4") {
    // An MLP of 256 x 256 against the random player and its snapshots won 3 - 26% of its games
    // as first player against the tests' depth-2 search player at 10 - 80 M frames; convolutions
    // on the board, the search players in the league and 120 M frames won 87.7 - 92.7% (tuning
    // seeds 1 - 3; docs/results_log.md, "Connect Four").
    a.network.torso = nn::Torso::board;
    a.network.conv_channels = {32, 32};
    a.network.mlp_hidden = {256};
    a.batch_size = 32;
    r.run.league.snapshot_every = 500;
    r.run.league.play_fixed = 0.3;
    r.search_depths = {2, 4};
    r.frames = 120'000'000;
  }
  return r;
}

}  // namespace seedrl::recipes
