// search_player: a fixed opponent for the board games (env/board_game.hpp) that looks `depth`
// moves ahead: negamax with alpha-beta pruning on a board of its own (moves played and taken
// back, each line's stones and the score kept move by move), a won line worth more the
// sooner it comes, and at the horizon a count of the lines still open to each side. A league
// can hold it beside the random player (examples/selfplay --search-opponents 2), so that the
// learner meets an opponent that punishes a missed threat from the first game on, which self-play
// alone reaches late or never (docs/results.md, Connect Four).
//
// The horizon's score: every run of in_a_row cells (across, down, both diagonals) that holds
// stones of one side only is worth 4^(stones - 1) to that side, and a stone in the centre column
// one more; the score is the mover's total less the other's. Among moves of equal value the player
// picks one at random, so two games from one position differ. The tests' reference players
// (test/support/board_players.hpp) are written apart from this one and score differently.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "seedrl/acting/players_actor.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/env/board_game.hpp"

namespace seedrl {

namespace board_search_detail {

inline constexpr int kWon = 1 << 24;  // above any horizon score

// The board's lines: every run of in_a_row cells (across, down, both diagonals), and the lines
// through each cell, built once per rule set.
struct Lines {
  explicit Lines(const BoardGameRules& of);

  bool matches(const BoardGameRules& other) const {
    return rules.rows == other.rows && rules.columns == other.columns &&
           rules.in_a_row == other.in_a_row && rules.gravity == other.gravity;
  }
  BoardGameRules rules;
  std::size_t size = 0;               // lines
  std::vector<std::int32_t> through;  // the lines through cell c: through[first[c] .. first[c+1])
  std::vector<std::int32_t> first;
  std::vector<std::int32_t> order;  // the moves in the order the search tries them
};

// A line's worth to player 0, holding `mine` of player 0's stones and `theirs` of player 1's.
inline int line_worth(int mine, int theirs) {
  if (mine > 0 && theirs > 0) return 0;
  if (mine > 0) return 1 << (2 * (mine - 1));
  if (theirs > 0) return -(1 << (2 * (theirs - 1)));
  return 0;
}

// A position the search plays moves on and takes back, with each line's stones per side and
// the horizon's score for player 0 kept move by move, so that a node costs the lines through one
// cell instead of a copy of the game and a scan of every line.
class SearchBoard {
 public:
  struct Move {
    std::int32_t cell = 0;
    int score = 0;  // player 0's score before the move
    bool won = false;
  };

  SearchBoard(const Lines& lines, const BoardGame& game)
      : lines_(lines),
        cells_(static_cast<std::size_t>(lines.rules.rows * lines.rules.columns), 0),
        stones_(lines.size, {0, 0}),
        free_row_(static_cast<std::size_t>(lines.rules.columns), lines.rules.rows - 1) {
    const BoardGameRules& r = lines.rules;
    for (std::int32_t row = r.rows - 1; row >= 0; --row) {
      for (std::int32_t col = 0; col < r.columns; ++col) {
        const int stone = game.cell(row, col);
        if (stone == 0) continue;
        to_move_ = stone - 1;
        place(row * r.columns + col);
      }
    }
    to_move_ = game.to_move();
    moves_ = game.moves();
  }

  int to_move() const { return to_move_; }
  /// The horizon's score for `player` (see the header), kept up to date.
  int score(int player) const { return player == 0 ? score_ : -score_; }
  bool full() const { return moves_ == static_cast<std::int32_t>(cells_.size()); }
  /// The moves, the centre's first (Lines::order).
  const std::vector<std::int32_t>& order() const { return lines_.order; }
  /// As BoardGame::legal on a game that is not over: the cell, or the column's top cell, empty.
  bool legal(std::int32_t action) const { return cells_[static_cast<std::size_t>(action)] == 0; }

  /// Plays a legal `action` for the player to move.
  Move play(std::int32_t action) {
    const BoardGameRules& r = lines_.rules;
    Move move;
    move.score = score_;
    move.cell = action;
    if (r.gravity) {
      move.cell = free_row_[static_cast<std::size_t>(action)] * r.columns + action;
    }
    move.won = place(move.cell);
    ++moves_;
    to_move_ = 1 - to_move_;
    return move;
  }

  /// Takes back the last `move`.
  void undo(const Move& move) {
    to_move_ = 1 - to_move_;
    --moves_;
    const auto side = static_cast<std::size_t>(to_move_);
    for (std::int32_t i = lines_.first[static_cast<std::size_t>(move.cell)];
         i < lines_.first[static_cast<std::size_t>(move.cell) + 1]; ++i)
      --stones_[static_cast<std::size_t>(lines_.through[static_cast<std::size_t>(i)])][side];
    cells_[static_cast<std::size_t>(move.cell)] = 0;
    if (lines_.rules.gravity)
      ++free_row_[static_cast<std::size_t>(move.cell % lines_.rules.columns)];
    score_ = move.score;
  }

