// MinAtar Space Invaders: a cannon on the bottom row shoots at a block of aliens that marches
// sideways and down and shoots back.
//
//   channels   0 cannon, 1 alien, 2 alien moving left, 3 alien moving right (the marching
//              direction, on every alien), 4 cannon bullet, 5 alien bullet
//   actions    left / right move the cannon; fire shoots (at most once every 5 frames)
//   reward     +1 per alien shot
//   end        terminated when an alien bullet or an alien reaches the cannon, or the aliens
//              reach the bottom row as they turn
//
// Rules (MinAtar's): the cannon starts in column 5; 24 aliens fill rows 0-3, columns 2-7, marching
// left. Each frame: the cannon fires (a bullet on its own cell) or moves; cannon bullets move up
// one row and alien bullets down one row (both leave the board at the edge); then every `march`
// frames the aliens step one column, or, when the block touches the edge it marches towards,
// step down one row and turn around; the march period is the number of aliens left, capped at
// 12 (so the last alien moves every frame). Every 10 frames the alien nearest to the cannon's
// column (ties: the leftmost column; the lowest alien of that column) drops a bullet. An alien on
// the same cell as a cannon bullet dies with it. When the last alien dies a new block appears, and
// with difficulty ramping its march cap drops by one (12 down to 6).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>

#include "seedrl/env/minatar/minatar.hpp"

namespace seedrl::minatar {

class SpaceInvadersRules {
 public:
  static constexpr std::int32_t kChannels = 6;
  static constexpr const char* kName = "SpaceInvaders";
  /// The actions the game reads (MinAtar's minimal_action_set()).
  static constexpr std::array<std::int32_t, 4> kMinimalActions{action::kNoop, action::kLeft,
                                                               action::kRight, action::kFire};
  static constexpr std::int32_t kShotCoolDown = 5;
  static constexpr std::int32_t kMarchPeriod = 12;
  static constexpr std::int32_t kAlienShotPeriod = 10;
  enum Channel : std::int32_t {
    kCannon = 0,
    kAlien = 1,
    kAlienLeft = 2,
    kAlienRight = 3,
    kCannonBullet = 4,
    kAlienBullet = 5
  };
  using Grid = std::array<std::array<bool, kSize>, kSize>;  ///< [row][column]

  explicit SpaceInvadersRules(const Options& options = {}) : ramping_(options.difficulty_ramping) {}

  void reset(Rng&) {
    cannon = 5;
    cannon_bullets = {};
    alien_bullets = {};
    aliens = {};
    new_wave();
    direction = -1;
    march_period = kMarchPeriod;
    march_timer = march_period;
    alien_shot_timer = kAlienShotPeriod;
    ramp_index = 0;
    shot_timer = 0;
    ended = false;
  }

  float act(std::int32_t a, Rng&) {
    if (a == action::kFire && shot_timer == 0) {
      cannon_bullets[kSize - 1][static_cast<std::size_t>(cannon)] = true;
      shot_timer = kShotCoolDown;
    } else if (a == action::kLeft) {
      cannon = std::max(0, cannon - 1);
    } else if (a == action::kRight) {
      cannon = std::min(kSize - 1, cannon + 1);
    }

    // Bullets: the cannon's up (off the top), the aliens' down (off the bottom).
    std::rotate(cannon_bullets.begin(), cannon_bullets.begin() + 1, cannon_bullets.end());
    cannon_bullets[kSize - 1] = {};
    std::rotate(alien_bullets.rbegin(), alien_bullets.rbegin() + 1, alien_bullets.rend());
    alien_bullets[0] = {};
    if (at(alien_bullets, kSize - 1, cannon)) ended = true;

    if (at(aliens, kSize - 1, cannon)) ended = true;
    if (march_timer == 0) {
      march_timer = std::min(count(aliens), march_period);
      const bool at_edge =
          (direction < 0 && column_occupied(0)) || (direction > 0 && column_occupied(kSize - 1));
      if (at_edge) {
        direction = -direction;
        if (std::any_of(aliens[kSize - 1].begin(), aliens[kSize - 1].end(),
                        [](bool b) { return b; }))
          ended = true;
        std::rotate(aliens.rbegin(), aliens.rbegin() + 1, aliens.rend());
      } else {
        for (auto& row : aliens) {
          if (direction < 0)
            std::rotate(row.begin(), row.begin() + 1, row.end());
          else
            std::rotate(row.rbegin(), row.rbegin() + 1, row.rend());
        }
      }
      if (at(aliens, kSize - 1, cannon)) ended = true;
    }
    if (alien_shot_timer == 0) {
      alien_shot_timer = kAlienShotPeriod;
      const std::int32_t column = nearest_alien_column();
      if (column >= 0) {
        std::int32_t lowest = 0;
        for (std::int32_t r = 0; r < kSize; ++r)
          if (at(aliens, r, column)) lowest = r;
        alien_bullets[static_cast<std::size_t>(lowest)][static_cast<std::size_t>(column)] = true;
      }
    }

    float reward = 0.0f;
    for (std::size_t r = 0; r < kSize; ++r) {
      for (std::size_t c = 0; c < kSize; ++c) {
        if (aliens[r][c] && cannon_bullets[r][c]) {
          aliens[r][c] = cannon_bullets[r][c] = false;
          reward += 1.0f;
        }
      }
    }

    if (shot_timer > 0) --shot_timer;
    --march_timer;
    --alien_shot_timer;
    if (count(aliens) == 0) {
      if (ramping_ && march_period > 6) {
        --march_period;
        ++ramp_index;
      }
      new_wave();
    }
    return reward;
  }

