// RandomOpenings (env/random_openings.hpp): the opening's length is uniform over [0, max_moves],
// its moves are legal and alternate, the game is never over after a reset, a seed repeats its
// openings and another seed does not, 0 moves is the plain game, and a length the board cannot
// hold is refused by name.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <set>
#include <string>

#include "seedrl/core/error.hpp"
#include "seedrl/env/board_game.hpp"
#include "seedrl/env/random_openings.hpp"

namespace test_random_openings {

using namespace seedrl;

namespace {

// The board as a string of cells (0 empty, 1 X, 2 O), and the stones of each side.
struct Board {
  std::string cells;
  std::array<int, 2> stones{};
};

Board read(const BoardGame& game) {
  Board b;
  for (std::int32_t r = 0; r < game.rules().rows; ++r) {
    for (std::int32_t c = 0; c < game.rules().columns; ++c) {
      const int v = game.cell(r, c);
      b.cells += static_cast<char>('0' + v);
      if (v > 0) ++b.stones[static_cast<std::size_t>(v - 1)];
    }
  }
  return b;
}

// No stone floats: below every stone of a Connect Four board is another or the floor.
bool settled(const BoardGame& game) {
  for (std::int32_t r = 0; r + 1 < game.rules().rows; ++r)
    for (std::int32_t c = 0; c < game.rules().columns; ++c)
      if (game.cell(r, c) != 0 && game.cell(r + 1, c) == 0) return false;
  return true;
}

}  // namespace

TEST_CASE("RandomOpenings: a uniform number of legal, alternating moves, never a finished game") {
  RandomOpenings<ConnectFour> game(ConnectFour(), 4, 17);
  std::array<int, 5> lengths{};
  std::set<std::string> positions;
  const int resets = 5000;
  for (int i = 0; i < resets; ++i) {
    game.reset();
    const Board b = read(game);
    const int k = b.stones[0] + b.stones[1];
    REQUIRE(k <= 4);
    ++lengths[static_cast<std::size_t>(k)];
    CHECK(b.stones[0] == (k + 1) / 2);  // X moves first: X has ceil(k / 2) stones
    CHECK(game.to_move() == k % 2);
    CHECK(game.moves() == k);
    CHECK_FALSE(game.over());
    CHECK(settled(game));
    positions.insert(b.cells);
  }
  // Each length 1/5 of the resets: 1,000 expected, sd 28; 900 - 1,100 is 3.5 sd either side.
  for (int k = 0; k <= 4; ++k) {
    INFO("length ", k);
    CHECK(lengths[static_cast<std::size_t>(k)] > 900);
    CHECK(lengths[static_cast<std::size_t>(k)] < 1100);
  }
  // Many positions, not a few openings repeated: 1 + 7 + 49 of 0 - 2 stones, a few hundred of 3
  // and more than a thousand of 4, drawn 1,000 times each (894 distinct with this seed).
  CHECK(positions.size() > 750);
  // The game goes on from the opening under the usual rules.
  std::array<std::int32_t, 2> actions{3, 3};
  game.step(actions);
  CHECK(game.moves() == read(game).stones[0] + read(game).stones[1]);
}

TEST_CASE("RandomOpenings: an opening that ends the game is drawn again") {
  // Up to 8 random moves on tic-tac-toe's board: about a third of the longest ones line up three.
  RandomOpenings<TicTacToe> game(TicTacToe(), 8, 3);
  int long_openings = 0;
  for (int i = 0; i < 3000; ++i) {
    game.reset();
    const Board b = read(game);
    REQUIRE_FALSE(game.over());
    REQUIRE(game.acts(game.to_move()));
    long_openings += b.stones[0] + b.stones[1] >= 7;
  }
  CHECK(long_openings > 300);  // lengths 7 and 8 are still drawn, and redrawn when they end it
}

TEST_CASE(
    "RandomOpenings: a seed repeats its openings, another seed does not, 0 is the plain game") {
  RandomOpenings<ConnectFour> a(ConnectFour(), 6, 5), b(ConnectFour(), 6, 5),
      c(ConnectFour(), 6, 6);
  int same_as_other_seed = 0;
  for (int i = 0; i < 200; ++i) {
    a.reset();
    b.reset();
    c.reset();
    CHECK(read(a).cells == read(b).cells);
    same_as_other_seed += read(a).cells == read(c).cells;
  }
  CHECK(same_as_other_seed < 60);
  RandomOpenings<ConnectFour> plain(ConnectFour(), 0, 5);
  for (int i = 0; i < 20; ++i) {
    plain.reset();
    CHECK(read(plain).cells == std::string(42, '0'));
    CHECK(plain.to_move() == 0);
  }
}

TEST_CASE("RandomOpenings: a length the board cannot hold is refused by name") {
  CHECK_THROWS_WITH_AS(RandomOpenings<TicTacToe>(TicTacToe(), 9, 1),
                       doctest::Contains("random openings of 0 to 9 moves"), Error);
  CHECK_THROWS_WITH_AS(RandomOpenings<ConnectFour>(ConnectFour(), -1, 1),
                       doctest::Contains("connect4"), Error);
}

}  // namespace test_random_openings
