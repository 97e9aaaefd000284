// MinAtar Asterix: dodge enemies and collect gold that stream across eight rows.
//
//   channels   0 player, 1 enemy, 2 trail (the cell behind each enemy or gold: its direction),
//              3 gold
//   actions    left / right / up / down move the player one cell (rows 1-8, columns 0-9)
//   reward     +1 per gold collected
//   end        terminated when the player and an enemy share a cell
//
// Rules (MinAtar's): the player starts at (row 5, column 5). Each of rows 1-8 holds at most one
// entity. Every `spawn` frames (10 at first) one is placed in a random free row, at the left edge
// moving right or the right edge moving left (even odds), gold with probability 1/3, else an
// enemy. Each frame: spawn if due, the player moves, any entity on the player's cell is
// collected (gold) or ends the episode (enemy); then, every `move` frames (5 at first), every
// entity moves one column (leaving the board at the edges) and the check is repeated.
// Difficulty ramping: on frame 102 and every 102 frames after, the spawn period drops by one (to
// 1), and on every second such ramp the move period drops by one (to 1).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "seedrl/env/minatar/minatar.hpp"

namespace seedrl::minatar {

class AsterixRules {
 public:
  static constexpr std::int32_t kChannels = 4;
  static constexpr const char* kName = "Asterix";
  /// The actions the game reads (MinAtar's minimal_action_set()).
  static constexpr std::array<std::int32_t, 5> kMinimalActions{
      action::kNoop, action::kLeft, action::kUp, action::kRight, action::kDown};
  static constexpr std::int32_t kRampInterval = 100;
  static constexpr std::int32_t kInitialSpawnPeriod = 10;
  static constexpr std::int32_t kInitialMovePeriod = 5;
  enum Channel : std::int32_t { kPlayer = 0, kEnemy = 1, kTrail = 2, kGold = 3 };

  struct Entity {
    std::int32_t x = 0;
    bool moving_right = true;
    bool gold = false;
  };

  explicit AsterixRules(const Options& options = {}) : ramping_(options.difficulty_ramping) {}

  void reset(Rng&) {
    player_x = player_y = 5;
    rows = {};
    spawn_period = kInitialSpawnPeriod;
    spawn_timer = spawn_period;
    move_period = kInitialMovePeriod;
    move_timer = move_period;
    ramp_timer = kRampInterval;
    ramp_index = 0;
    ended = false;
  }

  float act(std::int32_t a, Rng& rng) {
    if (spawn_timer == 0) {
      spawn(rng);
      spawn_timer = spawn_period;
    }
    if (a == action::kLeft) player_x = std::max(0, player_x - 1);
    if (a == action::kRight) player_x = std::min(kSize - 1, player_x + 1);
    if (a == action::kUp) player_y = std::max(1, player_y - 1);
    if (a == action::kDown) player_y = std::min(kSize - 2, player_y + 1);

    float reward = collide();
    if (move_timer == 0) {
      move_timer = move_period;
      for (std::optional<Entity>& e : rows) {
        if (!e) continue;
        e->x += e->moving_right ? 1 : -1;
        if (e->x < 0 || e->x >= kSize) e.reset();
      }
      reward += collide();
    }
    --spawn_timer;
    --move_timer;

    if (ramping_ && (spawn_period > 1 || move_period > 1)) {
      if (ramp_timer >= 0) {
        --ramp_timer;
      } else {
        if (move_period > 1 && ramp_index % 2 == 1) --move_period;
        if (spawn_period > 1) --spawn_period;
        ++ramp_index;
        ramp_timer = kRampInterval;
      }
    }
    return reward;
  }

  bool over() const { return ended; }
  bool truncated() const { return false; }

  void render(std::uint8_t* grid) const {
    set_cell(grid, kChannels, player_y, player_x, kPlayer);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!rows[i]) continue;
      const Entity& e = *rows[i];
      const auto y = static_cast<std::int32_t>(i) + 1;
      set_cell(grid, kChannels, y, e.x, e.gold ? kGold : kEnemy);
      const std::int32_t behind = e.x + (e.moving_right ? -1 : 1);
      if (behind >= 0 && behind < kSize) set_cell(grid, kChannels, y, behind, kTrail);
    }
  }

  // The state, public so that tests and tools can read and set it. rows[i] is row i + 1.
  std::int32_t player_x = 5, player_y = 5;
  std::array<std::optional<Entity>, 8> rows{};
  std::int32_t spawn_period = kInitialSpawnPeriod, spawn_timer = kInitialSpawnPeriod;
  std::int32_t move_period = kInitialMovePeriod, move_timer = kInitialMovePeriod;
  std::int32_t ramp_timer = kRampInterval, ramp_index = 0;
  bool ended = true;

 private:
  // Collects gold or ends the episode for an entity on the player's cell.
  float collide() {
    std::optional<Entity>& e = rows[static_cast<std::size_t>(player_y - 1)];
    if (!e || e->x != player_x) return 0.0f;
    if (!e->gold) {
      ended = true;
      return 0.0f;
    }
    e.reset();
    return 1.0f;
  }

  void spawn(Rng& rng) {
    const bool from_left = rng.below(2) == 0;
    const bool gold = rng.uniform() < 1.0 / 3.0;
    std::vector<std::size_t> free;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (!rows[i]) free.push_back(i);
    if (free.empty()) return;
    const std::size_t row = free[rng.below(free.size())];
    rows[row] = Entity{from_left ? 0 : kSize - 1, from_left, gold};
  }

  bool ramping_;
};

}  // namespace seedrl::minatar

namespace seedrl {
/// MinAtar Asterix as an Environment (observation u8 [10, 10, 4]).
using MinAtarAsterix = MinAtar<minatar::AsterixRules>;
static_assert(Environment<MinAtarAsterix>);
}  // namespace seedrl
