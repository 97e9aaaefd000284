// The recipes of the games (docs/results.md, "Games"): CardPick's legal-action masks and Gunner's
// action branches with each agent (examples/card_pick, gunner: 2 actor threads of 8 games and one
// greedy evaluation actor), and self-play on the board games and the duel (examples/selfplay).
// The networks are MLPs on the flattened observation; its size and the actions are the game's.
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

/// Self-play V-trace against a league (examples/selfplay) on `game` ("tictactoe", "connect4" or
/// "standoff"): an MLP of 128 x 128, Adam 1e-3, batches of 16 unrolls of 16, discount 1 (a game's
/// only reward is its result), entropy cost 0.05; 2 actor threads of 32 games, a snapshot every 200
/// learner steps. Frames: tic-tac-toe 3 M, Standoff 2 M, Connect Four 300 k (its figure in
/// docs/results.md needs a larger recipe of flags, not this one).
inline Recipe<VTraceAgentOptions, SelfPlayOptions> selfplay(std::string_view game) {
  Recipe<VTraceAgentOptions, SelfPlayOptions> r;
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
  r.frames = game == "tictactoe" ? 3'000'000 : game == "standoff" ? 2'000'000 : 300'000;
  return r;
}

}  // namespace seedrl::recipes
