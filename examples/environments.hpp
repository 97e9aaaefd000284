// The examples' built-in environments and MinAtar games by name, and their seeds. Part of the
// examples' shared pieces (cli.hpp includes it); copy it along with the program you start from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "seedrl/env/cartpole.hpp"
#include "seedrl/env/catch.hpp"
#include "seedrl/env/flatten_observation.hpp"
#include "seedrl/env/minatar/asterix.hpp"
#include "seedrl/env/minatar/breakout.hpp"
#include "seedrl/env/minatar/freeway.hpp"
#include "seedrl/env/minatar/seaquest.hpp"
#include "seedrl/env/minatar/space_invaders.hpp"
#include "seedrl/env/pendulum.hpp"

namespace seedrl::examples {

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
/// (sticky actions 0.1 and difficulty ramping on, as in MinAtar's published baselines).
template <class F>
decltype(auto) with_minatar_game(const std::string& name, F&& f) {
  if (name == "breakout") return f([](std::uint64_t s) { return MinAtarBreakout(s); });
  if (name == "freeway") return f([](std::uint64_t s) { return MinAtarFreeway(s); });
  if (name == "asterix") return f([](std::uint64_t s) { return MinAtarAsterix(s); });
  if (name == "seaquest") return f([](std::uint64_t s) { return MinAtarSeaquest(s); });
  SEEDRL_REQUIRE(name == "space_invaders", "unknown MinAtar game '", name, "'");
  return f([](std::uint64_t s) { return MinAtarSpaceInvaders(s); });
}

/// A distinct environment seed per (run seed, actor, environment).
inline std::uint64_t environment_seed(std::uint64_t seed, std::int64_t actor, std::int64_t env) {
  return seed * 1000003ULL + static_cast<std::uint64_t>(actor) * 1009ULL +
         static_cast<std::uint64_t>(env);
}

/// --env, one of `names` (cartpole and catch; the distributed examples add pendulum).
inline void add_environment_option(CommandLine& app, std::string& name,
                                   const std::vector<std::string>& names = {"cartpole", "catch"}) {
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  app.option("--env", name, "environment: " + list).one_of(names);
}

/// with_environment(), and Pendulum (box actions) for the programs that serve either kind.
template <class F>
decltype(auto) with_environment_or_pendulum(const std::string& name, F&& f) {
  if (name == "pendulum") return f([](std::uint64_t seed) { return Pendulum(seed); });
  return with_environment(name, f);
}

}  // namespace seedrl::examples
