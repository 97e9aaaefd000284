// The built-in environments and MinAtar games by name, as programs take them from a command line,
// and a seed for each environment of a run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/env/cartpole.hpp"
#include "seedrl/env/catch.hpp"
#include "seedrl/env/flatten_observation.hpp"
#include "seedrl/env/minatar/asterix.hpp"
#include "seedrl/env/minatar/breakout.hpp"
#include "seedrl/env/minatar/freeway.hpp"
#include "seedrl/env/minatar/seaquest.hpp"
#include "seedrl/env/minatar/space_invaders.hpp"
#include "seedrl/env/pendulum.hpp"

namespace seedrl {

/// Calls `f(make_env)` with a factory `make_env(std::uint64_t seed)` for the named built-in
/// environment ("cartpole" or "catch"; Catch's [10, 5] board is flattened to 50 for the MLP).
template <class F>
decltype(auto) with_environment(const std::string& name, F&& f) {
  if (name == "cartpole") return f([](std::uint64_t seed) { return CartPole(seed); });
  SEEDRL_REQUIRE(name == "catch", "unknown environment '", name, "' (cartpole or catch)");
  return f([](std::uint64_t seed) { return FlattenObservation(Catch(seed)); });
}

inline const std::vector<std::string>& minatar_games() {
  static const std::vector<std::string> games{"breakout", "freeway", "asterix", "seaquest",
                                              "space_invaders"};
  return games;
}

/// Calls `f(make_env)` with a factory `make_env(std::uint64_t seed)` for the named MinAtar game
/// (by default sticky actions 0.1, difficulty ramping on and all six actions, as in MinAtar's
/// published baselines but for the minimal action sets they use).
template <class F>
decltype(auto) with_minatar_game(const std::string& name, F&& f,
                                 const minatar::Options& options = {}) {
  if (name == "breakout")
    return f([options](std::uint64_t s) { return MinAtarBreakout(s, options); });
  if (name == "freeway")
    return f([options](std::uint64_t s) { return MinAtarFreeway(s, options); });
  if (name == "asterix")
    return f([options](std::uint64_t s) { return MinAtarAsterix(s, options); });
  if (name == "seaquest")
    return f([options](std::uint64_t s) { return MinAtarSeaquest(s, options); });
  SEEDRL_REQUIRE(name == "space_invaders", "unknown MinAtar game '", name, "'");
  return f([options](std::uint64_t s) { return MinAtarSpaceInvaders(s, options); });
}

/// A distinct environment seed per (run seed, actor, environment).
inline std::uint64_t environment_seed(std::uint64_t seed, std::int64_t actor, std::int64_t env) {
  return seed * 1000003ULL + static_cast<std::uint64_t>(actor) * 1009ULL +
         static_cast<std::uint64_t>(env);
}

/// with_environment(), and Pendulum (box actions) for the programs that serve either kind.
template <class F>
decltype(auto) with_environment_or_pendulum(const std::string& name, F&& f) {
  if (name == "pendulum") return f([](std::uint64_t seed) { return Pendulum(seed); });
  return with_environment(name, f);
}

}  // namespace seedrl
