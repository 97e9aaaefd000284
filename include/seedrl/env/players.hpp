// Environments of several players (issue 37): board games, duels, team games.
//
// One environment holds N players. At every step some of them act: one in a turn-based game
// (the player to move), all of them in a simultaneous one. Each player sees the game from its own
// side (its observation and step fields, a legal-action mask among them) and receives its own
// reward; the episode ends for all at once.
//
//   struct MyGame {
//     int players() const;                                  // N >= 2
//     seedrl::TensorSpec observation_spec() const;          // one player's view
//     seedrl::ActionSpec action_spec() const;               // the same for every player
//     std::vector<seedrl::StepFieldSpec> step_fields() const;  // e.g. the legal-action mask
//     void reset();                                         // start a game
//     bool acts(int player) const;                          // does `player` act at this step?
//     void observe(int player, const seedrl::StepRow& row) const;  // its view, fields included
//     seedrl::PlayersStepResult step(std::span<const std::int32_t> actions);
//     // actions[p] is read for the players that act, ignored for the others
//   };
//   static_assert(seedrl::PlayersEnvironment<MyGame>);
//
// A player that does not act at a step sees a mask that allows nothing. Rewards go to every
// player at the step they arise (a win pays the winner +1 and the loser -1 at the final move);
// whoever drives the game gives a player what it earned since its last action at its next one,
// or at the episode's end.
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <span>
#include <vector>

#include "seedrl/env/environment.hpp"

namespace seedrl {

/// The most players an environment may have.
inline constexpr int kMaxPlayers = 8;

/// What one step of a several-player environment returns besides the observations.
struct PlayersStepResult {
  std::array<float, kMaxPlayers> rewards{};  ///< per player, [0, players())
  bool terminated = false;                   ///< the game reached its end: no bootstrap
  bool truncated = false;                    ///< cut short (a move limit)
  bool episode_over() const { return terminated || truncated; }
};

template <class E>
concept PlayersEnvironment = requires(E& env, const E& game, const StepRow& row, int player,
                                      std::span<const std::int32_t> actions) {
  { game.players() } -> std::convertible_to<int>;
  { game.observation_spec() } -> std::convertible_to<TensorSpec>;
  { game.action_spec() } -> std::convertible_to<ActionSpec>;
  { game.step_fields() } -> std::convertible_to<std::vector<StepFieldSpec>>;
  env.reset();
  { game.acts(player) } -> std::convertible_to<bool>;
  game.observe(player, row);
  { env.step(actions) } -> std::convertible_to<PlayersStepResult>;
};

}  // namespace seedrl
