// MinAtar (Young & Tian 2019): miniature Atari games on a 10 x 10 grid, small enough to learn from
// pixels in minutes on a CPU. `MinAtar<Game>` turns one game's rules into an Environment:
//
//   observation  u8 [10, 10, C]: one 0/1 channel per object kind (channels-last, as MinAtar and
//                the MinAtar network torso use it)
//   actions      6: 0 no-op, 1 left, 2 up, 3 right, 4 down, 5 fire (every game takes all six;
//                most ignore some), or with `minimal_action_set` the game's own subset in that
//                order, as MinAtar's minimal_action_set() and its published baselines have
//                them (Breakout 3: no-op, left, right; Freeway 3; Asterix 5; Space Invaders 4;
//                Seaquest all 6)
//   sticky       with probability `sticky_action_probability` (MinAtar's default 0.1) the
//                previous action is repeated instead of the chosen one
//
// The rules are our own code written from the published description and the public reference
// implementation's behaviour (github.com/kenjyoung/MinAtar); the random streams differ from
// numpy's, so episodes are not byte-identical to the Python version's for a given seed.
// Games: minatar/breakout.hpp, freeway.hpp, asterix.hpp, space_invaders.hpp.
//
// A Game provides: `static constexpr int kChannels`, `static constexpr const char* kName`,
// `static constexpr std::array<std::int32_t, N> kMinimalActions` (the actions it reads),
// `void reset(Rng&)`, `float act(int action, Rng&)` (the reward of one frame), `bool over()`,
// `bool truncated()` (the episode ended by a time limit rather than by the game), and
// `void render(std::uint8_t* grid)` which sets the 1s of a zeroed [10, 10, C] grid.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

#include "seedrl/core/random.hpp"
#include "seedrl/env/environment.hpp"

namespace seedrl::minatar {

inline constexpr std::int32_t kSize = 10;
inline constexpr std::int32_t kNumActions = 6;

namespace action {
inline constexpr std::int32_t kNoop = 0, kLeft = 1, kUp = 2, kRight = 3, kDown = 4, kFire = 5;
}  // namespace action

struct Options {
  double sticky_action_probability = 0.1;  ///< MinAtar's default
  bool difficulty_ramping = true;          ///< games that speed up over an episode do so
  /// The actions are the game's minimal set (Game::kMinimalActions, action i playing the i-th of
  /// them), not all six.
  bool minimal_action_set = false;
  void validate(std::string_view owner = "minatar::Options") const {
    SEEDRL_REQUIRE(sticky_action_probability >= 0.0 && sticky_action_probability < 1.0, owner,
                   ".sticky_action_probability must be in [0, 1), got ", sticky_action_probability);
  }
};

}  // namespace seedrl::minatar

namespace seedrl {

template <class Game>
class MinAtar {
 public:
  explicit MinAtar(std::uint64_t seed = 0, const minatar::Options& options = {})
      : options_((options.validate(), options)), game_(options), rng_(seed) {}

  TensorSpec observation_spec() const {
    return {{minatar::kSize, minatar::kSize, Game::kChannels}, DType::u8};
  }
  ActionSpec action_spec() const { return {num_actions()}; }
  std::int32_t num_actions() const {
    return options_.minimal_action_set ? static_cast<std::int32_t>(Game::kMinimalActions.size())
                                       : minatar::kNumActions;
  }

  void reset(const Tensor& observation) {
    game_.reset(rng_);
    last_action_ = minatar::action::kNoop;  // MinAtar keeps it across episodes; we start afresh
    write(observation);
  }

  StepResult step(std::int32_t action, const Tensor& observation) {
    SEEDRL_REQUIRE(action >= 0 && action < num_actions(), Game::kName, ": action ", action,
                   " out of range [0, ", num_actions(), ")");
    SEEDRL_REQUIRE(!game_.over(), Game::kName, ": step after the episode ended; call reset()");
    if (options_.minimal_action_set)
      action = Game::kMinimalActions[static_cast<std::size_t>(action)];
    if (options_.sticky_action_probability > 0.0 &&
        rng_.uniform() < options_.sticky_action_probability) {
      action = last_action_;
    }
    last_action_ = action;
    StepResult result;
    result.reward = game_.act(action, rng_);
    if (game_.over()) {
      result.truncated = game_.truncated();
      result.terminated = !result.truncated;
    }
    write(observation);
    return result;
  }

  /// The rules and state of the game (tests and tools inspect and set them).
  Game& game() { return game_; }
  const Game& game() const { return game_; }
  /// The action actually played last (after sticky actions), of all six.
  std::int32_t last_action() const { return last_action_; }

 private:
  void write(const Tensor& observation) const {
    require_observation(observation, observation_spec(), Game::kName);
    std::uint8_t* grid = observation.data<std::uint8_t>();
    std::fill(grid, grid + minatar::kSize * minatar::kSize * Game::kChannels, std::uint8_t{0});
    game_.render(grid);
  }

  minatar::Options options_;
  Game game_;
  Rng rng_;
  std::int32_t last_action_ = minatar::action::kNoop;
};

namespace minatar {

/// Sets channel `c` of cell (row, column) in a [10, 10, C] grid.
inline void set_cell(std::uint8_t* grid, std::int32_t channels, std::int32_t row,
                     std::int32_t column, std::int32_t c) {
  grid[(row * kSize + column) * channels + c] = 1;
}

}  // namespace minatar

}  // namespace seedrl
