// bench_board_search: moves per second of the self-play league's search player
// (acting/board_search.hpp) on Connect Four, by depth, over a fixed set of positions reached by
// random play (0 - 19 moves from the empty board, seeded), on one thread. In a self-play run with
// --search-opponents 2 4 the search players' moves took 28% of the process's CPU time before the
// search kept its own board (docs/performance.md), so their speed is the run's speed.
//
//   bench_board_search [--depths 1 2 4 6] [--positions 64] [--seconds 1]
//
// One JSON line per depth; a checksum of the chosen moves lets two builds be compared for the
// same play (the moves depend only on the positions and the seeded tie-breaks).

#include <array>
#include <cstdint>
#include <vector>

#include "seedrl/acting/board_search.hpp"
#include "seedrl/cli/command_line.hpp"
#include "seedrl/env/board_game.hpp"
#include "seedrl/session/match.hpp"
#include "support/bench_util.hpp"

using namespace seedrl;

int main(int argc, char** argv) {
  seedrl::cli::CommandLine app(
      "seedrl bench_board_search: the search player's moves per second on Connect Four");
  std::vector<int> depths{1, 2, 4, 6};
  int positions = 64;
  double seconds = 1.0;
  app.option("--depths", depths, "search depths to time").range(1, 8);
  app.option("--positions", positions, "random positions searched per round").range(1, 100000);
  app.option("--seconds", seconds, "minimum measuring time per depth").positive();
  if (const auto exit = app.parse(argc, argv)) return *exit;

  // The positions: random legal moves from the empty board, none of them over.
  Rng rng(11);
  const ScriptedPlayer<ConnectFour> random = random_legal_player<ConnectFour>();
  std::vector<ConnectFour> boards;
  while (static_cast<int>(boards.size()) < positions) {
    ConnectFour game;
    const int moves = static_cast<int>(rng.next_u64() % 20);
    for (int m = 0; m < moves && !game.over(); ++m) {
      const std::int32_t a = random(game, game.to_move(), rng);
      const std::array<std::int32_t, 2> both{a, a};
      game.step(both);
    }
    if (!game.over()) boards.push_back(game);
  }

  for (int depth : depths) {
    const ScriptedPlayer<ConnectFour> player = search_player<ConnectFour>(depth);
    // One round of every position, with the tie-breaks seeded the same in every round.
    std::uint64_t checksum = 0;
    const auto round = [&] {
      Rng ties(3);
      checksum = 0;
      for (const ConnectFour& game : boards)
        checksum = checksum * 7 + static_cast<std::uint64_t>(player(game, game.to_move(), ties));
    };
    const double round_s = bench::time_per_call(round, seconds, 1, 2);
    const double per_move_s = round_s / static_cast<double>(boards.size());
    bench::progress("search", "connect4", "depth ", depth, ": ", per_move_s * 1e6, " us a move");
    bench::Json()
        .add("bench", "board_search")
        .add("game", "connect4")
        .add("depth", static_cast<long long>(depth))
        .add("positions", static_cast<long long>(boards.size()))
        .add("threads", 1LL)
        .add("us_per_move", per_move_s * 1e6)
        .add("moves_per_s", 1.0 / per_move_s)
        .add("checksum", static_cast<long long>(checksum & 0x7fffffffffffffffULL))
        .print();
  }
  return 0;
}
