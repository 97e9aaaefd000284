// search_player: a fixed opponent for the board games (env/board_game.hpp) that looks `depth`
// moves ahead: negamax with alpha-beta pruning over copies of the game, a won line worth more the
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
#include <limits>
#include <type_traits>
#include <vector>

#include "seedrl/acting/players_actor.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/env/board_game.hpp"

namespace seedrl {

namespace board_search_detail {

inline constexpr int kWon = 1 << 24;  // above any horizon score

// The horizon's score of `game` for `player` (see the header).
inline int open_lines_score(const BoardGame& game, int player) {
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

// The value of `game` for the player to move, searching `depth` more moves in (alpha, beta).
inline int negamax(const BoardGame& game, int depth, int alpha, int beta) {
  const int mover = game.to_move();
  if (depth == 0) return open_lines_score(game, mover);
  int best = -std::numeric_limits<int>::max();
  bool any = false;
  for (std::int32_t a = 0; a < game.actions(); ++a) {
    if (!game.legal(a)) continue;
    any = true;
    BoardGame next = game;
    const std::array<std::int32_t, 2> both{a, a};
    next.step(both);
    int value;
    if (next.over()) {
      value = next.winner() == mover ? kWon + depth : next.winner() < 0 ? 0 : -(kWon + depth);
    } else {
      value = -negamax(next, depth - 1, -beta, -alpha);
    }
    best = std::max(best, value);
    alpha = std::max(alpha, value);
    if (alpha >= beta) break;
  }
  return any ? best : 0;
}

}  // namespace board_search_detail

/// A player that searches `depth` (>= 1) moves ahead; see the header. Game: a BoardGame.
template <class Game>
ScriptedPlayer<Game> search_player(int depth) {
  static_assert(std::is_base_of_v<BoardGame, Game>, "search_player plays the board games");
  SEEDRL_REQUIRE(depth >= 1 && depth <= 8, "search_player: depth must be in [1, 8], got ", depth);
  return [depth](const Game& game, int player, Rng& rng) {
    SEEDRL_REQUIRE(game.acts(player), "search_player: player ", player, " does not move now");
    // Every move at the root gets an exact value (a full window), so that ties are real ties.
    thread_local std::vector<std::int32_t> best_moves;
    best_moves.clear();
    int best = -std::numeric_limits<int>::max();
    constexpr int kInfinity = std::numeric_limits<int>::max();
    for (std::int32_t a = 0; a < game.actions(); ++a) {
      if (!game.legal(a)) continue;
      BoardGame next = game;
      const std::array<std::int32_t, 2> both{a, a};
      next.step(both);
      using board_search_detail::kWon;
      const int value = !next.over()
                            ? -board_search_detail::negamax(next, depth - 1, -kInfinity, kInfinity)
                        : next.winner() == player ? kWon + depth
                        : next.winner() < 0       ? 0
                                                  : -(kWon + depth);
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
