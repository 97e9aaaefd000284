// selfplay_eval: a self-play checkpoint (examples/selfplay --logdir) against the reference players
// of test/support/board_players.hpp, which are written independently of seedrl's games and agents
// (issue 37's targets). The checkpoint acts through Policy, greedily, with its legal-action mask;
// it plays half the games as player 0 (the first to move) and half as player 1. The alpha-beta
// player breaks ties between moves of equal value at random (--seed), so that the greedy agent
// meets more than the one game each side a deterministic opponent would give it; --opening-moves K
// plays the first K moves of every game at random, for a wider spread of positions.
//
//   selfplay_eval --checkpoint RUN/checkpoint.safetensors --env tictactoe --opponent perfect
//   selfplay_eval --checkpoint RUN/checkpoint.safetensors --env connect4 --opponent alphabeta
//                 --depth 2 --games 200
//   selfplay_eval --checkpoint RUN/checkpoint.safetensors --env standoff --opponent careful
//
// The perfect and careful players break their ties at random as well (both stay unbeatable).
//
// The last line of stdout is one JSON object: the checkpoint (and the frames and learner steps its
// run had when it saved it), the opponent, the wins, draws and losses from each side, how many
// distinct games each side played (games that differ in any position along the way: a
// deterministic opponent without tie-breaks gives one a side however many are played), and on the
// board games how many distinct final positions they reached.
//
// On Connect Four --tactics also reads every move of the agent against the board, by the reference
// players' own rules, and says where its losses came from: at its last move before the opponent's
// winning one it had a win of its own and missed it, left the one column that blocked the
// opponent's win, faced two or more such columns (a fork: lost before that move), faced none and
// let the opponent in (its stone under the opponent's winning cell) where another move would not
// have, or faced none and every move let it in (zugzwang); "other" is a loss after a move none of
// these. Over all its moves: how often a win was there and taken, how often one column blocked the
// opponent's win and was played, and how often the move let the opponent in needlessly.

#include <cstdint>
#include <cstdio>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "seedrl/cli/command_line.hpp"
#include "seedrl/env/board_game.hpp"
#include "seedrl/env/standoff.hpp"
#include "seedrl/session/match.hpp"
#include "support/board_players.hpp"

