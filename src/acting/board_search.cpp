// search_player's tables of the board's lines (declared in acting/board_search.hpp).
#include "seedrl/acting/board_search.hpp"

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace seedrl {

board_search_detail::Lines::Lines(const BoardGameRules& of) : rules(of) {
  const int n = rules.in_a_row;
  const std::int32_t cells = rules.rows * rules.columns;
  std::vector<std::vector<std::int32_t>> through_cell(static_cast<std::size_t>(cells));
  constexpr int kSteps[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
  for (const auto& d : kSteps) {
    for (std::int32_t row = 0; row < rules.rows; ++row) {
      for (std::int32_t col = 0; col < rules.columns; ++col) {
        const std::int32_t last_row = row + d[0] * (n - 1), last_col = col + d[1] * (n - 1);
        if (last_row >= rules.rows || last_col < 0 || last_col >= rules.columns) continue;
        const auto line = static_cast<std::int32_t>(size);
        for (int k = 0; k < n; ++k)
          through_cell[static_cast<std::size_t>((row + d[0] * k) * rules.columns + col + d[1] * k)]
              .push_back(line);
        ++size;
      }
    }
  }
  // The moves nearest the centre first: the likeliest best, so that alpha-beta prunes sooner.
  const std::int32_t moves = rules.gravity ? rules.columns : cells;
  for (std::int32_t a = 0; a < moves; ++a) order.push_back(a);
  const auto off_centre = [this](std::int32_t a) {
    const std::int32_t col = a % rules.columns, row = rules.gravity ? 0 : a / rules.columns;
    return std::abs(2 * col - (rules.columns - 1)) + std::abs(2 * row - (rules.rows - 1));
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int32_t a, std::int32_t b) { return off_centre(a) < off_centre(b); });
  first.push_back(0);
  for (const auto& ids : through_cell) {
    through.insert(through.end(), ids.begin(), ids.end());
    first.push_back(static_cast<std::int32_t>(through.size()));
  }
  // Every score must stay below a won game's value, and a line's stones fit a byte.
  const std::int64_t most = static_cast<std::int64_t>(size) * (std::int64_t{1} << (2 * (n - 1)));
  SEEDRL_REQUIRE(n <= 12 && most + rules.rows < kWon, "search_player: ", rules.name, " (",
                 rules.rows, " x ", rules.columns, ", ", n,
                 " in a row) is too large for the search's scores: lines of at most 12 and "
                 "(lines x 4^(in_a_row - 1)) under 2^24");
}

}  // namespace seedrl
