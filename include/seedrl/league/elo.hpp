// ELO ratings for self-play (issue 37), as Unity ML-Agents keeps them.
//
// A player rated R meets an opponent rated R_o; the expected score of the first is
//   E = 1 / (1 + 10^((R_o - R) / 400)),
// and after a game it scored S in (1 a win, 1/2 a draw, 0 a loss):
//   R <- R + K (S - E),   R_o <- R_o - K (S - E).
// Ratings start at 1200 and move by at most K = 16 points per game (ML-Agents' values).
#pragma once

#include <cmath>

#include "seedrl/core/error.hpp"

namespace seedrl {

struct EloOptions {
  double k = 16.0;                 ///< the most a game moves a rating
  double initial_rating = 1200.0;  ///< a new player's rating

  void validate(const char* owner = "EloOptions") const {
    SEEDRL_REQUIRE(std::isfinite(k) && k > 0.0, owner, ".k must be > 0, got ", k);
    SEEDRL_REQUIRE(std::isfinite(initial_rating), owner, ".initial_rating must be finite, got ",
                   initial_rating);
  }
};

/// The expected score of a player rated `rating` against one rated `opponent`.
inline double elo_expected_score(double rating, double opponent) {
  return 1.0 / (1.0 + std::pow(10.0, (opponent - rating) / 400.0));
}

/// Updates both ratings after a game in which the player scored `score` (1, 0.5 or 0).
inline void elo_update(double& rating, double& opponent, double score, double k) {
  SEEDRL_REQUIRE(score == 0.0 || score == 0.5 || score == 1.0,
                 "elo_update: a game's score is 1 (a win), 0.5 (a draw) or 0 (a loss), got ",
                 score);
  const double change = k * (score - elo_expected_score(rating, opponent));
  rating += change;
  opponent -= change;
}

}  // namespace seedrl