namespace {

using namespace seedrl;

template <class Game>
const char* env_name() {
  if constexpr (std::is_same_v<Game, TicTacToe>) return "tictactoe";
  if constexpr (std::is_same_v<Game, ConnectFour>) return "connect4";
  return "standoff";
}

// A reading's JSON object.
std::string to_json(const test::ConnectFourTactics& t) {
  return str_cat(
      "{\"wins_open\":", t.wins_open, ",\"wins_taken\":", t.wins_taken,
      ",\"blocks_open\":", t.blocks_open, ",\"blocked\":", t.blocked, ",\"forks_faced\":", t.forks,
      ",\"let_in\":", t.let_in, ",\"losses\":{\"missed_win\":", t.lost_missed_win,
      ",\"missed_block\":", t.lost_missed_block, ",\"fork\":", t.lost_fork,
      ",\"let_in\":", t.lost_let_in, ",\"zugzwang\":", t.lost_zugzwang, ",\"other\":", t.lost_other,
      "},\"games_missed_win\":", t.games_missed_win, ",\"then_lost\":", t.missed_win_then_lost,
      ",\"then_drawn\":", t.missed_win_then_drawn, "}");
}

template <class Game>
int evaluate(const std::string& checkpoint, const std::string& opponent, int depth, int games,
             std::uint64_t seed, int opening_moves, bool tactics) {
  Policy<> policy(checkpoint);
  const Game game;
  if (tactics && !std::is_same_v<Game, ConnectFour>) fail("--tactics reads Connect Four games");
  // The reference players read the board and the mask from the opponent's own view.
  auto view = std::make_shared<PlayerView<Game>>(game);
  const ScriptedPlayer<Game> reference = [&, view](const Game& g, int player, Rng& rng) {
    view->observe(g, player);
    const Tensor& board = view->observation();
    const Tensor& mask_tensor = view->fields().at(0);
    const std::span<const float> planes(board.data<float>(),
                                        static_cast<std::size_t>(board.numel()));
    const std::span<const std::uint8_t> mask(mask_tensor.data<std::uint8_t>(),
                                             static_cast<std::size_t>(mask_tensor.numel()));
    if (opponent == "random") return test::random_player(mask, rng);
    if (opponent == "perfect") return test::minimax_player(planes, mask, &rng);
    if (opponent == "careful") return test::careful_standoff_player(planes, &rng);
    return test::alphabeta_player(planes, mask, depth, &rng);
  };
  // Each side's distinct games (a game: player 0's view after every step, as bytes) and, on the
  // board games, their final boards.
  std::set<std::string> played[2], finals[2];
  std::string record;
  auto record_view = std::make_shared<PlayerView<Game>>(game);
  MatchWatcher<Game> watch = [&, record_view](const Game& g, int, int s,
                                              const PlayersStepResult* step) {
    if (step == nullptr) {
      record.clear();
      return;
    }
    record_view->observe(g, 0);
    const Tensor& o = record_view->observation();
    record.append(static_cast<const char*>(o.raw_data()), o.bytes());
    if (!step->episode_over()) return;
    played[static_cast<std::size_t>(s)].insert(record);
    if constexpr (std::is_base_of_v<BoardGame, Game>)
      finals[static_cast<std::size_t>(s)].insert(g.to_string());
  };
  // --tactics: the agent's moves read against the board, by side; `side` is the side the agent
  // holds in the game being played.
  test::ConnectFourTactics read[2];
  int side = 0;
  const ScriptedPlayer<Game> greedy = policy_player(policy, game);
  auto agent_view = std::make_shared<PlayerView<Game>>(game);
  const ScriptedPlayer<Game> reading = [&](const Game& g, int player, Rng& rng) {
    const std::int32_t a = greedy(g, player, rng);
    agent_view->observe(g, player);
    const Tensor& o = agent_view->observation();
    read[side].see(std::span<const float>(o.data<float>(), static_cast<std::size_t>(o.numel())), a);
    return a;
  };
  const ScriptedPlayer<Game>& agent = tactics ? reading : greedy;
  if (tactics) {
    watch = [&, record_watch = watch](const Game& g, int n, int s, const PlayersStepResult* step) {
      record_watch(g, n, s, step);
      side = s;
      test::ConnectFourTactics& t = read[static_cast<std::size_t>(s)];
      if (step == nullptr) {
        t.start();
      } else if (step->episode_over()) {
        const float reward = step->rewards[static_cast<std::size_t>(s)];
        if (reward < 0.0f) t.lost();
        if (reward == 0.0f) t.drawn();
      }
    };
  }
  const MatchResult r = play_games(game, agent, reference, games, seed, watch, 0, opening_moves);
  std::string distinct = str_cat(",\"distinct_games\":{\"as_first\":", played[0].size(),
                                 ",\"as_second\":", played[1].size(), "}");
  if constexpr (std::is_base_of_v<BoardGame, Game>)
    distinct += str_cat(",\"distinct_final_positions\":{\"as_first\":", finals[0].size(),
                        ",\"as_second\":", finals[1].size(), "}");
  const std::string tactics_json = tactics
                                       ? str_cat(",\"tactics\":{\"as_first\":", to_json(read[0]),
                                                 ",\"as_second\":", to_json(read[1]), "}")
                                       : std::string();
  std::fprintf(stderr,
               "selfplay_eval: %s against %s%s, %d games: as player 0 %lld/%lld/%lld, as "
               "player 1 %lld/%lld/%lld (wins/draws/losses); %zu and %zu distinct games\n",
               checkpoint.c_str(), opponent.c_str(),
               opponent == "alphabeta" ? str_cat(" (depth ", depth, ")").c_str() : "", games,
               static_cast<long long>(r.as_first.wins), static_cast<long long>(r.as_first.draws),
               static_cast<long long>(r.as_first.losses), static_cast<long long>(r.as_second.wins),
               static_cast<long long>(r.as_second.draws),
               static_cast<long long>(r.as_second.losses), played[0].size(), played[1].size());
  std::printf(
      "{\"checkpoint\":\"%s\",\"checkpoint_frames\":%lld,\"checkpoint_learner_steps\":%lld,"
      "\"env\":\"%s\",\"opponent\":\"%s\",\"depth\":%d,"
      "\"opening_moves\":%d,\"games\":%d,\"as_first\":%s,\"as_second\":%s%s%s}\n",
      checkpoint.c_str(), static_cast<long long>(policy.counters().frames),
      static_cast<long long>(policy.counters().learner_steps), env_name<Game>(), opponent.c_str(),
      depth, opening_moves, games, r.as_first.to_json().c_str(), r.as_second.to_json().c_str(),
      distinct.c_str(), tactics_json.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  seedrl::cli::CommandLine app(
      "A self-play checkpoint against reference players (random, perfect, alpha-beta)");
  std::string checkpoint, env = "tictactoe", opponent = "random";
  int depth = 2, games = 1000;
  std::uint64_t seed = 1;
  app.option("--checkpoint", checkpoint, "the run's checkpoint.safetensors").required();
  app.option("--env", env, "tictactoe, connect4 or standoff")
      .one_of({"tictactoe", "connect4", "standoff"});
  app.option("--opponent", opponent,
             "random, perfect (tic-tac-toe), alphabeta (Connect Four, --depth plies) or "
             "careful (Standoff)")
      .one_of({"random", "perfect", "alphabeta", "careful"});
  app.option("--depth", depth, "the alpha-beta player's search depth").range(1, 12);
  app.option("--games", games, "games, half from each side").range(2, 1000000);
  app.option("--seed", seed, "the random player's seed");
  int opening_moves = 0;
  app.option("--opening-moves", opening_moves,
             "the first K moves of every game at random (both sides), for varied games")
      .range(0, 40);
  bool tactics = false;
  app.flag("--tactics", tactics,
           "Connect Four: read the agent's moves against the board (wins taken, blocks made) "
           "and say where its losses came from");
  if (const auto exit = app.parse(argc, argv)) return *exit;
  try {
    const char* plays = opponent == "perfect"     ? "tictactoe"
                        : opponent == "alphabeta" ? "connect4"
                        : opponent == "careful"   ? "standoff"
                                                  : nullptr;
    if (plays != nullptr && env != plays)
      fail("--opponent ", opponent, " plays ", plays, ", not --env ", env);
    if (env == "tictactoe")
      return evaluate<TicTacToe>(checkpoint, opponent, depth, games, seed, opening_moves, tactics);
    if (env == "connect4")
      return evaluate<ConnectFour>(checkpoint, opponent, depth, games, seed, opening_moves,
                                   tactics);
    return evaluate<Standoff>(checkpoint, opponent, depth, games, seed, opening_moves, tactics);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "selfplay_eval: error: %s\n", e.what());
    return 1;
  }
}
