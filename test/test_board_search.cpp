// acting/board_search.hpp: the horizon's score against counts by hand, the search board's
// score kept move by move against the score counted from scratch, alpha-beta's values against a
// plain minimax without pruning (written here, on copies of the game) on random positions, a won
// line taken and a threat blocked, ties broken at random (both mirror moves of a symmetric
// position), and play: beating random play and the tests' reference alpha-beta player of a
// shallower depth.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <set>
#include <span>
#include <vector>

#include "seedrl/acting/board_search.hpp"
#include "seedrl/env/board_game.hpp"
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

// The horizon's score of `game` for `player` counted from scratch: every window of in_a_row
// cells looked at (the search keeps its score move by move).
int score_from_scratch(const BoardGame& game, int player) {
  const BoardGameRules& r = game.rules();
  const int n = r.in_a_row;
  int score = 0;
  constexpr int kSteps[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
  for (const auto& d : kSteps) {
    for (std::int32_t row = 0; row < r.rows; ++row) {
      for (std::int32_t col = 0; col < r.columns; ++col) {
        const std::int32_t last_row = row + d[0] * (n - 1), last_col = col + d[1] * (n - 1);
        if (last_row >= r.rows || last_col < 0 || last_col >= r.columns) continue;
        std::array<int, 3> count{};  // empty, player 0's, player 1's
        for (int k = 0; k < n; ++k)
          ++count[static_cast<std::size_t>(game.cell(row + d[0] * k, col + d[1] * k))];
        if (count[1] > 0 && count[2] > 0) continue;
        const int stones = count[1] + count[2];
        if (stones == 0) continue;
        const int worth = 1 << (2 * (stones - 1));
        score += (count[1] > 0) == (player == 0) ? worth : -worth;
      }
    }
  }
  if (r.columns % 2 == 1) {
    for (std::int32_t row = 0; row < r.rows; ++row) {
      const int stone = game.cell(row, r.columns / 2);
      if (stone != 0) score += stone == player + 1 ? 1 : -1;
    }
  }
  return score;
}

// Minimax without pruning: every move searched, the same scores at the ends.
int plain_minimax(const BoardGame& game, int depth) {
  const int mover = game.to_move();
  if (depth == 0) return score_from_scratch(game, mover);
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
  // The search board's kept score, and the tests' count from scratch, against counts by hand.
  TicTacToe game;
  const auto score = [&game](int player) {
    const int kept = detail::SearchBoard(detail::lines_for(game.rules()), game).score(player);
    CHECK(kept == score_from_scratch(game, player));
    return kept;
  };
  play_moves(game, {4});  // X in the centre: 4 lines (a row, a column, both diagonals) of one X
  CHECK(score(0) == 4 * 1 + 1);  // and the centre column's bonus
  CHECK(score(1) == -5);
  play_moves(game, {0});  // O in a corner: closes X's main diagonal; O's row 0 and column 0 open
  // X: the middle row and column and the other diagonal (1 each), bonus 1; O: 2 lines of one.
  CHECK(score(0) == 3 + 1 - 2);
  play_moves(game, {3});  // X at row 1, col 0: the middle row now holds 2 X (worth 4)
  // X: middle row 4, middle column 1, anti-diagonal 1, bonus 1; O: row 0 only (column 0 closed).
  CHECK(score(0) == 4 + 1 + 1 + 1 - 1);
}

// Random positions of `Game`: 0 to max_moves - 1 random moves from the empty board, none over.
template <class Game>
std::vector<Game> random_positions(int count, int max_moves, std::uint64_t seed) {
  Rng rng(seed);
  const ScriptedPlayer<Game> random = random_legal_player<Game>();
  std::vector<Game> positions;
  while (static_cast<int>(positions.size()) < count) {
    Game game;
    const int moves = static_cast<int>(rng.next_u64() % static_cast<std::uint64_t>(max_moves));
    for (int m = 0; m < moves && !game.over(); ++m)
      play_moves(game, {random(game, game.to_move(), rng)});
    if (!game.over()) positions.push_back(game);
  }
  return positions;
}

TEST_CASE("search_player: the search board keeps the horizon's score move by move") {
  // Whole random games played on a search board and on the game itself: after every move the
  // kept score is the score counted from scratch, a win is reported on the move that makes it,
  // and taking the moves back restores each score on the way.
  Rng rng(13);
  const ScriptedPlayer<ConnectFour> random = random_legal_player<ConnectFour>();
  for (int g = 0; g < 20; ++g) {
    ConnectFour game;
    detail::SearchBoard board(detail::lines_for(game.rules()), game);
    std::vector<detail::SearchBoard::Move> moves;
    std::vector<int> scores{board.score(0)};
    while (!game.over()) {
      const std::int32_t a = random(game, game.to_move(), rng);
      REQUIRE(board.legal(a));
      moves.push_back(board.play(a));
      play_moves(game, {a});
      CAPTURE(g);
      CHECK(moves.back().won == (game.winner() >= 0));
      CHECK(board.to_move() == (game.over() ? board.to_move() : game.to_move()));
      CHECK(board.score(0) == score_from_scratch(game, 0));
      CHECK(board.score(1) == score_from_scratch(game, 1));
      scores.push_back(board.score(0));
    }
    CHECK(board.full() == (game.moves() == 42));
    // A search board set up from the finished position agrees with the one that played it.
    CHECK(detail::SearchBoard(detail::lines_for(game.rules()), game).score(0) == board.score(0));
    while (!moves.empty()) {
      board.undo(moves.back());
      moves.pop_back();
      scores.pop_back();
      CHECK(board.score(0) == scores.back());
    }
    CHECK(board.score(0) == 0);
    for (std::int32_t a = 0; a < 7; ++a) CHECK(board.legal(a));
  }
}

TEST_CASE("search_player: alpha-beta's values equal plain minimax's on random positions") {
  const int inf = std::numeric_limits<int>::max();
  for (const int depth : {1, 2, 3, 4}) {
    // Fewer positions at depth 4, where plain minimax visits up to 7^4 leaves.
    for (const ConnectFour& game : random_positions<ConnectFour>(depth < 4 ? 30 : 8, 20, 5)) {
      CAPTURE(depth);
      CAPTURE(game.to_string());
      CHECK(detail::negamax(game, depth) == plain_minimax(game, depth));
      // Windows: exact inside one, a fail-soft bound on the right side outside it.
      detail::SearchBoard board(detail::lines_for(game.rules()), game);
      const int exact = plain_minimax(game, depth);
      CHECK(detail::negamax(board, depth, exact - 1, inf) == exact);
      CHECK(detail::negamax(board, depth, -inf, exact + 1) == exact);
      CHECK(detail::negamax(board, depth, exact, inf) <= exact);
      CHECK(detail::negamax(board, depth, -inf, exact) >= exact);
    }
  }
  // The player's picks are exactly the moves of the best plain-minimax value (ties at random).
  Rng rng(17);
  for (const ConnectFour& game : random_positions<ConnectFour>(12, 20, 21)) {
    std::set<std::int32_t> best;
    int best_value = std::numeric_limits<int>::min();
    for (std::int32_t a = 0; a < 7; ++a) {
      if (!game.legal(a)) continue;
      ConnectFour next = game;
      play_moves(next, {a});
      const int value = !next.over()         ? -plain_minimax(next, 2)
                        : next.winner() >= 0 ? detail::kWon + 3
                                             : 0;
      if (value > best_value) best.clear();
      if (value >= best_value) {
        best_value = value;
        best.insert(a);
      }
    }
    const ScriptedPlayer<ConnectFour> player = search_player<ConnectFour>(3);
    std::set<std::int32_t> picked;
    for (int i = 0; i < 64; ++i) picked.insert(player(game, game.to_move(), rng));
    CAPTURE(game.to_string());
    CHECK(picked == best);
  }
  // Tic-tac-toe (no gravity, a centre column): searched to the end, and at depth 2.
  for (const TicTacToe& game : random_positions<TicTacToe>(40, 6, 9)) {
    CAPTURE(game.to_string());
    for (const int depth : {2, 9})
      CHECK(detail::negamax(game, depth) == plain_minimax(game, depth));
  }
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
  // A board whose open lines could outscore a won game is refused by name, not searched wrong.
  CHECK_THROWS_WITH_AS(detail::Lines(BoardGameRules{"long", 1, 40, 13, false}),
                       doctest::Contains("long (1 x 40, 13 in a row) is too large"), Error);
  CHECK_THROWS_WITH_AS(detail::Lines(BoardGameRules{"big", 60, 60, 9, false}),
                       doctest::Contains("big (60 x 60, 9 in a row) is too large"), Error);
  CHECK(detail::Lines(ConnectFour().rules()).size == 69);
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
