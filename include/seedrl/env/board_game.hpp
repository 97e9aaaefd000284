// Two-player board games where the players alternate and the first to line up `in_a_row` of
// their stones wins (tic-tac-toe, Connect Four): a PlayersEnvironment (env/players.hpp).
//
// The encoding is fixed, so that programs outside seedrl can check trained agents:
// - observation f32 [2, rows, columns] seen by a player: plane 0 its own stones, plane 1 the
//   opponent's; row 0 is the top row;
// - action: the cell `row * columns + column` where stones are placed (tic-tac-toe), or the
//   column 0..columns-1 a stone drops into (gravity: Connect Four);
// - step field "action_mask" u8 [actions]: 1 where the player to move may play (an empty cell, a
//   column that is not full); all 0 for the player who waits.
// Player 0 moves first. The winner receives +1 and the loser -1 at the final move; a full board
// with no line is a draw (0 each). A move the mask does not allow loses the game on the spot
// (the mover -1, the other +1): an agent that ignores its mask is beaten, not obeyed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "seedrl/env/players.hpp"

namespace seedrl {

struct BoardGameRules {
  const char* name = "board";
  std::int32_t rows = 3;
  std::int32_t columns = 3;
  std::int32_t in_a_row = 3;
  bool gravity = false;  ///< stones drop to the lowest empty cell of the chosen column
};

class BoardGame {
 public:
  explicit BoardGame(const BoardGameRules& rules) : rules_(rules) {
    SEEDRL_REQUIRE(rules.rows >= 1 && rules.columns >= 1 && rules.rows * rules.columns <= 4096,
                   rules.name, ": the board must have 1 to 4096 cells, got ", rules.rows, " x ",
                   rules.columns);
    SEEDRL_REQUIRE(rules.in_a_row >= 2 && rules.in_a_row <= std::max(rules.rows, rules.columns),
                   rules.name, ": in_a_row must be in [2, the longer side], got ", rules.in_a_row);
    reset();
  }

  int players() const { return 2; }
  TensorSpec observation_spec() const { return {{2, rules_.rows, rules_.columns}, DType::f32}; }
  ActionSpec action_spec() const { return {actions()}; }
  std::vector<StepFieldSpec> step_fields() const {
    return {{kActionMaskField, {{actions()}, DType::u8}}};
  }

  void reset() {
    cells_.assign(static_cast<std::size_t>(rules_.rows * rules_.columns), 0);
    to_move_ = 0;
    moves_ = 0;
    winner_ = -1;
    over_ = false;
  }

  bool acts(int player) const { return !over_ && player == to_move_; }

  /// `player`'s view: its stones in plane 0, the opponent's in plane 1, and its mask.
  void observe(int player, const StepRow& row) const;

  /// Plays actions[to_move()]; the other entry is ignored.
  PlayersStepResult step(std::span<const std::int32_t> actions_of) {
    SEEDRL_REQUIRE(!over_, rules_.name, ": step() after the game ended (reset() first)");
    SEEDRL_REQUIRE(actions_of.size() >= 2, rules_.name,
                   ": step() takes one action per player, got ", actions_of.size());
    const int mover = to_move_;
    const std::int32_t action = actions_of[static_cast<std::size_t>(mover)];
    PlayersStepResult result;
    ++moves_;
    if (!legal(action)) {
      ++illegal_moves_;
      return finish(result, 1 - mover);
    }
    const std::int32_t cell = target_cell(action);
    cells_[static_cast<std::size_t>(cell)] = static_cast<std::int8_t>(mover + 1);
    if (lines_up(cell)) return finish(result, mover);
    if (moves_ == rules_.rows * rules_.columns) return finish(result, -1);
    to_move_ = 1 - mover;
    return result;
  }

