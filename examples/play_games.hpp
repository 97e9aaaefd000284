// play's games of two players (issue 37): a self-play checkpoint against a random player, another
// checkpoint (--opponent CHECKPOINT) or a person at the terminal (--human), on tic-tac-toe,
// Connect Four or Standoff, with a table of the results from each side.
//
// The checkpoint (A) takes the first move in even games and the second in odd ones (--human-first
// starts the other way). Two greedy agents play the same two games over and over: --opening-moves K
// plays the first K moves of every game at random (both sides) so that a series covers more of the
// game. A person types a move at the prompt (a cell, a column, or reload/block/shoot; q quits); the
// board is drawn after every move, on stderr, so that stdout keeps the JSON line alone.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "play_recording.hpp"
#include "seedrl/env/board_game.hpp"
#include "seedrl/env/standoff.hpp"
#include "seedrl/session/match.hpp"

namespace seedrl::examples {

/// The names play takes for the games of two players.
inline bool is_two_player_game(const std::string& name) {
  return name == "tictactoe" || name == "connect4" || name == "standoff";
}

struct GameSeriesOptions {
  std::int64_t games = 100;
  std::string opponent = "random";  ///< "random", "human", or the opponent checkpoint's path
  bool human_first = false;         ///< the opponent takes the first move of game 1
  int opening_moves = 0;            ///< moves played at random at the start of every game
  std::uint64_t seed = 1;
};

// ---- what a person sees and types ----

inline std::string move_help(const BoardGame& game) {
  const std::int32_t n = game.actions() - 1;
  return game.rules().gravity ? str_cat("a column 0-", n) : str_cat("a cell 0-", n);
}
inline std::string move_help(const Standoff&) {
  return "r(eload), b(lock) or s(hoot)";
}

inline const char* player_mark(const BoardGame&, int player) {
  return player == 0 ? " (X)" : " (O)";
}
inline const char* player_mark(const Standoff&, int) {
  return "";
}

inline std::optional<std::int32_t> parse_move(const BoardGame&, const std::string& text) {
  std::int32_t move = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), move);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return move;
}
inline std::optional<std::int32_t> parse_move(const Standoff&, const std::string& text) {
  for (std::int32_t m = 0; m < 3; ++m) {
    const std::string name = Standoff::move_name(m);
    if (text == name || text == name.substr(0, 1) || text == std::to_string(m)) return m;
  }
  return std::nullopt;
}

/// The person ended the series (q, or the end of the input).
struct Quit {};

/// A person's move, read from `in` after a prompt on `out`, until the game's mask allows it.
template <PlayersEnvironment Game>
ScriptedPlayer<Game> human_player(const Game& game, std::istream& in, std::ostream& out) {
  auto view = std::make_shared<PlayerView<Game>>(game);
  return [view, &in, &out](const Game& g, int player, Rng&) -> std::int32_t {
    view->observe(g, player);
    for (;;) {
      out << "your move (player " << player << ", " << move_help(g) << ", q quits): " << std::flush;
      std::string line;
      if (!std::getline(in, line)) throw Quit{};
      while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
      while (!line.empty() && line.front() == ' ') line.erase(0, 1);
      if (line == "q" || line == "quit") throw Quit{};
      const std::optional<std::int32_t> move = parse_move(g, line);
      if (move && view->allows(*move)) return *move;
      out << "'" << line << "' is not a legal move here\n";
    }
  };
}

