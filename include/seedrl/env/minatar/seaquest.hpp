// MinAtar Seaquest: a submarine shoots fish and enemy submarines, rescues divers, and must
// surface with divers on board before its oxygen runs out.
//
//   channels   0 sub front, 1 sub back (so its heading shows), 2 sub bullet, 3 trail (behind
//              every enemy and diver: its direction), 4 enemy bullet, 5 fish, 6 enemy sub,
//              7 oxygen gauge (row 9, from the left: oxygen / 20 cells), 8 diver gauge (row 9,
//              ending at column 8: one cell per diver aboard), 9 diver
//   actions    left / right move and turn the sub, up / down move it (rows 0-8), fire shoots a
//              bullet from the sub's cell in its heading (at most once every 5 frames)
//   reward     +1 per fish or enemy sub shot; surfacing with 6 divers adds oxygen / 20 (0-10)
//   end        terminated when the sub touches a fish, an enemy sub or an enemy bullet, when its
//              oxygen runs out, or when it surfaces with no diver aboard
//
// Rules (MinAtar's): the sub starts at the surface (row 0, column 5) heading left with 200 units of
// oxygen, one used per frame under water. Every `spawn` frames (20 at first) an enemy appears at
// a random row 1-8 at the left edge heading right or the right edge heading left: a sub with
// probability 1/3, else a fish; it is not placed if that row holds an enemy heading the other
// way. Every 30 frames a diver appears the same way. Enemies move one column every `move` + 1
// frames (`move` 5 at first), divers every 6; all leave at the edges. Enemy subs fire every 11
// frames, a bullet that travels one column per frame in their heading. A sub with fewer than 6
// divers picks up a diver it meets. Each frame: spawns, the player's action, sub bullets (which
// kill the first fish, else sub, they meet), divers, enemy subs, enemy bullets, fish (each checked
// against the sub before and after it moves), then oxygen. Coming up to row 0 from below is
// surfacing: with no diver it ends the episode; with 6 all are let off, with a reward for the
// oxygen left; with 1-5 one diver is let off; oxygen is refilled; and with difficulty ramping
// the spawn period drops by one (to 1) and on every second surfacing the move period too (to 2).
//
// One deliberate difference from the reference implementation: there, surfacing with 6 divers
// leaves a diver count of -1 (all six let off, then one more), after which the sub can surface
// empty without ending the episode; here it leaves 0, as the game's description says.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "seedrl/env/minatar/minatar.hpp"

namespace seedrl::minatar {

class SeaquestRules {
 public:
  static constexpr std::int32_t kChannels = 10;
  static constexpr const char* kName = "Seaquest";
  /// The actions the game reads (MinAtar's minimal_action_set()).
  static constexpr std::array<std::int32_t, 6> kMinimalActions{
      action::kNoop, action::kLeft, action::kUp, action::kRight, action::kDown, action::kFire};
  static constexpr std::int32_t kMaxOxygen = 200;
  static constexpr std::int32_t kInitialSpawnPeriod = 20;
  static constexpr std::int32_t kDiverSpawnPeriod = 30;
  static constexpr std::int32_t kInitialMovePeriod = 5;
  static constexpr std::int32_t kShotCoolDown = 5;
  static constexpr std::int32_t kEnemyShotPeriod = 10;
  static constexpr std::int32_t kDiverMovePeriod = 5;
  static constexpr std::int32_t kMaxDivers = 6;
  enum Channel : std::int32_t {
    kSubFront = 0,
    kSubBack = 1,
    kBullet = 2,
    kTrail = 3,
    kEnemyBullet = 4,
    kFish = 5,
    kEnemySub = 6,
    kOxygen = 7,
    kDiverGauge = 8,
    kDiver = 9
  };

  /// Anything that moves along a row: bullets, fish, enemy subs, divers.
  struct Mover {
    std::int32_t x = 0, y = 0;
    bool right = true;       ///< heading
    std::int32_t timer = 0;  ///< frames until it moves (fish, subs, divers)
    std::int32_t shot = 0;   ///< frames until it fires (enemy subs)
  };

  explicit SeaquestRules(const Options& options = {}) : ramping_(options.difficulty_ramping) {}

  void reset(Rng&) {
    oxygen = kMaxOxygen;
    divers_aboard = 0;
    x = 5;
    y = 0;
    facing_right = false;
    bullets.clear();
    enemy_bullets.clear();
    fish.clear();
    subs.clear();
    divers.clear();
    spawn_period = kInitialSpawnPeriod;
    spawn_timer = spawn_period;
    diver_timer = kDiverSpawnPeriod;
    move_period = kInitialMovePeriod;
    ramp_index = 0;
    shot_timer = 0;
    surfaced = true;
    ended = false;
  }

