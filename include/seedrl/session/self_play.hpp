// train_self_play: a learner trained by self-play against a league, in one process (issue 37).
//
//   PlayersActor threads (num_actors x games_per_actor games; seat 0 the learner, the others its
//   opponents) ──▶ TrainingSession (InferenceServer serving the opponents' slots from an
//   OpponentTable, Learner) ◀── the league thread: a snapshot of the learner's parameters every
//   league.snapshot_every learner steps, put in the table; the ones that leave the window retired
//
// SelfPlayLeague is the Matchmaker every actor asks: it draws each game's opponent from the
// League (league/league.hpp: the latest self with probability play_latest, else a snapshot or a
// fixed, scripted opponent), assigns the opponent seats' slots, and records every result (ELO
// ratings, win/draw/loss tallies). Its figures go to the run's metrics (rating; the win, draw and
// loss rates of the last 100 games against each kind of opponent) and progress lines.
//
// Frames are the learner's moves (the server's training frames): both sides' in a game against its
// latest self, where both are the learner. With a logdir the league (ratings, tallies, snapshots
// and their values) is written to league.safetensors after every checkpoint, and a resumed run
// takes it back. Not yet: opponents over the socket transport.
#pragma once

#include <array>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "seedrl/acting/builtin_players_actors.hpp"
#include "seedrl/acting/players_actor.hpp"
#include "seedrl/core/thread_name.hpp"
#include "seedrl/inference/opponents.hpp"
#include "seedrl/league/league.hpp"
#include "seedrl/session/actor_threads.hpp"
#include "seedrl/session/builtin_agents.hpp"  // the built-in V-trace self-play below
#include "seedrl/session/self_play_league.hpp"

