// CardPick: a game whose legal actions change every step, for legal-action masks (issue 36).
//
// Rules: an episode deals `cards` cards face up, each of value 1 to 9 (uniform, from the seed's
// stream). The player takes `picks` of them, one per step (action = the card's position). Taking a
// card still on the table scores its value / 9 and removes it; taking a position whose card is
// gone is illegal: it scores `illegal_reward` (-1 by default) and ends the episode. The episode
// terminates after the last pick. The best return is the sum of the `picks` highest values / 9,
// in any order; a player that picks only legal cards never scores below 0.
//
// Observation f32 [2, cards]: plane 0 the value / 9 of each card on the table (0 where taken),
// plane 1 is 1 where a card was taken. Step field "action_mask" u8 [cards]: 1 where the card is
// still on the table (kActionMaskField; CardPickOptions::action_mask false: not declared).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "seedrl/core/random.hpp"
#include "seedrl/env/environment.hpp"

namespace seedrl {

struct CardPickOptions {
  std::int32_t cards = 8;
  std::int32_t picks = 4;
  float illegal_reward = -1.0f;
  bool action_mask = true;  ///< declare the mask (false: the same game for agents without one)
};

class CardPick {
 public:
  explicit CardPick(std::uint64_t seed = 0, const CardPickOptions& options = {})
      : options_(options), rng_(seed) {
    SEEDRL_REQUIRE(options.cards >= 1 && options.cards <= 64, "CardPickOptions.cards must be in ",
                   "[1, 64], got ", options.cards);
    SEEDRL_REQUIRE(options.picks >= 1 && options.picks <= options.cards,
                   "CardPickOptions.picks must be in [1, cards = ", options.cards, "], got ",
                   options.picks);
  }

  TensorSpec observation_spec() const { return {{2, options_.cards}, DType::f32}; }
  ActionSpec action_spec() const { return {options_.cards}; }
  std::vector<StepFieldSpec> step_fields() const {
    if (!options_.action_mask) return {};
    return {{kActionMaskField, {{options_.cards}, DType::u8}}};
  }

  void reset(const StepRow& row) {
    values_.resize(static_cast<std::size_t>(options_.cards));
    for (std::int32_t& v : values_) v = 1 + static_cast<std::int32_t>(rng_.below(9));
    taken_.assign(static_cast<std::size_t>(options_.cards), 0);
    picked_ = 0;
    over_ = false;
    write(row);
  }

  StepResult step(std::int32_t action, const StepRow& row) {
    SEEDRL_REQUIRE(action >= 0 && action < options_.cards, "CardPick: action ", action,
                   " out of range [0, ", options_.cards, ")");
    SEEDRL_REQUIRE(!over_, "CardPick: step after the episode ended; call reset()");
    StepResult result;
    const auto a = static_cast<std::size_t>(action);
    if (taken_[a]) {
      ++illegal_;
      result.reward = options_.illegal_reward;
      result.terminated = true;
    } else {
      taken_[a] = 1;
      result.reward = static_cast<float>(values_[a]) / 9.0f;
      result.terminated = ++picked_ == options_.picks;
    }
    over_ = result.terminated;
    write(row);
    return result;
  }

  /// The values dealt this episode, and the best return it allows.
  const std::vector<std::int32_t>& values() const { return values_; }
  float best_return() const {
    std::vector<std::int32_t> sorted = values_;
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
    float total = 0.0f;
    for (std::int32_t i = 0; i < options_.picks; ++i)
      total += static_cast<float>(sorted[static_cast<std::size_t>(i)]) / 9.0f;
    return total;
  }
  /// Illegal picks since construction.
  std::int64_t illegal_picks() const { return illegal_; }

 private:
  void write(const StepRow& row) const {
    require_observation(row.observation(), observation_spec(), "CardPick");
    float* obs = row.observation().data<float>();
    std::uint8_t* mask =
        options_.action_mask ? row.field(kActionMaskField).data<std::uint8_t>() : nullptr;
    const auto n = static_cast<std::size_t>(options_.cards);
    for (std::size_t i = 0; i < n; ++i) {
      obs[i] = taken_[i] ? 0.0f : static_cast<float>(values_[i]) / 9.0f;
      obs[n + i] = taken_[i] ? 1.0f : 0.0f;
      if (mask) mask[i] = taken_[i] ? 0 : 1;
    }
  }

  CardPickOptions options_;
  Rng rng_;
  std::vector<std::int32_t> values_;
  std::vector<std::uint8_t> taken_;
  std::int32_t picked_ = 0;
  std::int64_t illegal_ = 0;
  bool over_ = true;
};

static_assert(Environment<CardPick> && FieldEnvironment<CardPick>);

}  // namespace seedrl
