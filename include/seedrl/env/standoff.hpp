// Standoff: a two-player duel with simultaneous moves (issue 37), a PlayersEnvironment.
//
// Both players choose at once, every step: 0 reload (one more bullet, at most `max_bullets`),
// 1 block, 2 shoot (spends a bullet). A shot hits a player who reloads: the shooter receives +1,
// the other -1, and the game ends (terminated). A shot meets a block: the bullet is spent for
// nothing. Two shots at once pass each other: both bullets are spent. Anything else changes only
// the bullets. After `max_steps` steps with nobody hit the game is a draw (0 each, truncated).
// Neither may shoot without a bullet nor reload with a full gun: the mask says so, and a move the
// mask forbids loses on the spot (-1; the other +1; both at once: a draw). Nobody can force a
// win: a careful player never loses (it blocks while the other is loaded, and reloads or shoots
// only when the other is empty), two careful players draw, and a careless one is shot reloading.
//
// Observation f32 [9] from the player's side: its bullets / max_bullets, the opponent's, the
// steps left / max_steps, its last move one-hot (3; zeros at the start) and the opponent's last
// move one-hot (3). Step field "action_mask" u8 [3].
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "seedrl/env/players.hpp"

namespace seedrl {

struct StandoffOptions {
  std::int32_t max_bullets = 3;
  std::int32_t max_steps = 30;
};

class Standoff {
 public:
  enum Move : std::int32_t { kReload = 0, kBlock = 1, kShoot = 2 };

  explicit Standoff(const StandoffOptions& options = {}) : options_(options) {
    SEEDRL_REQUIRE(options.max_bullets >= 1 && options.max_bullets <= 100,
                   "StandoffOptions.max_bullets must be in [1, 100], got ", options.max_bullets);
    SEEDRL_REQUIRE(options.max_steps >= 1, "StandoffOptions.max_steps must be >= 1, got ",
                   options.max_steps);
    reset();
  }

  int players() const { return 2; }
  TensorSpec observation_spec() const { return {{9}, DType::f32}; }
  ActionSpec action_spec() const { return {3}; }
  std::vector<StepFieldSpec> step_fields() const { return {{kActionMaskField, {{3}, DType::u8}}}; }

  void reset() {
    bullets_ = {0, 0};
    last_ = {-1, -1};
    steps_ = 0;
    over_ = false;
    winner_ = -1;
  }

  bool acts(int player) const { return !over_ && (player == 0 || player == 1); }

  void observe(int player, const StepRow& row) const {
    SEEDRL_REQUIRE(player == 0 || player == 1, "Standoff: player ", player, " out of range [0, 2)");
    const auto me = static_cast<std::size_t>(player), other = 1 - me;
    float* o = row.observation().data<float>();
    const auto full = static_cast<float>(options_.max_bullets);
    o[0] = static_cast<float>(bullets_[me]) / full;
    o[1] = static_cast<float>(bullets_[other]) / full;
    o[2] = static_cast<float>(options_.max_steps - steps_) / static_cast<float>(options_.max_steps);
    for (int m = 0; m < 3; ++m) {
      o[3 + m] = last_[me] == m ? 1.0f : 0.0f;
      o[6 + m] = last_[other] == m ? 1.0f : 0.0f;
    }
    std::uint8_t* mask = row.field(kActionMaskField).data<std::uint8_t>();
    for (std::int32_t m = 0; m < 3; ++m) mask[m] = acts(player) && legal(player, m) ? 1 : 0;
  }

  PlayersStepResult step(std::span<const std::int32_t> moves) {
    SEEDRL_REQUIRE(!over_, "Standoff: step() after the game ended (reset() first)");
    SEEDRL_REQUIRE(moves.size() >= 2, "Standoff: step() takes one move per player, got ",
                   moves.size());
    PlayersStepResult result;
    ++steps_;
    const bool legal0 = legal(0, moves[0]), legal1 = legal(1, moves[1]);
    if (!legal0 || !legal1) {
      illegal_moves_ += !legal0 + !legal1;
      return finish(result, legal0 ? 0 : legal1 ? 1 : -1, true);
    }
    for (std::size_t p = 0; p < 2; ++p) {
      last_[p] = moves[p];
      if (moves[p] == kReload) ++bullets_[p];
      if (moves[p] == kShoot) --bullets_[p];
    }
    const bool hit0 = moves[0] == kShoot && moves[1] == kReload;  // player 0 hits player 1
    const bool hit1 = moves[1] == kShoot && moves[0] == kReload;
    if (hit0 || hit1) return finish(result, hit0 ? 0 : 1, true);
    if (steps_ >= options_.max_steps) return finish(result, -1, false);
    return result;
  }

  /// Whether `player` may make `move` now.
  bool legal(int player, std::int32_t move) const {
    const std::int32_t b = bullets_[static_cast<std::size_t>(player)];
    return move == kBlock || (move == kReload && b < options_.max_bullets) ||
           (move == kShoot && b > 0);
  }
  std::int32_t bullets(int player) const { return bullets_[static_cast<std::size_t>(player)]; }
  bool over() const { return over_; }
  /// The winner once the game is over; -1 for a draw (or while it runs).
  int winner() const { return winner_; }
  std::int32_t steps() const { return steps_; }
  std::int64_t illegal_moves() const { return illegal_moves_; }
  const StandoffOptions& options() const { return options_; }
  /// The move's name: "reload", "block" or "shoot".
  static const char* move_name(std::int32_t move) {
    return move == kReload ? "reload" : move == kBlock ? "block" : move == kShoot ? "shoot" : "?";
  }

  /// The duel as text: the step, each player's bullets and last move.
  std::string to_string() const {
    std::string s = str_cat("step ", steps_, "/", options_.max_steps);
    for (int p = 0; p < 2; ++p) {
      const auto i = static_cast<std::size_t>(p);
      s += str_cat(" | player ", p, ": ", bullets_[i], "/", options_.max_bullets, " bullets");
      if (last_[i] >= 0) s += str_cat(", last ", move_name(last_[i]));
    }
    return s + "\n";
  }

 private:
  PlayersStepResult& finish(PlayersStepResult& result, int winner, bool terminated) {
    over_ = true;
    winner_ = winner;
    result.terminated = terminated;
    result.truncated = !terminated;
    if (winner >= 0) {
      result.rewards[static_cast<std::size_t>(winner)] = 1.0f;
      result.rewards[static_cast<std::size_t>(1 - winner)] = -1.0f;
    }
    return result;
  }

  StandoffOptions options_;
  std::array<std::int32_t, 2> bullets_{};
  std::array<std::int32_t, 2> last_{-1, -1};
  std::int32_t steps_ = 0;
  bool over_ = false;
  int winner_ = -1;
  std::int64_t illegal_moves_ = 0;
};

static_assert(PlayersEnvironment<Standoff>);

}  // namespace seedrl
