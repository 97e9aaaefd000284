// MinAtar Freeway: a chicken crosses eight lanes of traffic, as many times as it can in 2,500
// frames.
//
//   channels   0 chicken, 1 car, 2-6 the car's trail by speed (2: speed 1, the fastest ... 6:
//              speed 5); the trail is the cell behind the car, so it also gives the direction
//   actions    up / down move the chicken one row, at most once every 3 frames; the others wait
//   reward     +1 each time the chicken reaches the top row (it then starts again at the bottom)
//   end        after 2,500 frames: truncated (a time limit the observation does not show, so the
//              learner bootstraps)
//
// Rules (MinAtar's): the chicken lives in column 4 and starts on row 9; one car per row 1-8,
// starting in column 0, each with a random direction and speed s of 1-5 (its timer counts s
// frames down, and it moves on the frame the timer is at 0: one cell every s + 1 frames); a
// crossing re-draws all speeds and directions. Each frame: the chicken moves (if its 3-frame
// cool-down allows), a chicken on row 0 scores and goes back to row 9, then every car whose timer
// has run out moves one cell (wrapping around the edges); a chicken that shares a cell with a car,
// before or after the car moves, is sent back to row 9. No difficulty ramping.
#pragma once

#include <array>
#include <cstdint>
#include <cstdlib>

#include "seedrl/env/minatar/minatar.hpp"

namespace seedrl::minatar {

class FreewayRules {
 public:
  static constexpr std::int32_t kChannels = 7;
  static constexpr const char* kName = "Freeway";
  /// The actions the game reads (MinAtar's minimal_action_set()).
  static constexpr std::array<std::int32_t, 3> kMinimalActions{action::kNoop, action::kUp,
                                                               action::kDown};
  static constexpr std::int32_t kPlayerSpeed = 3;   ///< frames between chicken moves
  static constexpr std::int32_t kTimeLimit = 2500;  ///< frames per episode
  static constexpr std::int32_t kColumn = 4;        ///< the chicken's column
  enum Channel : std::int32_t { kChicken = 0, kCar = 1, kSpeed1 = 2 };

  struct Car {
    std::int32_t x = 0, y = 0;
    std::int32_t timer = 0;  ///< frames until it moves next
    std::int32_t speed = 1;  ///< +-1..5: sign = direction (+ to the right), size = frames per move
  };

  explicit FreewayRules(const Options& = {}) {}

  void reset(Rng& rng) {
    for (std::size_t i = 0; i < cars.size(); ++i) {
      cars[i].x = 0;
      cars[i].y = static_cast<std::int32_t>(i) + 1;
    }
    draw_speeds(rng);
    chicken = kSize - 1;
    cool_down = kPlayerSpeed;
    frames_left = kTimeLimit;
    ended = false;
  }

  float act(std::int32_t a, Rng& rng) {
    float reward = 0.0f;
    if (a == action::kUp && cool_down == 0) {
      cool_down = kPlayerSpeed;
      chicken = std::max(0, chicken - 1);
    } else if (a == action::kDown && cool_down == 0) {
      cool_down = kPlayerSpeed;
      chicken = std::min(kSize - 1, chicken + 1);
    }
    if (chicken == 0) {
      reward = 1.0f;
      draw_speeds(rng);
      chicken = kSize - 1;
    }
    for (Car& car : cars) {
      if (hits(car)) chicken = kSize - 1;
      if (car.timer == 0) {
        car.timer = std::abs(car.speed);
        car.x = wrap(car.x + (car.speed > 0 ? 1 : -1));
        if (hits(car)) chicken = kSize - 1;
      } else {
        --car.timer;
      }
    }
    if (cool_down > 0) --cool_down;
    if (--frames_left < 0) ended = true;
    return reward;
  }

  bool over() const { return ended; }
  bool truncated() const { return ended; }

  void render(std::uint8_t* grid) const {
    set_cell(grid, kChannels, chicken, kColumn, kChicken);
    for (const Car& car : cars) {
      set_cell(grid, kChannels, car.y, car.x, kCar);
      const std::int32_t behind = wrap(car.x + (car.speed > 0 ? -1 : 1));
      set_cell(grid, kChannels, car.y, behind, kSpeed1 + std::abs(car.speed) - 1);
    }
  }

  // The state, public so that tests and tools can read and set it.
  std::array<Car, 8> cars{};
  std::int32_t chicken = kSize - 1;  ///< the chicken's row
  std::int32_t cool_down = kPlayerSpeed;
  std::int32_t frames_left = kTimeLimit;
  bool ended = true;

 private:
  bool hits(const Car& car) const { return car.x == kColumn && car.y == chicken; }
  static std::int32_t wrap(std::int32_t x) { return x < 0 ? kSize - 1 : (x >= kSize ? 0 : x); }
  void draw_speeds(Rng& rng) {
    for (Car& car : cars) {
      const auto magnitude = static_cast<std::int32_t>(1 + rng.below(5));
      car.speed = rng.below(2) == 0 ? -magnitude : magnitude;
      car.timer = magnitude;
    }
  }
};

}  // namespace seedrl::minatar

namespace seedrl {
/// MinAtar Freeway as an Environment (observation u8 [10, 10, 7]).
using MinAtarFreeway = MinAtar<minatar::FreewayRules>;
static_assert(Environment<MinAtarFreeway>);
}  // namespace seedrl