 private:
  // Puts the mover's stone on `cell`, updating the lines and the score; true if it completes one.
  bool place(std::int32_t cell) {
    const BoardGameRules& r = lines_.rules;
    const auto side = static_cast<std::size_t>(to_move_);
    bool won = false;
    for (std::int32_t i = lines_.first[static_cast<std::size_t>(cell)];
         i < lines_.first[static_cast<std::size_t>(cell) + 1]; ++i) {
      std::array<std::uint8_t, 2>& s =
          stones_[static_cast<std::size_t>(lines_.through[static_cast<std::size_t>(i)])];
      const int before = line_worth(s[0], s[1]);
      ++s[side];
      score_ += line_worth(s[0], s[1]) - before;
      won = won || s[side] == r.in_a_row;
    }
    const std::int32_t col = cell % r.columns;
    if (r.columns % 2 == 1 && col == r.columns / 2) score_ += to_move_ == 0 ? 1 : -1;
    cells_[static_cast<std::size_t>(cell)] = static_cast<std::int8_t>(to_move_ + 1);
    if (r.gravity) --free_row_[static_cast<std::size_t>(col)];
    return won;
  }

  const Lines& lines_;
  std::vector<std::int8_t> cells_;
  std::vector<std::array<std::uint8_t, 2>> stones_;  // per line: player 0's, player 1's
  std::vector<std::int32_t> free_row_;               // gravity: each column's lowest empty row
  int to_move_ = 0;
  std::int32_t moves_ = 0;
  int score_ = 0;
};

// The lines of `rules`, kept per thread for the last rule set searched.
inline const Lines& lines_for(const BoardGameRules& rules) {
  thread_local std::optional<Lines> cached;
  if (!cached || !cached->matches(rules)) cached.emplace(rules);
  return *cached;
}

// The value of the position for the player to move, searching `depth` more moves in
// (alpha, beta), fail-soft; each move played on `board` and taken back, the centre's first.
inline int negamax(SearchBoard& board, int depth, int alpha, int beta) {
  const int mover = board.to_move();
  if (depth == 0) return board.score(mover);
  int best = -std::numeric_limits<int>::max();
  bool any = false;
  for (const std::int32_t a : board.order()) {
    if (!board.legal(a)) continue;
    any = true;
    const SearchBoard::Move move = board.play(a);
    const int value = move.won       ? kWon + depth
                      : board.full() ? 0
                                     : -negamax(board, depth - 1, -beta, -alpha);
    board.undo(move);
    best = std::max(best, value);
    alpha = std::max(alpha, value);
    if (alpha >= beta) break;
  }
  return any ? best : 0;
}

// The value of `game` (not over) for the player to move, searched `depth` moves in.
inline int negamax(const BoardGame& game, int depth) {
  SearchBoard board(lines_for(game.rules()), game);
  constexpr int kInfinity = std::numeric_limits<int>::max();
  return negamax(board, depth, -kInfinity, kInfinity);
}

}  // namespace board_search_detail

/// A player that searches `depth` (>= 1) moves ahead; see the header. Game: a BoardGame.
template <class Game>
ScriptedPlayer<Game> search_player(int depth) {
  static_assert(std::is_base_of_v<BoardGame, Game>, "search_player plays the board games");
  SEEDRL_REQUIRE(depth >= 1 && depth <= 8, "search_player: depth must be in [1, 8], got ", depth);
  return [depth](const Game& game, int player, Rng& rng) {
    SEEDRL_REQUIRE(game.acts(player), "search_player: player ", player, " does not move now");
    thread_local std::vector<std::int32_t> best_moves;
    best_moves.clear();
    int best = -std::numeric_limits<int>::max();
    constexpr int kInfinity = std::numeric_limits<int>::max();
    using namespace board_search_detail;
    SearchBoard board(lines_for(game.rules()), game);
    // Moves are tried in index order; a move below the best so far may fail low (a bound under
    // best - 1), one at or above it comes back exact, so the tie set is the exact one.
    for (std::int32_t a = 0; a < game.actions(); ++a) {
      if (!board.legal(a)) continue;
      const SearchBoard::Move move = board.play(a);
      const int floor = best == -kInfinity ? -kInfinity : best - 1;
      const int value = move.won       ? kWon + depth
                        : board.full() ? 0
                                       : -negamax(board, depth - 1, -kInfinity, -floor);
      board.undo(move);
      if (value > best) best_moves.clear();
      if (value >= best) {
        best = value;
        best_moves.push_back(a);
      }
    }
    SEEDRL_REQUIRE(!best_moves.empty(), "search_player: no legal move");
    return best_moves[static_cast<std::size_t>(rng.next_u64() % best_moves.size())];
  };
}

}  // namespace seedrl