  const BoardGameRules& rules() const { return rules_; }
  std::int32_t actions() const { return rules_.gravity ? rules_.columns : cells_count(); }
  int to_move() const { return to_move_; }
  bool over() const { return over_; }
  /// The winner once the game is over, -1 for a draw (or while it runs).
  int winner() const { return winner_; }
  std::int32_t moves() const { return moves_; }
  /// Moves the mask did not allow, over the environment's life (each lost its game).
  std::int64_t illegal_moves() const { return illegal_moves_; }
  /// 0 empty, 1 a stone of player 0, 2 one of player 1; row 0 on top.
  int cell(std::int32_t row, std::int32_t column) const {
    return cells_[static_cast<std::size_t>(row * rules_.columns + column)];
  }
  bool legal(std::int32_t action) const {
    if (over_ || action < 0 || action >= actions()) return false;
    // The cell itself, or with gravity the column's top cell (index `action` in row 0).
    return cells_[static_cast<std::size_t>(action)] == 0;
  }

  /// The board as text, X for player 0 and O for player 1, columns numbered below when stones
  /// drop into columns, cells numbered in a second grid otherwise.
  std::string to_string() const {
    std::string s;
    auto number = [&s](std::int32_t c, std::int32_t value) {
      if (c > 0) s += ' ';
      s += std::to_string(value);
    };
    for (std::int32_t r = 0; r < rules_.rows; ++r) {
      for (std::int32_t c = 0; c < rules_.columns; ++c) {
        if (c > 0) s += ' ';
        s += ".XO"[cell(r, c)];
      }
      if (!rules_.gravity) {
        s += "    ";
        for (std::int32_t c = 0; c < rules_.columns; ++c) number(c, r * rules_.columns + c);
      }
      s += '\n';
    }
    if (rules_.gravity) {
      for (std::int32_t c = 0; c < rules_.columns; ++c) number(c, c);
      s += '\n';
    }
    return s;
  }

 private:
  std::int32_t cells_count() const { return rules_.rows * rules_.columns; }

  // Where a legal action puts its stone: the cell itself, or the lowest empty one of the column.
  std::int32_t target_cell(std::int32_t action) const {
    if (!rules_.gravity) return action;
    for (std::int32_t r = rules_.rows - 1; r >= 0; --r) {
      if (cell(r, action) == 0) return r * rules_.columns + action;
    }
    return action;  // unreachable for a legal action
  }

  // Whether the stone at `index` completes a line of in_a_row in any of the four directions.
  bool lines_up(std::int32_t index) const {
    const std::int32_t r0 = index / rules_.columns, c0 = index % rules_.columns;
    const int stone = cell(r0, c0);
    constexpr std::int32_t kDirections[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
    for (const auto& d : kDirections) {
      std::int32_t count = 1;
      for (const int sign : {1, -1}) {
        std::int32_t r = r0 + sign * d[0], c = c0 + sign * d[1];
        while (r >= 0 && r < rules_.rows && c >= 0 && c < rules_.columns && cell(r, c) == stone) {
          ++count;
          r += sign * d[0];
          c += sign * d[1];
        }
      }
      if (count >= rules_.in_a_row) return true;
    }
    return false;
  }

  PlayersStepResult& finish(PlayersStepResult& result, int winner) {
    over_ = true;
    winner_ = winner;
    result.terminated = true;
    if (winner >= 0) {
      result.rewards[static_cast<std::size_t>(winner)] = 1.0f;
      result.rewards[static_cast<std::size_t>(1 - winner)] = -1.0f;
    }
    return result;
  }

  BoardGameRules rules_;
  std::vector<std::int8_t> cells_;
  int to_move_ = 0;
  std::int32_t moves_ = 0;
  int winner_ = -1;
  bool over_ = false;
  std::int64_t illegal_moves_ = 0;
};

/// Tic-tac-toe: 3 x 3, three in a row; observation f32 [2, 3, 3], action the cell row * 3 + col.
class TicTacToe : public BoardGame {
 public:
  TicTacToe() : BoardGame({"tictactoe", 3, 3, 3, false}) {}
};

/// Connect Four: 6 rows x 7 columns, four in a row, stones drop; observation f32 [2, 6, 7] (row 0
/// on top), action the column 0-6, masked when full.
class ConnectFour : public BoardGame {
 public:
  ConnectFour() : BoardGame({"connect4", 6, 7, 4, true}) {}
};

static_assert(PlayersEnvironment<TicTacToe>);
static_assert(PlayersEnvironment<ConnectFour>);

}  // namespace seedrl