/// Plays the series on `Game` between `agent` (A) and the opponent the options name
/// (`opponent_policy` for a checkpoint); prints the table on stderr and the JSON line on stdout.
template <PlayersEnvironment Game>
int play_game_series(const std::string& env_name, Policy<>& agent, Policy<>* opponent_policy,
                     const GameSeriesOptions& options, Recording& recording) {
  const Game game;
  const bool human = options.opponent == "human";
  const ScriptedPlayer<Game> a = policy_player(agent, game);
  const ScriptedPlayer<Game> b = human             ? human_player(game, std::cin, std::cerr)
                                 : opponent_policy ? policy_player(*opponent_policy, game)
                                                   : random_legal_player<Game>();
  PlayerView<Game> view(game);
  recording.start(view.spec().observation);
  MatchResult result;
  std::int64_t finished = 0;
  float a_return = 0.0f;
  const auto start = std::chrono::steady_clock::now();
  double next_report = 2.0;
  const MatchWatcher<Game> watch = [&](const Game& g, int index, int side,
                                       const PlayersStepResult* step) {
    if (index == 0) {  // the GIF: the first game, from player 0's side (its stones red)
      view.observe(g, 0);
      recording.add(view.observation()[0]);
    }
    if (step == nullptr) a_return = 0.0f;
    if (step != nullptr) a_return += step->rewards[static_cast<std::size_t>(side)];
    if (human) {
      if (step == nullptr)
        std::fprintf(stderr, "\ngame %d: you are player %d%s, %s\n", index + 1, 1 - side,
                     player_mark(g, 1 - side),
                     side == 1 ? "you move first" : "the agent moves first");
      std::fprintf(stderr, "\n%s", g.to_string().c_str());
      if (step != nullptr && step->episode_over())
        std::fprintf(stderr, "%s\n",
                     a_return > 0.0f   ? "the agent wins"
                     : a_return < 0.0f ? "you win"
                                       : "a draw");
    }
    if (step != nullptr && step->episode_over()) {
      ++finished;
      GameTally& t = side == 0 ? result.as_first : result.as_second;
      (a_return > 0.0f ? t.wins : a_return < 0.0f ? t.losses : t.draws) += 1;
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!human && seconds >= next_report) {
        next_report += 2.0;
        std::fprintf(stderr, "play: %lld/%lld games\n", static_cast<long long>(finished),
                     static_cast<long long>(options.games));
      }
    }
  };
  try {
    play_games(game, a, b, static_cast<int>(options.games), options.seed, watch,
               options.human_first ? 1 : 0, options.opening_moves);
  } catch (const Quit&) {
    std::fprintf(stderr, "\nplay: stopped after %lld finished games\n",
                 static_cast<long long>(finished));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!recording.path.empty()) {
    io::write_gif(recording.path, recording.animation);
    std::fprintf(stderr, "play: %zu frames of the first game in %s\n",
                 recording.animation.frames.size(), recording.path.c_str());
  }
  const std::string opponent = opponent_policy ? opponent_policy->checkpoint() : options.opponent;
  const GameTally total = result.total();
  std::fprintf(
      stderr,
      "play: %s, %lld games: A = %s against B = %s (wins, draws and losses are A's)\n"
      "                  wins  draws  losses\n"
      "  A moves first %6lld %6lld %7lld\n"
      "  B moves first %6lld %6lld %7lld\n"
      "  total         %6lld %6lld %7lld\n",
      env_name.c_str(), static_cast<long long>(finished), agent.checkpoint().c_str(),
      opponent.c_str(), static_cast<long long>(result.as_first.wins),
      static_cast<long long>(result.as_first.draws), static_cast<long long>(result.as_first.losses),
      static_cast<long long>(result.as_second.wins), static_cast<long long>(result.as_second.draws),
      static_cast<long long>(result.as_second.losses), static_cast<long long>(total.wins),
      static_cast<long long>(total.draws), static_cast<long long>(total.losses));
  std::printf(
      "{\"env\":\"%s\",\"agent\":\"%s\",\"acting\":\"%s\",\"opponent\":\"%s\","
      "\"opening_moves\":%d,\"games\":%lld,\"as_first\":%s,\"as_second\":%s,\"seconds\":%.3f,"
      "\"training_frames\":%lld}\n",
      env_name.c_str(), agent.agent().c_str(), agent.acting().to_text().c_str(), opponent.c_str(),
      options.opening_moves, static_cast<long long>(finished), result.as_first.to_json().c_str(),
      result.as_second.to_json().c_str(), seconds, static_cast<long long>(agent.counters().frames));
  return 0;
}

/// play_game_series on the game `env_name` names.
inline int play_named_game_series(const std::string& env_name, Policy<>& agent,
                                  Policy<>* opponent_policy, const GameSeriesOptions& options,
                                  Recording& recording) {
  if (env_name == "tictactoe")
    return play_game_series<TicTacToe>(env_name, agent, opponent_policy, options, recording);
  if (env_name == "connect4")
    return play_game_series<ConnectFour>(env_name, agent, opponent_policy, options, recording);
  return play_game_series<Standoff>(env_name, agent, opponent_policy, options, recording);
}

}  // namespace seedrl::examples
