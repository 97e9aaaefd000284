// The examples' built-in environments and MinAtar games by name, and their seeds. Part of the
// examples' shared pieces (cli.hpp includes it); copy it along with the program you start from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seedrl/cli/command_line.hpp"
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

/// An environment's u8 observation of any shape as f32 [D] (the values unchanged), for an MLP
/// torso on flattened pixels: MinAtar's [10, 10, C] as [100 C], as gymnax's MinAtar networks
/// see it.
template <Environment Env>
class FloatPixels {
 public:
  explicit FloatPixels(Env env) : env_(std::move(env)), inner_(env_.observation_spec()) {
    SEEDRL_REQUIRE(inner_.dtype == DType::u8, "FloatPixels: observations must be u8");
  }
  TensorSpec observation_spec() const { return {{inner_.shape.numel()}, DType::f32}; }
  ActionSpec action_spec() const { return env_.action_spec(); }
  void reset(const Tensor& observation) {
    env_.reset(pixels());
    convert(observation);
  }
  StepResult step(std::int32_t action, const Tensor& observation) {
    const StepResult r = env_.step(action, pixels());
    convert(observation);
    return r;
  }

 private:
  Tensor pixels() {
    pixels_.resize(static_cast<std::size_t>(inner_.shape.numel()));
    return Tensor::from_blob(pixels_.data(), inner_.shape, DType::u8);
  }
  void convert(const Tensor& observation) const {
    float* out = observation.data<float>();
    for (std::size_t i = 0; i < pixels_.size(); ++i) out[i] = static_cast<float>(pixels_[i]);
  }

  Env env_;
  TensorSpec inner_;
  std::vector<std::uint8_t> pixels_;
};

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

}  // namespace seedrl::examples
