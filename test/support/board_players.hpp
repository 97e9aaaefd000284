// Reference players for the board games (issue 37), written independently of seedrl's game code:
// they read only what an agent reads (the observation planes, f32 [2, rows, columns], plane 0 the
// mover's stones, and the legal-action mask) and keep their own rules (lines, drops). The random
// player, a perfect tic-tac-toe player (negamax over every position, memoised), and a Connect Four
// alpha-beta player of a given depth (negamax with pruning, centre columns first, a heuristic
// that counts open windows of four), a reader of a Connect Four player's tactics, and Standoff's
// careful player. Used by the tests of the games and by bench/selfplay_eval.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "seedrl/core/random.hpp"

namespace seedrl::test {

/// A uniformly random legal action.
inline std::int32_t random_player(std::span<const std::uint8_t> mask, Rng& rng) {
  std::vector<std::int32_t> legal;
  for (std::size_t a = 0; a < mask.size(); ++a)
    if (mask[a]) legal.push_back(static_cast<std::int32_t>(a));
  return legal.at(static_cast<std::size_t>(rng.below(legal.size())));
}

// ---- tic-tac-toe: perfect play ----

namespace ttt_detail {
// 0 empty, 1 the mover's, 2 the opponent's; a position's value for the mover: +1 win, 0 draw,
// -1 loss with perfect play, memoised by its base-3 code.
inline constexpr int kLines[8][3] = {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {0, 3, 6},
                                     {1, 4, 7}, {2, 5, 8}, {0, 4, 8}, {2, 4, 6}};
inline bool has_line(const std::array<int, 9>& b, int who) {
  for (const auto& l : kLines)
    if (b[l[0]] == who && b[l[1]] == who && b[l[2]] == who) return true;
  return false;
}
inline int code(const std::array<int, 9>& b) {
  int c = 0;
  for (int v : b) c = c * 3 + v;
  return c;
}
// The value for the side to move (its stones are 1).
inline int negamax(std::array<int, 9>& b, std::vector<std::int8_t>& memo) {
  const int key = code(b);
  if (memo[static_cast<std::size_t>(key)] != 2) return memo[static_cast<std::size_t>(key)];
  int best = -2;
  bool moved = false;
  for (int i = 0; i < 9; ++i) {
    if (b[i] != 0) continue;
    moved = true;
    b[i] = 1;
    int value = 1;
    if (!has_line(b, 1)) {
      // Swap sides: the opponent moves next with its stones as 1.
      std::array<int, 9> swapped{};
      for (int j = 0; j < 9; ++j) swapped[j] = b[j] == 0 ? 0 : 3 - b[j];
      value = -negamax(swapped, memo);
    }
    b[i] = 0;
    best = std::max(best, value);
  }
  if (!moved) best = 0;  // a full board without a line
  memo[static_cast<std::size_t>(key)] = static_cast<std::int8_t>(best);
  return best;
}
}  // namespace ttt_detail

/// A perfect tic-tac-toe player: a move of the best value, the lowest cell among equals, or with
/// `ties` one of them at random (it stays perfect; a deterministic agent then meets more than one
/// game). `observation` is f32 [2, 3, 3] (18 values).
inline std::int32_t minimax_player(std::span<const float> observation,
                                   std::span<const std::uint8_t> mask, Rng* ties = nullptr) {
  static std::vector<std::int8_t> memo(19683, 2);  // 2: not computed
  std::array<int, 9> b{};
  for (int i = 0; i < 9; ++i) b[i] = observation[i] > 0.5f ? 1 : observation[9 + i] > 0.5f ? 2 : 0;
  int best_value = -3;
  std::int32_t best = -1;
  std::uint64_t equal = 0;  // moves of the best value so far (reservoir sampling among them)
  for (int i = 0; i < 9; ++i) {
    if (!mask[static_cast<std::size_t>(i)] || b[i] != 0) continue;
    b[i] = 1;
    int value = 1;
    if (!ttt_detail::has_line(b, 1)) {
      std::array<int, 9> swapped{};
      for (int j = 0; j < 9; ++j) swapped[j] = b[j] == 0 ? 0 : 3 - b[j];
      value = -ttt_detail::negamax(swapped, memo);
    }
    b[i] = 0;
    if (value > best_value) {
      best_value = value;
      best = i;
      equal = 1;
    } else if (value == best_value && ties != nullptr && ties->below(++equal) == 0) {
      best = i;
    }
  }
  return best;
}

// ---- Connect Four: alpha-beta to a depth ----

namespace c4_detail {
inline constexpr int kRows = 6, kColumns = 7;
using Board = std::array<int, kRows * kColumns>;  // row 0 on top; 1 the mover's, 2 the other's

inline int at(const Board& b, int r, int c) {
  return b[static_cast<std::size_t>(r * kColumns + c)];
}
// The row a stone dropped into column c lands in, or -1 when the column is full.
inline int landing_row(const Board& b, int c) {
  for (int r = kRows - 1; r >= 0; --r)
    if (at(b, r, c) == 0) return r;
  return -1;
}
// Calls f(cells of one window of four) for every window on the board.
template <class F>
void for_each_window(const Board& b, F&& f) {
  constexpr int kDirections[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kColumns; ++c)
      for (const auto& d : kDirections) {
        const int r3 = r + 3 * d[0], c3 = c + 3 * d[1];
        if (r3 < 0 || r3 >= kRows || c3 < 0 || c3 >= kColumns) continue;
        std::array<int, 4> w{};
        for (int k = 0; k < 4; ++k)
          w[static_cast<std::size_t>(k)] = at(b, r + k * d[0], c + k * d[1]);
        f(w);
      }
}
inline bool wins(const Board& b, int who) {
  bool found = false;
  for_each_window(b, [&](const std::array<int, 4>& w) {
    found = found || std::all_of(w.begin(), w.end(), [&](int v) { return v == who; });
  });
  return found;
}
// Open windows: 3 of mine and an empty cell count 5, 2 and two empty 2; the opponent's likewise
// negative; a stone in the centre column 3.
inline int heuristic(const Board& b) {
  int score = 0;
  for (int r = 0; r < kRows; ++r) score += 3 * ((at(b, r, 3) == 1) - (at(b, r, 3) == 2));
  for_each_window(b, [&](const std::array<int, 4>& w) {
    const int mine = static_cast<int>(std::count(w.begin(), w.end(), 1));
    const int theirs = static_cast<int>(std::count(w.begin(), w.end(), 2));
    if (theirs == 0) score += mine == 3 ? 5 : mine == 2 ? 2 : 0;
    if (mine == 0) score -= theirs == 3 ? 5 : theirs == 2 ? 2 : 0;
  });
  return score;
}
inline constexpr int kWin = 1000000;
inline constexpr int kOrder[kColumns] = {3, 2, 4, 1, 5, 0, 6};
// The value of the position for the side to move (its stones 1), searched `depth` plies.
inline int negamax(Board& b, int depth, int alpha, int beta) {
  if (depth == 0) return heuristic(b);
  bool moved = false;
  for (int c : kOrder) {
    const int r = landing_row(b, c);
    if (r < 0) continue;
    moved = true;
    b[static_cast<std::size_t>(r * kColumns + c)] = 1;
    int value;
    if (wins(b, 1)) {
      value = kWin + depth;  // sooner wins are worth more
    } else {
      Board swapped{};
      for (std::size_t i = 0; i < b.size(); ++i) swapped[i] = b[i] == 0 ? 0 : 3 - b[i];
      value = -negamax(swapped, depth - 1, -beta, -alpha);
    }
    b[static_cast<std::size_t>(r * kColumns + c)] = 0;
    alpha = std::max(alpha, value);
    if (alpha >= beta) break;
  }
  return moved ? alpha : 0;  // a full board: a draw
}
}  // namespace c4_detail

/// A Connect Four player searching `depth` plies (its own move counts as one) with alpha-beta;
/// among moves of equal value the most central, or with `ties` one of them at random (so that a
/// deterministic agent meets more than one game). `observation` is f32 [2, 6, 7] (84 values).
inline std::int32_t alphabeta_player(std::span<const float> observation,
                                     std::span<const std::uint8_t> mask, int depth,
                                     Rng* ties = nullptr) {
  using namespace c4_detail;
  Board b{};
  for (std::size_t i = 0; i < b.size(); ++i)
    b[i] = observation[i] > 0.5f ? 1 : observation[b.size() + i] > 0.5f ? 2 : 0;
  int best_value = std::numeric_limits<int>::min();
  std::int32_t best = -1;
  std::uint64_t equal = 0;  // moves of the best value so far (reservoir sampling among them)
  for (int c : kOrder) {
    const int r = landing_row(b, c);
    if (r < 0 || !mask[static_cast<std::size_t>(c)]) continue;
    b[static_cast<std::size_t>(r * kColumns + c)] = 1;
    int value;
    if (wins(b, 1)) {
      value = kWin + depth;
    } else {
      Board swapped{};
      for (std::size_t i = 0; i < b.size(); ++i) swapped[i] = b[i] == 0 ? 0 : 3 - b[i];
      value = depth > 1 ? -negamax(swapped, depth - 1, -kWin * 2, kWin * 2) : -heuristic(swapped);
    }
    b[static_cast<std::size_t>(r * kColumns + c)] = 0;
    if (value > best_value) {
      best_value = value;
      best = c;
      equal = 1;
    } else if (value == best_value && ties != nullptr && ties->below(++equal) == 0) {
      best = c;
    }
  }
  return best;
}

/// Reads a Connect Four player's moves against the board (bench/selfplay_eval --tactics): whether
/// a win of its own was there and taken, whether the one column that blocked the other's win was
/// there and played, forks (two or more such columns), and moves that let the other win next when
/// another move would not have. lost() files a lost game under the player's last move; start(),
/// lost() and drawn() also count the games in which a win was missed, and how they ended.
struct ConnectFourTactics {
  long long wins_open = 0, wins_taken = 0;  // moves with a win of its own there, and taken
  long long blocks_open = 0, blocked = 0;   // moves with one column blocking the other's win
  long long forks = 0;                      // moves facing two or more such columns
  long long let_in = 0;  // moves that let the other win next where some move would not have
  // losses by the player's last move: missed a win, missed the block, faced a fork, let the other
  // in where it need not have, every move let it in, or none of these
  long long lost_missed_win = 0, lost_missed_block = 0, lost_fork = 0, lost_let_in = 0,
            lost_zugzwang = 0, lost_other = 0;
  // games in which a win of the player's own was there and not taken, and how they ended
  long long games_missed_win = 0, missed_win_then_lost = 0, missed_win_then_drawn = 0;
  enum Kind { kNone, kMissedWin, kMissedBlock, kFork, kLetIn, kZugzwang };
  Kind last = kNone;        // the player's last move of the game being played
  bool missed_win = false;  // whether the game being played had a win missed

