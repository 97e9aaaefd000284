// The two-player board games (env/board_game.hpp): turn order, each side's observation planes
// and mask, stones dropping in Connect Four, wins along rows, columns and both diagonals, draws,
// the illegal move that loses, and long random play within the rules; and the reference players
// of test/support/board_players.hpp that the self-play targets are measured against (perfect
// tic-tac-toe play never loses and draws itself; alpha-beta takes wins, blocks threats and beats
// random play; the tactics reader files moves and losses by hand-built positions).
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <functional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/env/board_game.hpp"
#include "support/board_players.hpp"

namespace test_board_games {

using namespace seedrl;

namespace {

// One player's step buffers, as an actor keeps them.
struct View {
  explicit View(const BoardGame& game)
      : specs(game.step_fields()),
        observation(Tensor::zeros(game.observation_spec().shape, DType::f32)),
        masks{Tensor::zeros({1, game.actions()}, DType::u8)} {}
  void look(const BoardGame& game, int player) {
    game.observe(player, StepRow(observation, specs, masks, 0));
  }
  std::span<const float> planes() const {
    return {observation.data<float>(), static_cast<std::size_t>(observation.numel())};
  }
  std::span<const std::uint8_t> mask() const {
    return {masks[0].data<std::uint8_t>(), static_cast<std::size_t>(masks[0].numel())};
  }
  float plane(int p, int r, int c) const {
    const auto& s = observation.shape();
    return planes()[static_cast<std::size_t>((p * s[1] + r) * s[2] + c)];
  }