  float act(std::int32_t a, Rng& rng) {
    float reward = 0.0f;
    if (spawn_timer == 0) {
      spawn_enemy(rng);
      spawn_timer = spawn_period;
    }
    if (diver_timer == 0) {
      spawn_diver(rng);
      diver_timer = kDiverSpawnPeriod;
    }

    if (a == action::kFire && shot_timer == 0) {
      bullets.push_back({x, y, facing_right, 0, 0});
      shot_timer = kShotCoolDown;
    } else if (a == action::kLeft) {
      x = std::max(0, x - 1);
      facing_right = false;
    } else if (a == action::kRight) {
      x = std::min(kSize - 1, x + 1);
      facing_right = true;
    } else if (a == action::kUp) {
      y = std::max(0, y - 1);
    } else if (a == action::kDown) {
      y = std::min(kSize - 2, y + 1);
    }

    // The sub's bullets: newest first, as the reference walks its list backwards.
    for (std::size_t i = bullets.size(); i-- > 0;) {
      Mover& b = bullets[i];
      b.x += b.right ? 1 : -1;
      if (off_board(b)) {
        erase(bullets, i);
        continue;
      }
      if (remove_first_at(fish, b.x, b.y) || remove_first_at(subs, b.x, b.y)) {
        erase(bullets, i);
        reward += 1.0f;
      }
    }

    for (std::size_t i = divers.size(); i-- > 0;) {
      Mover& d = divers[i];
      if (on_sub(d) && divers_aboard < kMaxDivers) {
        erase(divers, i);
        ++divers_aboard;
      } else if (d.timer == 0) {
        d.timer = kDiverMovePeriod;
        d.x += d.right ? 1 : -1;
        if (off_board(d)) {
          erase(divers, i);
        } else if (on_sub(d) && divers_aboard < kMaxDivers) {
          erase(divers, i);
          ++divers_aboard;
        }
      } else {
        --d.timer;
      }
    }

    for (std::size_t i = subs.size(); i-- > 0;) {
      Mover s = subs[i];  // a copy: it may fire after it is removed, as in the reference
      bool removed = false;
      if (on_sub(s)) ended = true;
      if (s.timer == 0) {
        s.timer = move_period;
        s.x += s.right ? 1 : -1;
        if (off_board(s)) {
          removed = true;
        } else if (on_sub(s)) {
          ended = true;
        } else if (remove_first_at(bullets, s.x, s.y)) {
          removed = true;
          reward += 1.0f;
        }
      } else {
        --s.timer;
      }
      if (s.shot == 0) {
        s.shot = kEnemyShotPeriod;
        enemy_bullets.push_back({s.x, s.y, s.right, 0, 0});
      } else {
        --s.shot;
      }
      if (removed)
        erase(subs, i);
      else
        subs[i] = s;
    }

    for (std::size_t i = enemy_bullets.size(); i-- > 0;) {
      Mover& b = enemy_bullets[i];
      if (on_sub(b)) ended = true;
      b.x += b.right ? 1 : -1;
      if (off_board(b)) {
        erase(enemy_bullets, i);
      } else if (on_sub(b)) {
        ended = true;
      }
    }

    for (std::size_t i = fish.size(); i-- > 0;) {
      Mover& f = fish[i];
      if (on_sub(f)) ended = true;
      if (f.timer == 0) {
        f.timer = move_period;
        f.x += f.right ? 1 : -1;
        if (off_board(f)) {
          erase(fish, i);
        } else if (on_sub(f)) {
          ended = true;
        } else if (remove_first_at(bullets, f.x, f.y)) {
          erase(fish, i);
          reward += 1.0f;
        }
      } else {
        --f.timer;
      }
    }

    if (spawn_timer > 0) --spawn_timer;
    if (diver_timer > 0) --diver_timer;
    if (shot_timer > 0) --shot_timer;
    if (oxygen < 0) ended = true;
    if (y > 0) {
      --oxygen;
      surfaced = false;
    } else if (!surfaced) {
      if (divers_aboard == 0)
        ended = true;
      else
        reward += surface();
    }
    return reward;
  }

  bool over() const { return ended; }
  bool truncated() const { return false; }

