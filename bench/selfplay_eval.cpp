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
// The last line of stdout is one JSON object: the checkpoint, the opponent, the wins, draws and
// losses from each side, and on the board games how many distinct final positions the games of
// each side reached (a lower bound on distinct games: how varied the opponent kept them).
#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

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

template <class Game>
int evaluate(const std::string& checkpoint, const std::string& opponent, int depth, int games,
             std::uint64_t seed, int opening_moves) {
  Policy<> policy(checkpoint);
  const Game game;
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
    if (opponent == "perfect") return test::minimax_player(planes, mask);
    if (opponent == "careful") return test::careful_standoff_player(planes);
    return test::alphabeta_player(planes, mask, depth, &rng);
  };
  // The final boards of each side's games (the board games).
  std::set<std::string> finals[2];
  MatchWatcher<Game> watch;
  if constexpr (std::is_base_of_v<BoardGame, Game>) {
    watch = [&finals](const Game& g, int, int side, const PlayersStepResult* step) {
      if (step != nullptr && step->episode_over())
        finals[static_cast<std::size_t>(side)].insert(g.to_string());
    };
  }
  const MatchResult r = play_games(game, policy_player(policy, game), reference, games, seed, watch,
                                   0, opening_moves);
  const std::string distinct =
      watch ? str_cat(",\"distinct_final_positions\":{\"as_first\":", finals[0].size(),
                      ",\"as_second\":", finals[1].size(), "}")
            : std::string();
  std::fprintf(stderr,
               "selfplay_eval: %s against %s%s, %d games: as player 0 %lld/%lld/%lld, as "
               "player 1 %lld/%lld/%lld (wins/draws/losses)\n",
               checkpoint.c_str(), opponent.c_str(),
               opponent == "alphabeta" ? str_cat(" (depth ", depth, ")").c_str() : "", games,
               static_cast<long long>(r.as_first.wins), static_cast<long long>(r.as_first.draws),
               static_cast<long long>(r.as_first.losses), static_cast<long long>(r.as_second.wins),
               static_cast<long long>(r.as_second.draws),
               static_cast<long long>(r.as_second.losses));
  std::printf(
      "{\"checkpoint\":\"%s\",\"env\":\"%s\",\"opponent\":\"%s\",\"depth\":%d,"
      "\"opening_moves\":%d,\"games\":%d,\"as_first\":%s,\"as_second\":%s%s}\n",
      checkpoint.c_str(), env_name<Game>(), opponent.c_str(), depth, opening_moves, games,
      r.as_first.to_json().c_str(), r.as_second.to_json().c_str(), distinct.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"A self-play checkpoint against reference players (random, perfect, alpha-beta)"};
  std::string checkpoint, env = "tictactoe", opponent = "random";
  int depth = 2, games = 1000;
  std::uint64_t seed = 1;
  app.add_option("--checkpoint", checkpoint, "the run's checkpoint.safetensors")->required();
  app.add_option("--env", env, "tictactoe, connect4 or standoff")
      ->check(CLI::IsMember({"tictactoe", "connect4", "standoff"}));
  app.add_option("--opponent", opponent,
                 "random, perfect (tic-tac-toe), alphabeta (Connect Four, --depth plies) or "
                 "careful (Standoff)")
      ->check(CLI::IsMember({"random", "perfect", "alphabeta", "careful"}));
  app.add_option("--depth", depth, "the alpha-beta player's search depth")
      ->check(CLI::Range(1, 12));
  app.add_option("--games", games, "games, half from each side")->check(CLI::Range(2, 1000000));
  app.add_option("--seed", seed, "the random player's seed");
  int opening_moves = 0;
  app.add_option("--opening-moves", opening_moves,
                 "the first K moves of every game at random (both sides), for varied games")
      ->check(CLI::Range(0, 40));
  CLI11_PARSE(app, argc, argv);
  try {
    const char* plays = opponent == "perfect"     ? "tictactoe"
                        : opponent == "alphabeta" ? "connect4"
                        : opponent == "careful"   ? "standoff"
                                                  : nullptr;
    if (plays != nullptr && env != plays)
      fail("--opponent ", opponent, " plays ", plays, ", not --env ", env);
    if (env == "tictactoe")
      return evaluate<TicTacToe>(checkpoint, opponent, depth, games, seed, opening_moves);
    if (env == "connect4")
      return evaluate<ConnectFour>(checkpoint, opponent, depth, games, seed, opening_moves);
    return evaluate<Standoff>(checkpoint, opponent, depth, games, seed, opening_moves);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "selfplay_eval: error: %s\n", e.what());
    return 1;
  }
}
