// session/board_search.hpp: the horizon's score against counts by hand, alpha-beta's values
// against a plain minimax without pruning (written here) on random positions, a won line taken
// and a threat blocked, ties broken at random (both mirror moves of a symmetric position), and
// play: beating random play and the tests' reference alpha-beta player of a shallower depth.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <set>
#include <span>
#include <vector>

#include "seedrl/env/board_game.hpp"
#include "seedrl/session/board_search.hpp"
#include "seedrl/session/match.hpp"
#include "support/board_players.hpp"

namespace test_board_search {

using namespace seedrl;
namespace detail = board_search_detail;

namespace {

void play_moves(BoardGame& game, const std::vector<std::int32_t>& moves) {
  for (std::int32_t a : moves) {
    REQUIRE_FALSE(game.over());
    const std::array<std::int32_t, 2> both{a, a};
    game.step(both);
  }
}

// Minimax without pruning: every move searched, the same scores at the ends.
int plain_minimax(const BoardGame& game, int depth) {
  const int mover = game.to_move();
  if (depth == 0) return detail::open_lines_score(game, mover);
  int best = std::numeric_limits<int>::min();
  for (std::int32_t a = 0; a < game.actions(); ++a) {
    if (!game.legal(a)) continue;
    BoardGame next = game;
    play_moves(next, {a});
    const int value = !next.over()             ? -plain_minimax(next, depth - 1)
                      : next.winner() == mover ? detail::kWon + depth
                      : next.winner() < 0      ? 0
                                               : -(detail::kWon + depth);
    best = std::max(best, value);
  }
  return best == std::numeric_limits<int>::min() ? 0 : best;
}

// The tests' reference alpha-beta player (test/support) as a ScriptedPlayer.
ScriptedPlayer<ConnectFour> reference(int depth) {
  return [depth](const ConnectFour& game, int player, Rng& rng) {
    PlayerView<ConnectFour> view(game);
    view.observe(game, player);
    const Tensor& mask = view.fields().at(0);
    return test::alphabeta_player(std::span<const float>(view.observation().data<float>(), 84),
                                  std::span<const std::uint8_t>(mask.data<std::uint8_t>(), 7),
                                  depth, &rng);
  };
}

}  // namespace

TEST_CASE("search_player: the horizon's score counts open lines as by hand") {
  TicTacToe game;
  play_moves(game, {4});  // X in the centre: 4 lines (a row, a column, both diagonals) of one X
  CHECK(detail::open_lines_score(game, 0) == 4 * 1 + 1);  // and the centre column's bonus
  CHECK(detail::open_lines_score(game, 1) == -5);
  play_moves(game, {0});  // O in a corner: closes X's main diagonal; O's row 0 and column 0 open
  // X: the middle row and column and the other diagonal (1 each), bonus 1; O: 2 lines of one.
  CHECK(detail::open_lines_score(game, 0) == 3 + 1 - 2);
  play_moves(game, {3});  // X at row 1, col 0: the middle row now holds 2 X (worth 4)
  // X: middle row 4, middle column 1, anti-diagonal 1, bonus 1; O: row 0 only (column 0 closed).
  CHECK(detail::open_lines_score(game, 0) == 4 + 1 + 1 + 1 - 1);
}

TEST_CASE("search_player: alpha-beta's values equal plain minimax's on random positions") {
  Rng rng(5);
  const ScriptedPlayer<ConnectFour> random = random_legal_player<ConnectFour>();
  int checked = 0;
  for (int position = 0; position < 30; ++position) {
    ConnectFour game;
    const int moves = static_cast<int>(rng.next_u64() % 20);
    for (int m = 0; m < moves && !game.over(); ++m)
      play_moves(game, {random(game, game.to_move(), rng)});
    if (game.over()) continue;
    for (int depth = 1; depth <= 3; ++depth) {
      CAPTURE(position);
      CAPTURE(depth);
      const int inf = std::numeric_limits<int>::max();
      CHECK(detail::negamax(game, depth, -inf, inf) == plain_minimax(game, depth));
      ++checked;
    }
  }
  CHECK(checked >= 60);
}

TEST_CASE("search_player: takes a win, blocks a threat, breaks ties at random, refuses bad calls") {
  ConnectFour game;
  Rng rng(7);
  play_moves(game, {0, 6, 1, 6, 2, 6});  // X to move: 3 completes the bottom row
  for (int depth : {1, 2, 4}) CHECK(search_player<ConnectFour>(depth)(game, 0, rng) == 3);
  game.reset();
  play_moves(game, {0, 6, 1, 6, 2});  // O to move: X threatens 3
  CHECK(search_player<ConnectFour>(2)(game, 1, rng) == 3);
  CHECK_THROWS_WITH_AS(search_player<ConnectFour>(2)(game, 0, rng),
                       doctest::Contains("player 0 does not move now"), Error);
  CHECK_THROWS_WITH_AS(search_player<ConnectFour>(0), doctest::Contains("depth must be in [1, 8]"),
                       Error);
  // The centre column full (X O X O X O), the rest empty: the board is its own mirror image, so
  // every move c has the value of 6 - c, and the player picks each of a tied pair.
  game.reset();
  play_moves(game, {3, 3, 3, 3, 3, 3});
  for (int depth : {1, 3}) {
    std::set<std::int32_t> picked;
    const ScriptedPlayer<ConnectFour> player = search_player<ConnectFour>(depth);
    for (int i = 0; i < 64; ++i) picked.insert(player(game, 0, rng));
    CAPTURE(depth);
    CHECK(picked.size() >= 2);
    CHECK_FALSE(picked.contains(3));
    for (std::int32_t c : picked) CHECK(picked.contains(6 - c));
  }
}

TEST_CASE("search_player: beats random play, and the reference player of a shallower depth") {
  const ConnectFour game;
  const MatchResult vs_random =
      play_games(game, search_player<ConnectFour>(2), random_legal_player<ConnectFour>(), 40, 3);
  CHECK(vs_random.as_first.wins >= 19);
  CHECK(vs_random.as_second.wins >= 18);
  // Depth 4 against the tests' reference of depth 1, from two random opening moves.
  const MatchResult vs_reference =
      play_games(game, search_player<ConnectFour>(4), reference(1), 20, 5, {}, 0, 2);
  CHECK(vs_reference.total().wins >= 16);
  // Tic-tac-toe searched to its end never loses, whoever opens.
  const MatchResult ttt =
      play_games(TicTacToe(), search_player<TicTacToe>(8), random_legal_player<TicTacToe>(), 40, 9);
  CHECK(ttt.total().losses == 0);
}

}  // namespace test_board_search
