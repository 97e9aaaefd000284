// MinAtar Breakout: a paddle on the bottom row bounces a ball into three rows of bricks.
//
//   channels   0 paddle, 1 ball, 2 trail (the ball's previous cell: its direction), 3 brick
//   actions    left / right move the paddle one column (clamped); the others do nothing
//   reward     +1 per brick broken
//   end        terminated when the ball reaches the bottom row away from the paddle
//
// Rules (MinAtar's): the ball starts in row 3 at the left edge moving down-right or at the right
// edge moving down-left (even odds) with the paddle in column 4 and bricks in rows 1-3. Each frame
// the paddle moves, then the ball moves one cell diagonally. Side walls reflect it horizontally,
// the top wall vertically. Entering a brick cell breaks the brick (+1), keeps the ball in its row
// and reflects it vertically; on the next frame it cannot break another brick (it passes into a
// brick cell without breaking it). Reaching the bottom row: if the ball was above the paddle it
// bounces straight back up, if it arrives on the paddle's column it bounces back the way it came,
// otherwise the episode ends; when no brick is left as the ball reaches the bottom row, the
// three rows are rebuilt. No difficulty ramping.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "seedrl/env/minatar/minatar.hpp"

namespace seedrl::minatar {

class BreakoutRules {
 public:
  static constexpr std::int32_t kChannels = 4;
  static constexpr const char* kName = "Breakout";
  /// The actions the game reads (MinAtar's minimal_action_set()).
  static constexpr std::array<std::int32_t, 3> kMinimalActions{action::kNoop, action::kLeft,
                                                               action::kRight};
  enum Channel : std::int32_t { kPaddle = 0, kBall = 1, kTrail = 2, kBrick = 3 };
  /// Ball directions: (dx, dy) of each, y growing downwards.
  enum Direction : std::int32_t { kUpLeft = 0, kUpRight = 1, kDownRight = 2, kDownLeft = 3 };

  explicit BreakoutRules(const Options& = {}) {}

  void reset(Rng& rng) {
    const bool from_right = rng.below(2) == 1;
    ball_x = from_right ? kSize - 1 : 0;
    ball_y = 3;
    direction = from_right ? kDownLeft : kDownRight;
    paddle = 4;
    bricks = {};
    fill_bricks();
    striking = false;
    last_x = ball_x;
    last_y = ball_y;
    ended = false;
  }

  float act(std::int32_t a, Rng&) {
    if (a == action::kLeft) paddle = std::max(0, paddle - 1);
    if (a == action::kRight) paddle = std::min(kSize - 1, paddle + 1);

    last_x = ball_x;
    last_y = ball_y;
    static constexpr std::array<std::int32_t, 4> kDx{-1, 1, 1, -1}, kDy{-1, -1, 1, 1};
    std::int32_t x = ball_x + kDx[direction];
    std::int32_t y = ball_y + kDy[direction];
    float reward = 0.0f;
    bool in_brick = false;
    if (x < 0 || x >= kSize) {
      x = std::clamp(x, 0, kSize - 1);
      direction = flip_horizontal(direction);
    }
    if (y < 0) {
      y = 0;
      direction = flip_vertical(direction);
    } else if (brick(y, x)) {
      in_brick = true;
      if (!striking) {
        reward = 1.0f;
        striking = true;
        brick(y, x) = false;
        y = last_y;
        direction = flip_vertical(direction);
      }
    } else if (y == kSize - 1) {
      if (std::none_of(bricks.begin(), bricks.end(), [](bool b) { return b; })) fill_bricks();
      if (ball_x == paddle) {
        direction = flip_vertical(direction);
        y = last_y;
      } else if (x == paddle) {
        direction = reverse(direction);
        y = last_y;
      } else {
        ended = true;
      }
    }
    if (!in_brick) striking = false;
    ball_x = x;
    ball_y = y;
    return reward;
  }

  bool over() const { return ended; }
  bool truncated() const { return false; }

  void render(std::uint8_t* grid) const {
    set_cell(grid, kChannels, ball_y, ball_x, kBall);
    set_cell(grid, kChannels, kSize - 1, paddle, kPaddle);
    set_cell(grid, kChannels, last_y, last_x, kTrail);
    for (std::int32_t r = 0; r < kSize; ++r)
      for (std::int32_t c = 0; c < kSize; ++c)
        if (bricks[static_cast<std::size_t>(r * kSize + c)])
          set_cell(grid, kChannels, r, c, kBrick);
  }

  bool& brick(std::int32_t row, std::int32_t column) {
    return bricks[static_cast<std::size_t>(row * kSize + column)];
  }
  bool brick(std::int32_t row, std::int32_t column) const {
    return bricks[static_cast<std::size_t>(row * kSize + column)];
  }
  std::int32_t brick_count() const {
    return static_cast<std::int32_t>(std::count(bricks.begin(), bricks.end(), true));
  }

  // The state, public so that tests and tools can read and set it.
  std::int32_t ball_x = 0, ball_y = 0, last_x = 0, last_y = 0, paddle = 4;
  std::int32_t direction = kDownRight;
  std::array<bool, kSize * kSize> bricks{};
  bool striking = false;  ///< the ball broke a brick last frame
  bool ended = true;

 private:
  void fill_bricks() {
    for (std::int32_t r = 1; r <= 3; ++r)
      for (std::int32_t c = 0; c < kSize; ++c) brick(r, c) = true;
  }
  static std::int32_t flip_horizontal(std::int32_t d) {
    static constexpr std::array<std::int32_t, 4> k{kUpRight, kUpLeft, kDownLeft, kDownRight};
    return k[static_cast<std::size_t>(d)];
  }
  static std::int32_t flip_vertical(std::int32_t d) {
    static constexpr std::array<std::int32_t, 4> k{kDownLeft, kDownRight, kUpRight, kUpLeft};
    return k[static_cast<std::size_t>(d)];
  }
  static std::int32_t reverse(std::int32_t d) {
    static constexpr std::array<std::int32_t, 4> k{kDownRight, kDownLeft, kUpLeft, kUpRight};
    return k[static_cast<std::size_t>(d)];
  }
};

}  // namespace seedrl::minatar

namespace seedrl {
/// MinAtar Breakout as an Environment (observation u8 [10, 10, 4]).
using MinAtarBreakout = MinAtar<minatar::BreakoutRules>;
static_assert(Environment<MinAtarBreakout>);
}  // namespace seedrl
