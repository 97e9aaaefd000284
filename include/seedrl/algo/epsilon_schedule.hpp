// Per-actor exploration rates of Ape-X and R2D2 (Horgan et al. 2018).
#pragma once

#include <cmath>
#include <cstdint>

#include "seedrl/core/error.hpp"

namespace seedrl {

/// epsilon_i = base^(1 + alpha * i / (N - 1)) for actor i of N (base 0.4, alpha 7: from 0.4 down
/// to 0.4^8 ~ 0.00066); a single actor gets base.
inline double actor_epsilon(std::int64_t actor, std::int64_t num_actors, double base = 0.4,
                            double alpha = 7.0) {
  SEEDRL_REQUIRE(num_actors >= 1, "actor_epsilon: num_actors must be >= 1, got ", num_actors);
  SEEDRL_REQUIRE(actor >= 0 && actor < num_actors, "actor_epsilon: actor ", actor,
                 " out of range [0, ", num_actors, ")");
  SEEDRL_REQUIRE(base > 0.0 && base <= 1.0, "actor_epsilon: base must be in (0, 1], got ", base);
  SEEDRL_REQUIRE(alpha >= 0.0 && std::isfinite(alpha), "actor_epsilon: alpha must be >= 0, got ",
                 alpha);
  if (num_actors == 1) return base;
  return std::pow(base,
                  1.0 + alpha * static_cast<double>(actor) / static_cast<double>(num_actors - 1));
}

}  // namespace seedrl