  std::vector<StepFieldSpec> specs;
  Tensor observation;
  std::vector<Tensor> masks;
};

using Player = std::function<std::int32_t(const View&)>;

// Plays `game` from its start: players[p] chooses p's moves from p's own view. Returns the
// winner (-1 a draw) and checks the turn order, the masks and the rewards on the way.
int play(BoardGame& game, const Player& first, const Player& second) {
  game.reset();
  View view(game);
  std::array<float, 2> returns{};
  while (!game.over()) {
    const int mover = game.to_move();
    REQUIRE(game.acts(mover));
    REQUIRE_FALSE(game.acts(1 - mover));
    view.look(game, 1 - mover);  // the waiting side may play nothing
    for (std::uint8_t m : view.mask()) REQUIRE(m == 0);
    view.look(game, mover);
    const std::int32_t action = (mover == 0 ? first : second)(view);
    REQUIRE(view.mask()[static_cast<std::size_t>(action)] == 1);
    std::array<std::int32_t, 2> actions{-7, -7};  // the waiting side's entry is ignored
    actions[static_cast<std::size_t>(mover)] = action;
    const PlayersStepResult r = game.step(actions);
    returns[0] += r.rewards[0];
    returns[1] += r.rewards[1];
    CHECK(r.terminated == game.over());
  }
  const int w = game.winner();
  CHECK(returns[0] == (w == 0 ? 1.0f : w == 1 ? -1.0f : 0.0f));
  CHECK(returns[1] == -returns[0]);
  return w;
}

// Plays the given actions in order (both sides), stopping early if the game ends.
PlayersStepResult play_moves(BoardGame& game, const std::vector<std::int32_t>& moves) {
  PlayersStepResult last;
  for (std::int32_t a : moves) {
    REQUIRE_FALSE(game.over());
    const std::array<std::int32_t, 2> both{a, a};
    last = game.step(both);
  }
  return last;
}

Player random_of(Rng& rng) {
  return [&rng](const View& v) { return test::random_player(v.mask(), rng); };
}
const Player kPerfect = [](const View& v) { return test::minimax_player(v.planes(), v.mask()); };
Player alphabeta(int depth) {
  return [depth](const View& v) { return test::alphabeta_player(v.planes(), v.mask(), depth); };
}

// A Connect Four view from six rows drawn top to bottom: 'x' the mover's stones, 'o' the other's.
std::vector<float> c4_planes(const std::array<const char*, 6>& rows) {
  std::vector<float> planes(2 * 6 * 7, 0.0f);
  for (std::size_t r = 0; r < 6; ++r)
    for (std::size_t c = 0; c < 7; ++c) {
      const char cell = rows[r][c];
      if (cell != '.') planes[(cell == 'x' ? 0 : 42) + r * 7 + c] = 1.0f;
    }
  return planes;
}

}  // namespace

TEST_CASE("Tic-tac-toe: the encoding, turn order and each side's planes and mask") {
  TicTacToe game;
  CHECK(game.players() == 2);
  CHECK(game.observation_spec() == TensorSpec{{2, 3, 3}, DType::f32});
  CHECK(game.action_spec().num_actions == 9);
  CHECK(game.step_fields() == std::vector<StepFieldSpec>{{"action_mask", {{9}, DType::u8}}});
  View view(game);
  play_moves(game, {4, 0});  // X in the centre, O in the top-left corner
  CHECK(game.to_move() == 0);
  view.look(game, 0);  // X to move: its stones in plane 0
  CHECK(view.plane(0, 1, 1) == 1.0f);
  CHECK(view.plane(1, 0, 0) == 1.0f);
  CHECK(view.plane(0, 0, 0) == 0.0f);
  CHECK(view.mask()[4] == 0);
  CHECK(view.mask()[0] == 0);
  CHECK(view.mask()[8] == 1);
  view.look(game, 1);  // O's side: the planes swap, and O may not move now
  CHECK(view.plane(0, 0, 0) == 1.0f);
  CHECK(view.plane(1, 1, 1) == 1.0f);
  for (std::uint8_t m : view.mask()) CHECK(m == 0);
  CHECK(game.to_string() == "O . .    0 1 2\n. X .    3 4 5\n. . .    6 7 8\n");
}

TEST_CASE("Tic-tac-toe: rows, columns and both diagonals win; a full board draws") {
  struct Case {
    std::vector<std::int32_t> moves;
    int winner;
  };
  const std::vector<Case> cases = {
      {{0, 3, 1, 4, 2}, 0},                // X: the top row
      {{0, 1, 3, 2, 6}, 0},                // X: the left column
      {{0, 1, 4, 2, 8}, 0},                // X: the main diagonal
      {{0, 2, 1, 4, 8, 6}, 1},             // O: the anti-diagonal
      {{0, 1, 2, 4, 3, 5, 7, 6, 8}, -1}};  // X O X / X O O / O X X: full, no line
  for (const Case& c : cases) {
    TicTacToe game;
    const PlayersStepResult r = play_moves(game, c.moves);
    CHECK(game.over());
    CHECK(r.terminated);
    CHECK(game.winner() == c.winner);
    CHECK(r.rewards[0] == (c.winner == 0 ? 1.0f : c.winner == 1 ? -1.0f : 0.0f));
    CHECK(r.rewards[1] == -r.rewards[0]);
  }
}

TEST_CASE("Board games: a move the mask forbids loses on the spot; bad calls are refused") {
  TicTacToe game;
  play_moves(game, {4});
  const PlayersStepResult r = play_moves(game, {4});  // O plays on X's stone
  CHECK(game.over());
  CHECK(game.winner() == 0);
  CHECK(r.rewards[1] == -1.0f);
  CHECK(r.rewards[0] == 1.0f);
  CHECK(game.illegal_moves() == 1);
  const std::array<std::int32_t, 2> moves{0, 0};
  CHECK_THROWS_WITH_AS(game.step(moves), doctest::Contains("step() after the game ended"), Error);
  game.reset();
  const std::array<std::int32_t, 1> one{0};
  CHECK_THROWS_WITH_AS(game.step(one), doctest::Contains("one action per player"), Error);
  ConnectFour c4;
  play_moves(c4, {9});  // no column 9
  CHECK(c4.winner() == 1);
  View view(c4);
  CHECK_THROWS_WITH_AS(view.look(c4, 2), doctest::Contains("player 2 out of range"), Error);
}

TEST_CASE("Connect Four: stones drop and stack, full columns are masked, four in a row wins") {
  ConnectFour game;
  CHECK(game.observation_spec() == TensorSpec{{2, 6, 7}, DType::f32});
  CHECK(game.action_spec().num_actions == 7);
  View view(game);
  play_moves(game, {3, 3, 3, 3, 3, 3});  // column 3 filled, alternating from the bottom
  CHECK(game.cell(5, 3) == 1);           // the first stone lies on the bottom row
  CHECK(game.cell(0, 3) == 2);           // the sixth on top (row 0)
  view.look(game, game.to_move());
  CHECK(view.mask()[3] == 0);
  CHECK(view.mask()[2] == 1);
  CHECK(view.plane(0, 5, 3) == 1.0f);  // player 0 to move: its bottom stone in plane 0
  CHECK(view.plane(1, 4, 3) == 1.0f);
  CHECK(game.to_string().substr(game.to_string().size() - 14) == "0 1 2 3 4 5 6\n");

  struct Case {
    std::vector<std::int32_t> moves;
    int winner;
  };
  const std::vector<Case> cases = {
      {{0, 0, 1, 1, 2, 2, 3}, 0},              // horizontal on the bottom row
      {{0, 1, 0, 1, 0, 1, 0}, 0},              // vertical
      {{0, 1, 1, 2, 2, 3, 2, 3, 3, 6, 3}, 0},  // diagonal rising to the right
      {{6, 5, 5, 4, 4, 3, 4, 3, 3, 0, 3}, 0},  // diagonal rising to the left
      {{0, 1, 0, 1, 2, 1, 0, 1}, 1},           // O: column 1, X three in column 0
      {{3, 3, 4, 4, 5, 2, 6}, 0}};             // X: columns 3-6 of the bottom row
  for (const Case& c : cases) {
    ConnectFour g;
    const PlayersStepResult r = play_moves(g, c.moves);
    CHECK(g.over());
    CHECK(g.winner() == c.winner);
    CHECK(r.rewards[static_cast<std::size_t>(c.winner)] == 1.0f);
  }
}

TEST_CASE("Board games: long random play keeps to the rules and ends in at most every cell") {
  Rng rng(5);
  int results[3] = {0, 0, 0};
  TicTacToe ttt;
  ConnectFour c4;
  for (int g = 0; g < 400; ++g) {
    BoardGame& game = g % 2 ? static_cast<BoardGame&>(c4) : ttt;
    const int w = play(game, random_of(rng), random_of(rng));
    CHECK(game.moves() <= game.rules().rows * game.rules().columns);
    ++results[w + 1];
  }
  CHECK(ttt.illegal_moves() == 0);
  CHECK(c4.illegal_moves() == 0);
  CHECK(results[1] > 100);  // the first player wins most random games of both
  CHECK(results[2] > 30);
  CHECK(results[0] > 0);  // and some are drawn (tic-tac-toe)
}

TEST_CASE("Reference players: perfect tic-tac-toe never loses, and draws against itself") {
  Rng rng(9);
  TicTacToe game;
  CHECK(play(game, kPerfect, kPerfect) == -1);
  for (int g = 0; g < 100; ++g) {
    CHECK(play(game, kPerfect, random_of(rng)) != 1);
    CHECK(play(game, random_of(rng), kPerfect) != 0);
  }
  // It takes a win when one is there, and avoids the corner that loses to a fork.
  game.reset();
  play_moves(game, {0, 3, 1, 4});  // X to move: 2 wins the top row
  View view(game);
  view.look(game, 0);
  CHECK(test::minimax_player(view.planes(), view.mask()) == 2);
  game.reset();
  play_moves(game, {0, 4, 8});  // O to move: a corner (2 or 6) lets X fork; an edge draws
  view.look(game, 1);
  const std::int32_t o = test::minimax_player(view.planes(), view.mask());
  CHECK((o == 1 || o == 3 || o == 5 || o == 7));
}

TEST_CASE("Reference players: perfect tic-tac-toe with random tie-breaks stays perfect, varies") {
  Rng rng(11), ties(12);
  TicTacToe game;
  const Player varied = [&ties](const View& v) {
    return test::minimax_player(v.planes(), v.mask(), &ties);
  };
  // Still perfect: it never loses to random play from either side, and draws the deterministic
  // perfect player (and itself).
  for (int g = 0; g < 100; ++g) {
    CHECK(play(game, varied, random_of(rng)) != 1);
    CHECK(play(game, random_of(rng), varied) != 0);
  }
  // Against a deterministic player it meets more games than the one the lowest cell gives: as the
  // second player few (the corner the other opens with leaves it the centre alone, and little
  // after), as the first many (every opening move draws).
  std::set<std::string> finals[2];
  for (int g = 0; g < 40; ++g) {
    CHECK(play(game, kPerfect, varied) == -1);
    finals[0].insert(game.to_string());
    CHECK(play(game, varied, kPerfect) == -1);
    finals[1].insert(game.to_string());
  }
  CHECK(finals[0].size() >= 2);
  CHECK(finals[1].size() >= 10);
  CHECK(play(game, varied, varied) == -1);
}

TEST_CASE("Reference players: alpha-beta takes a win, blocks a threat and beats random play") {
  ConnectFour game;
  View view(game);
  play_moves(game, {0, 6, 1, 6, 2});  // O to move: X threatens 3 on the bottom row
  view.look(game, 1);
  CHECK(test::alphabeta_player(view.planes(), view.mask(), 2) == 3);
  game.reset();
  play_moves(game, {0, 6, 1, 6, 2, 6});  // X to move: 3 wins
  view.look(game, 0);
  CHECK(test::alphabeta_player(view.planes(), view.mask(), 1) == 3);
  CHECK(test::alphabeta_player(view.planes(), view.mask(), 4) == 3);
  Rng rng(11);
  int wins_first = 0, wins_second = 0;
  for (int g = 0; g < 40; ++g) {
    wins_first += play(game, alphabeta(2), random_of(rng)) == 0;
    wins_second += play(game, random_of(rng), alphabeta(2)) == 1;
  }
  CHECK(wins_first >= 38);
  CHECK(wins_second >= 36);
  // Deeper search beats shallower search as the first player.
  CHECK(play(game, alphabeta(4), alphabeta(1)) == 0);
}

TEST_CASE("Reference players: the tactics reader files wins, blocks, forks and moves that let in") {
  using Kind = test::ConnectFourTactics::Kind;
  test::ConnectFourTactics t;
  t.start();
  // x wins in column 3; o has nothing.
  const auto win = c4_planes({".......", ".......", ".......", ".......", "....o..", "xxx.o.o"});
  t.see(win, 3);
  CHECK(t.last == Kind::kNone);
  t.see(win, 5);
  CHECK(t.last == Kind::kMissedWin);
  CHECK(t.wins_open == 2);
  CHECK(t.wins_taken == 1);
  CHECK(t.games_missed_win == 1);
  t.see(win, 5);
  CHECK(t.games_missed_win == 1);  // games, not moves
  // o wins in column 3 unless x blocks it.
  const auto block = c4_planes({".......", ".......", ".......", ".......", "....x..", "ooo.x.x"});
  t.see(block, 3);
  CHECK(t.last == Kind::kNone);
  t.see(block, 6);
  CHECK(t.last == Kind::kMissedBlock);
  CHECK(t.blocks_open == 2);
  CHECK(t.blocked == 1);
  // o wins in column 0 and in column 4: a fork.
  t.see(c4_planes({".......", ".......", ".......", ".......", ".....x.", ".ooo.xx"}), 0);
  CHECK(t.last == Kind::kFork);
  CHECK(t.forks == 1);
  // o's row of three waits on the cell above column 3's landing: dropping there lets o in,
  // column 6 does not.
  const auto under = c4_planes({".......", ".......", ".......", ".......", "ooo....", "xox..xx"});
  t.see(under, 6);
  CHECK(t.last == Kind::kNone);
  t.see(under, 3);
  CHECK(t.last == Kind::kLetIn);
  CHECK(t.let_in == 1);
  t.lost();
  t.start();
  // Columns 0 and 5 are open, and either lets o in (a position from random play).
  t.see(c4_planes({".xoxo.o", ".xoox.x", ".oxoo.o", ".ooxx.x", "xxoxo.o", "xxxooox"}), 5);
  CHECK(t.last == Kind::kZugzwang);
  CHECK(t.let_in == 1);  // there was no other move
  t.lost();
  t.see(block, 6);
  t.lost();
  t.see(win, 3);
  t.lost();  // a loss after a move that is none of these (not one the game allows here)
  CHECK(t.lost_let_in == 1);
  CHECK(t.lost_zugzwang == 1);
  CHECK(t.lost_missed_block == 1);
  CHECK(t.lost_other == 1);
  CHECK(t.lost_missed_win + t.lost_fork == 0);
  CHECK(t.missed_win_then_lost == 1);  // the first game only
  t.drawn();
  CHECK(t.missed_win_then_drawn == 0);
}

}  // namespace test_board_games