  bool over() const { return ended; }
  bool truncated() const { return false; }

  void render(std::uint8_t* grid) const {
    set_cell(grid, kChannels, kSize - 1, cannon, kCannon);
    for (std::int32_t r = 0; r < kSize; ++r) {
      for (std::int32_t c = 0; c < kSize; ++c) {
        if (at(aliens, r, c)) {
          set_cell(grid, kChannels, r, c, kAlien);
          set_cell(grid, kChannels, r, c, direction < 0 ? kAlienLeft : kAlienRight);
        }
        if (at(cannon_bullets, r, c)) set_cell(grid, kChannels, r, c, kCannonBullet);
        if (at(alien_bullets, r, c)) set_cell(grid, kChannels, r, c, kAlienBullet);
      }
    }
  }

  static bool at(const Grid& g, std::int32_t row, std::int32_t column) {
    return g[static_cast<std::size_t>(row)][static_cast<std::size_t>(column)];
  }
  static std::int32_t count(const Grid& g) {
    std::int32_t n = 0;
    for (const auto& row : g)
      n += static_cast<std::int32_t>(std::count(row.begin(), row.end(), true));
    return n;
  }

  // The state, public so that tests and tools can read and set it.
  std::int32_t cannon = 5;
  Grid aliens{}, cannon_bullets{}, alien_bullets{};
  std::int32_t direction = -1;  ///< -1 marching left, +1 right
  std::int32_t march_period = kMarchPeriod, march_timer = kMarchPeriod;
  std::int32_t alien_shot_timer = kAlienShotPeriod;
  std::int32_t shot_timer = 0;
  std::int32_t ramp_index = 0;
  bool ended = true;

 private:
  void new_wave() {
    for (std::size_t r = 0; r < 4; ++r)
      for (std::size_t c = 2; c < 8; ++c) aliens[r][c] = true;
  }
  bool column_occupied(std::int32_t column) const {
    for (std::int32_t r = 0; r < kSize; ++r)
      if (at(aliens, r, column)) return true;
    return false;
  }
  // The occupied column nearest to the cannon's (ties: the lower column), or -1.
  std::int32_t nearest_alien_column() const {
    for (std::int32_t d = 0; d < kSize; ++d) {
      if (cannon - d >= 0 && column_occupied(cannon - d)) return cannon - d;
      if (cannon + d < kSize && column_occupied(cannon + d)) return cannon + d;
    }
    return -1;
  }

  bool ramping_;
};

}  // namespace seedrl::minatar

namespace seedrl {
/// MinAtar Space Invaders as an Environment (observation u8 [10, 10, 6]).
using MinAtarSpaceInvaders = MinAtar<minatar::SpaceInvadersRules>;
static_assert(Environment<MinAtarSpaceInvaders>);
}  // namespace seedrl