  /// A game begins.
  void start() {
    last = kNone;
    missed_win = false;
  }

  /// `planes` is the player's view (its stones in plane 0) before it plays `action`.
  void see(std::span<const float> planes, std::int32_t action) {
    using namespace c4_detail;
    Board b{};
    for (std::size_t i = 0; i < b.size(); ++i)
      b[i] = planes[i] > 0.5f ? 1 : planes[b.size() + i] > 0.5f ? 2 : 0;
    const auto wins_with = [&b](int who, int c) {
      const int r = landing_row(b, c);
      if (r < 0) return false;
      b[static_cast<std::size_t>(r * kColumns + c)] = who;
      const bool won = wins(b, who);
      b[static_cast<std::size_t>(r * kColumns + c)] = 0;
      return won;
    };
    // Whether the other wins with its next move after the player drops in column c.
    const auto lets_in = [&](int c) {
      const int r = landing_row(b, c);
      if (r < 0) return false;
      b[static_cast<std::size_t>(r * kColumns + c)] = 1;
      bool in = false;
      for (int d = 0; d < kColumns && !in; ++d) in = wins_with(2, d);
      b[static_cast<std::size_t>(r * kColumns + c)] = 0;
      return in;
    };
    bool win_open = false, win_taken = false, safe_open = false;
    int threats = 0;
    bool threat_taken = false;
    for (int c = 0; c < kColumns; ++c) {
      if (landing_row(b, c) < 0) continue;
      if (wins_with(1, c)) win_open = true, win_taken = win_taken || c == action;
      if (wins_with(2, c)) ++threats, threat_taken = threat_taken || c == action;
      safe_open = safe_open || !lets_in(c);
    }
    const bool lets = !win_taken && lets_in(action);
    wins_open += win_open;
    wins_taken += win_taken;
    blocks_open += threats == 1;
    blocked += threats == 1 && threat_taken;
    forks += threats >= 2;
    let_in += threats == 0 && lets && safe_open;
    if (win_open && !win_taken && !missed_win) {
      missed_win = true;
      ++games_missed_win;
    }
    last = win_open && !win_taken ? kMissedWin
           : threats == 1         ? (threat_taken ? kNone : kMissedBlock)
           : threats >= 2         ? kFork
           : !lets                ? kNone
           : safe_open            ? kLetIn
                                  : kZugzwang;
  }
  /// The game was lost: files it under the kind of the last move seen.
  void lost() {
    lost_missed_win += last == kMissedWin;
    lost_missed_block += last == kMissedBlock;
    lost_fork += last == kFork;
    lost_let_in += last == kLetIn;
    lost_zugzwang += last == kZugzwang;
    lost_other += last == kNone;
    missed_win_then_lost += missed_win;
  }
  /// The game was drawn.
  void drawn() { missed_win_then_drawn += missed_win; }
};

/// Standoff's careful player (env/standoff.hpp): it blocks while the other is loaded; when the
/// other is empty it shoots if loaded, else reloads. It never loses. With `ties`, while the other
/// is empty and it is loaded with room for more, it shoots or reloads at random (both are safe:
/// an empty gun cannot hit), so that a deterministic agent meets more than one game.
/// `observation` is the player's f32 [9] (its bullets and the other's first, over max_bullets).
inline std::int32_t careful_standoff_player(std::span<const float> observation,
                                            Rng* ties = nullptr) {
  constexpr std::int32_t kReload = 0, kBlock = 1, kShoot = 2;
  if (observation[1] > 0.0f) return kBlock;
  if (observation[0] <= 0.0f) return kReload;
  if (ties != nullptr && observation[0] < 1.0f && ties->below(2) == 0) return kReload;
  return kShoot;
}

}  // namespace seedrl::test