  void render(std::uint8_t* grid) const {
    set_cell(grid, kChannels, y, x, kSubFront);
    const std::int32_t back = x + (facing_right ? -1 : 1);
    if (back >= 0 && back < kSize) set_cell(grid, kChannels, y, back, kSubBack);
    const std::int32_t oxygen_cells = std::max(0, oxygen) * 10 / kMaxOxygen;
    for (std::int32_t c = 0; c < oxygen_cells; ++c)
      set_cell(grid, kChannels, kSize - 1, c, kOxygen);
    for (std::int32_t c = kSize - 1 - divers_aboard; c < kSize - 1; ++c)
      set_cell(grid, kChannels, kSize - 1, c, kDiverGauge);
    for (const Mover& b : bullets) set_cell(grid, kChannels, b.y, b.x, kBullet);
    for (const Mover& b : enemy_bullets) set_cell(grid, kChannels, b.y, b.x, kEnemyBullet);
    auto with_trail = [&](const std::vector<Mover>& movers, std::int32_t channel) {
      for (const Mover& m : movers) {
        set_cell(grid, kChannels, m.y, m.x, channel);
        const std::int32_t behind = m.x + (m.right ? -1 : 1);
        if (behind >= 0 && behind < kSize) set_cell(grid, kChannels, m.y, behind, kTrail);
      }
    };
    with_trail(fish, kFish);
    with_trail(subs, kEnemySub);
    with_trail(divers, kDiver);
  }

  // The state, public so that tests and tools can read and set it.
  std::int32_t x = 5, y = 0;  ///< the sub (front cell)
  bool facing_right = false;
  std::int32_t oxygen = kMaxOxygen;
  std::int32_t divers_aboard = 0;
  std::vector<Mover> bullets, enemy_bullets, fish, subs, divers;
  std::int32_t spawn_period = kInitialSpawnPeriod, spawn_timer = kInitialSpawnPeriod;
  std::int32_t diver_timer = kDiverSpawnPeriod;
  std::int32_t move_period = kInitialMovePeriod;
  std::int32_t shot_timer = 0;
  std::int32_t ramp_index = 0;
  bool surfaced = true;  ///< at row 0 since the last surfacing (no new surfacing yet)
  bool ended = true;

 private:
  bool on_sub(const Mover& m) const { return m.x == x && m.y == y; }
  static bool off_board(const Mover& m) { return m.x < 0 || m.x >= kSize; }
  static void erase(std::vector<Mover>& v, std::size_t i) {
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
  }
  // Removes the first mover (in list order) at (mx, my); true if there was one.
  static bool remove_first_at(std::vector<Mover>& v, std::int32_t mx, std::int32_t my) {
    const auto it =
        std::find_if(v.begin(), v.end(), [&](const Mover& m) { return m.x == mx && m.y == my; });
    if (it == v.end()) return false;
    v.erase(it);
    return true;
  }

  float surface() {
    surfaced = true;
    float reward = 0.0f;
    if (divers_aboard == kMaxDivers) {
      divers_aboard = 0;
      reward = static_cast<float>(oxygen * 10 / kMaxOxygen);
    } else {
      --divers_aboard;
    }
    oxygen = kMaxOxygen;
    if (ramping_ && (spawn_period > 1 || move_period > 2)) {
      if (move_period > 2 && ramp_index % 2 == 1) --move_period;
      if (spawn_period > 1) --spawn_period;
      ++ramp_index;
    }
    return reward;
  }

  void spawn_enemy(Rng& rng) {
    const bool from_left = rng.below(2) == 0;
    const bool sub = rng.uniform() < 1.0 / 3.0;
    const auto row = static_cast<std::int32_t>(1 + rng.below(8));
    auto against = [&](const Mover& m) { return m.y == row && m.right != from_left; };
    if (std::any_of(subs.begin(), subs.end(), against) ||
        std::any_of(fish.begin(), fish.end(), against))
      return;
    const Mover m{from_left ? 0 : kSize - 1, row, from_left, move_period, kEnemyShotPeriod};
    (sub ? subs : fish).push_back(m);
  }

  void spawn_diver(Rng& rng) {
    const bool from_left = rng.below(2) == 0;
    const auto row = static_cast<std::int32_t>(1 + rng.below(8));
    divers.push_back({from_left ? 0 : kSize - 1, row, from_left, kDiverMovePeriod, 0});
  }

  bool ramping_;
};

}  // namespace seedrl::minatar

namespace seedrl {
/// MinAtar Seaquest as an Environment (observation u8 [10, 10, 10]).
using MinAtarSeaquest = MinAtar<minatar::SeaquestRules>;
static_assert(Environment<MinAtarSeaquest>);
}  // namespace seedrl