namespace seedrl {

struct SelfPlayResult {
  TrainingResult training;
  League league;      ///< at the end
  Tensor parameters;  ///< the learner's final values (flat, on the CPU)
  /// Loads of opponent sets' values into networks, and the networks built for them
  /// (InferenceServer::opponent_loads, opponent_networks_built).
  std::int64_t opponent_loads = 0, opponent_networks_built = 0;
};

/// The games of a self-play run: `make(actor, game_index)`.
template <class Game>
using GameMaker = std::function<Game(std::int32_t actor, std::int32_t game)>;

/// train_self_play on games of type `Game`: what it runs, compiled once in the library for the
/// built-in games (SEEDRL_BUILTIN_SELF_PLAY below).
template <Agent A, nn::Backend B, PlayersEnvironment Game>
SelfPlayResult train_self_play_games(const A& agent, const GameMaker<Game>& make_game,
                                     const SelfPlayOptions& options,
                                     std::map<std::string, ScriptedPlayer<Game>> scripted) {
  const Game probe = make_game(0, 0);
  const int players = probe.players();
  options.validate(players);
  const TrainingSessionOptions session_options = options.session(players);
  TrainingSession<A, B> session(
      agent, StepSpec{probe.observation_spec(), probe.action_spec(), probe.step_fields()},
      session_options);
  auto table = std::make_shared<OpponentTable>(session_options.server.max_slots);
  session.server().serve_opponents(table);
  std::vector<std::string> fixed;
  for (const auto& [name, player] : scripted) fixed.push_back(name);
  SelfPlayLeague league(options.league, fixed, table, options.seed);

  std::vector<std::unique_ptr<PlayersActor<Game>>> actors;
  const std::int32_t slots_per_actor = options.games_per_actor * players;
  for (std::int32_t a = 0; a < options.num_actors; ++a) {
    std::vector<Game> games;
    for (std::int32_t g = 0; g < options.games_per_actor; ++g) games.push_back(make_game(a, g));
    actors.push_back(std::make_unique<PlayersActor<Game>>(
        std::move(games), session.server(), league, scripted, a * slots_per_actor,
        options.seed * 1000003ULL + static_cast<std::uint64_t>(a)));
  }
  std::atomic<bool> league_stop{false};
  std::vector<std::thread> threads;
  auto stop_sources = [&](bool) {
    for (auto& actor : actors) actor->stop();
    league_stop = true;
  };
  auto join_sources = [&] {
    for (std::thread& t : threads)
      if (t.joinable()) t.join();
  };
  // The league is kept beside the checkpoint, and comes back with a resumed run.
  const std::string league_path =
      options.logdir.empty()
          ? std::string()
          : (std::filesystem::path(options.logdir) / "league.safetensors").string();
  if (session.resumed() && !league_path.empty()) {
    if (std::filesystem::exists(league_path)) {
      league.restore(league_path, session.learner().parameters().store().flat_size());
      if (options.messages) {
        options.messages(
            io::MessageKind::info,
            str_cat("resumed the league from ", league_path, ": rating ", league.league().rating(),
                    ", ", league.league().snapshots().size(), " snapshots"));
      }
    } else if (options.messages) {
      options.messages(io::MessageKind::info,
                       str_cat("no ", league_path, ": the resumed run starts a new league"));
    }
  }
  auto snapshot = [&] {
    league.maybe_snapshot(session.learner().steps(), [&] {
      SharedParameters& shared = session.learner().parameters();
      SharedParameters::ReadGuard guard(shared);
      return shared.store().values().clone(Device::cpu);
    });
  };
  try {
    snapshot();  // the first opponent: the untrained policy
    threads.emplace_back([&] {
      set_thread_name("seedrl-league");
      try {
        while (!league_stop) {
          snapshot();
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
      } catch (...) {
        session.report_error(std::current_exception());
      }
    });
    start_actor_threads(session, actors, threads);
    TrainingHooks hooks;
    hooks.stop_sources = stop_sources;
    hooks.join_sources = join_sources;
    hooks.progress_suffix = [&] { return league.progress(); };
    hooks.metrics = [&] {
      std::vector<Metric> m = league.metrics();
      const auto& server = session.server();
      m.push_back({{"opponent_loads", Reduce::last}, static_cast<double>(server.opponent_loads())});
      m.push_back({{"opponent_networks_built", Reduce::last},
                   static_cast<double>(server.opponent_networks_built())});
      return m;
    };
    hooks.on_checkpoint = [&](const std::string&) { league.save(league_path); };
    SelfPlayResult result;
    result.training = session.run(hooks);
    result.league = league.league();
    result.parameters = session.learner().parameters().store().values().clone(Device::cpu);
    result.opponent_loads = session.server().opponent_loads();
    result.opponent_networks_built = session.server().opponent_networks_built();
    return result;
  } catch (...) {
    stop_sources(false);
    session.server().stop();
    join_sources();
    throw;
  }
}

/// Trains `agent` by self-play on games from `make_game(actor, game_index)` until total_frames
/// (the learner's moves). `scripted`: the fixed opponents of the league, by name.
template <Agent A, nn::Backend B, class MakeGame>
SelfPlayResult train_self_play(
    const A& agent, MakeGame make_game, const SelfPlayOptions& options,
    std::map<std::string,
             ScriptedPlayer<std::invoke_result_t<MakeGame, std::int32_t, std::int32_t>>>
        scripted = {}) {
  using Game = std::invoke_result_t<MakeGame, std::int32_t, std::int32_t>;
  static_assert(PlayersEnvironment<Game>, "make_game must return a PlayersEnvironment");
  return train_self_play_games<A, B, Game>(agent, GameMaker<Game>(std::move(make_game)), options,
                                           std::move(scripted));
}

// train_self_play for V-trace on the CPU on the built-in games of two players, as
// examples/selfplay trains on them: declared with SEEDRL_BUILTIN_SELF_PLAY(extern), defined (once,
// in the library: src/session/builtin_self_play.cpp) with SEEDRL_BUILTIN_SELF_PLAY().
#define SEEDRL_BUILTIN_SELF_PLAY_GAME(EXTERN, GAME)                                      \
  EXTERN template SelfPlayResult train_self_play_games<VTraceAgent, cpu::Backend, GAME>( \
      const VTraceAgent&, const GameMaker<GAME>&, const SelfPlayOptions&,                \
      std::map<std::string, ScriptedPlayer<GAME>>)
#define SEEDRL_BUILTIN_SELF_PLAY(EXTERN)                              \
  SEEDRL_BUILTIN_SELF_PLAY_GAME(EXTERN, RandomOpenings<TicTacToe>);   \
  SEEDRL_BUILTIN_SELF_PLAY_GAME(EXTERN, RandomOpenings<ConnectFour>); \
  SEEDRL_BUILTIN_SELF_PLAY_GAME(EXTERN, Standoff)

SEEDRL_BUILTIN_SELF_PLAY(extern);

}  // namespace seedrl
