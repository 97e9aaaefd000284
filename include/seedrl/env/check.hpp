// check_environment: plays an environment with random (legal) actions and checks what the
// Environment contract (env/environment.hpp) asks of it but the compiler cannot see, before a
// training run depends on it:
//   - reset() and step() write the whole observation and every declared field (the actor reuses
//     its buffers, so a cell left alone would hold the previous step's value): two environments of
//     the same seed write into buffers filled with two different byte patterns and must write the
//     same bytes;
//   - the same seed gives the same episode (the same observations, rewards and ends): a run is
//     reproducible from its seed (`options.deterministic = false` skips this and the check above);
//   - rewards and f32 observations are finite;
//   - every episode ends (terminated or truncated) within `options.max_episode_steps`.
// It throws seedrl::Error naming the step and what was wrong, and returns what it saw: a report
// for the program to print (the tutorial's corridor_vtrace does).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/core/step_record.hpp"
#include "seedrl/env/environment.hpp"

namespace seedrl {

struct EnvironmentCheckOptions {
  std::int64_t steps = 2'000;                ///< steps of random actions, across episodes
  std::int64_t max_episode_steps = 100'000;  ///< an episode longer than this never ends
  bool deterministic = true;                 ///< the same seed must give the same episodes
  std::uint64_t seed = 0;                    ///< the environments' seed and the actions'
};

/// What check_environment saw.
struct EnvironmentCheckReport {
  std::int64_t steps = 0;
  std::int64_t episodes = 0;  ///< that ended: terminated + truncated
  std::int64_t terminated = 0;
  std::int64_t truncated = 0;
  std::int64_t longest_episode = 0;  ///< steps, of those that ended
  float min_reward = std::numeric_limits<float>::infinity();
  float max_reward = -std::numeric_limits<float>::infinity();

  /// "2000 steps, 87 episodes (12 terminated, 75 truncated), longest 32 steps, rewards in
  /// [-0.01, 1]".
  std::string describe() const {
    return str_cat(steps, " steps, ", episodes, " episodes (", terminated, " terminated, ",
                   truncated, " truncated), longest ", longest_episode, " steps, rewards in [",
                   min_reward, ", ", max_reward, "]");
  }
};

namespace env_check_detail {

/// One environment's buffers: its observation and declared fields, as an actor's row 0.
struct Buffers {
  explicit Buffers(const StepSpec& spec) : specs(spec.fields) {
    observation = Tensor::empty(spec.observation.shape, spec.observation.dtype);
    for (const StepFieldSpec& f : specs) {
      fields.push_back(Tensor::empty(f.spec.shape.prepend({1}), f.spec.dtype));
    }
  }
  StepRow row() const { return StepRow(observation, specs, fields, 0); }
  void fill(std::uint8_t byte) const {
    std::memset(observation.raw_data(), byte, observation.bytes());
    for (const Tensor& f : fields) std::memset(f.raw_data(), byte, f.bytes());
  }
  /// The name of the first buffer whose bytes differ from `other`'s, or "".
  std::string differs(const Buffers& other) const {
    if (std::memcmp(observation.raw_data(), other.observation.raw_data(), observation.bytes()))
      return "the observation";
    for (std::size_t i = 0; i < fields.size(); ++i)
      if (std::memcmp(fields[i].raw_data(), other.fields[i].raw_data(), fields[i].bytes()))
        return str_cat("field '", specs[i].name, "'");
    return "";
  }

  std::vector<StepFieldSpec> specs;
  Tensor observation;
  std::vector<Tensor> fields;
};

/// A random action of `spec` (legal under `mask` where the environment declares one): writes
/// one i32 per branch to `discrete`, or one uniform value per box dimension to `box`.
inline void random_action(const ActionSpec& spec, const std::uint8_t* mask, Rng& rng,
                          std::vector<std::int32_t>& discrete, std::vector<float>& box) {
  if (spec.is_box()) {
    box.resize(spec.low.size());
    for (std::size_t d = 0; d < box.size(); ++d)
      box[d] = static_cast<float>(rng.uniform(spec.low[d], spec.high[d]));
    return;
  }
  const std::vector<std::int64_t> sizes = spec.branch_sizes();
  discrete.assign(sizes.size(), 0);
  std::int64_t offset = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    std::vector<std::int32_t> legal;
    for (std::int64_t a = 0; a < sizes[k]; ++a)
      if (mask == nullptr || mask[offset + a] != 0) legal.push_back(static_cast<std::int32_t>(a));
    SEEDRL_REQUIRE(!legal.empty(), "check_environment: the action mask allows no action",
                   sizes.size() > 1 ? str_cat(" in branch ", k) : std::string());
    discrete[k] = legal[rng.below(legal.size())];
    offset += sizes[k];
  }
}

inline void require_finite(const Tensor& observation, std::int64_t step) {
  if (observation.dtype() != DType::f32) return;
  const float* v = observation.data<float>();
  for (std::int64_t i = 0; i < observation.numel(); ++i)
    SEEDRL_REQUIRE(std::isfinite(v[i]), "check_environment: step ", step, ": observation element ",
                   i, " is ", v[i]);
}

}  // namespace env_check_detail

/// Plays environments from `make_env(seed)` with random legal actions for `options.steps` steps
/// and checks them (see the top of this file); throws seedrl::Error on the first problem.
template <class MakeEnv>
EnvironmentCheckReport check_environment(MakeEnv make_env,
                                         const EnvironmentCheckOptions& options = {}) {
  using namespace env_check_detail;
  SEEDRL_REQUIRE(options.steps > 0, "EnvironmentCheckOptions.steps must be positive, got ",
                 options.steps);
  SEEDRL_REQUIRE(options.max_episode_steps > 0,
                 "EnvironmentCheckOptions.max_episode_steps must be positive, got ",
                 options.max_episode_steps);
  auto env = make_env(options.seed);
  static_assert(Environment<decltype(env)>, "make_env must return a seedrl Environment");
  auto twin = make_env(options.seed);
  const StepSpec spec = step_spec(env);
  const ActionSpec& actions = spec.action;
  SEEDRL_REQUIRE(spec.observation.shape.numel() > 0, "check_environment: the observation spec ",
                 spec.observation.to_string(), " has no elements");
  SEEDRL_REQUIRE(actions.is_box() || actions.num_actions > 0,
                 "check_environment: the action spec has no actions");
  using Env = decltype(env);
  SEEDRL_REQUIRE(
      actions.is_box() == BoxEnvironment<Env> && actions.is_branched() == BranchedEnvironment<Env>,
      "check_environment: the action spec (",
      actions.is_box()        ? "a box"
      : actions.is_branched() ? "branches"
                              : "discrete",
      ") is not the kind of action step() takes");
  std::int64_t mask_field = -1;
  for (std::size_t i = 0; i < spec.fields.size(); ++i)
    if (spec.fields[i].name == kActionMaskField) mask_field = static_cast<std::int64_t>(i);

  Buffers mine(spec), theirs(spec);
  const auto start = [&](std::int64_t step) {
    mine.fill(0xAB);
    theirs.fill(0x54);
    reset_row(env, mine.row());
    if (options.deterministic) {
      reset_row(twin, theirs.row());
      const std::string what = mine.differs(theirs);
      SEEDRL_REQUIRE(what.empty(), "check_environment: step ", step, ": reset() left part of ",
                     what, " unwritten, or wrote it differently for the same seed");
    }
    require_finite(mine.observation, step);
  };

  Rng rng(options.seed ^ 0x9E3779B97F4A7C15ULL);
  std::vector<std::int32_t> discrete;
  std::vector<float> box;
  EnvironmentCheckReport report;
  std::int64_t episode_steps = 0;
  start(0);
  for (std::int64_t step = 1; step <= options.steps; ++step) {
    const std::uint8_t* mask =
        mask_field < 0 ? nullptr
                       : mine.fields[static_cast<std::size_t>(mask_field)].data<std::uint8_t>();
    random_action(actions, mask, rng, discrete, box);
    mine.fill(0xAB);
    theirs.fill(0x54);
    const auto act = [&](auto& e, const StepRow& row) {
      using E = std::remove_cvref_t<decltype(e)>;
      if constexpr (BoxEnvironment<E>) {
        return step_row(e, std::span<const float>(box), row);
      } else if constexpr (BranchedEnvironment<E>) {
        return step_row(e, std::span<const std::int32_t>(discrete), row);
      } else {
        return step_row(e, discrete[0], row);
      }
    };
    const StepResult r = act(env, mine.row());
    if (options.deterministic) {
      const StepResult t = act(twin, theirs.row());
      const std::string what = mine.differs(theirs);
      SEEDRL_REQUIRE(what.empty(), "check_environment: step ", step, ": step() left part of ", what,
                     " unwritten, or wrote it differently for the same seed");
      SEEDRL_REQUIRE(std::memcmp(&r.reward, &t.reward, sizeof(float)) == 0 &&
                         r.terminated == t.terminated && r.truncated == t.truncated,
                     "check_environment: step ", step,
                     ": two environments of the same seed returned ",
                     "different rewards or episode ends (", r.reward, " against ", t.reward,
                     "): seed every random choice from the environment's seed");
    }
    SEEDRL_REQUIRE(std::isfinite(r.reward), "check_environment: step ", step, ": reward is ",
                   r.reward);
    require_finite(mine.observation, step);
    report.steps = step;
    report.min_reward = std::min(report.min_reward, r.reward);
    report.max_reward = std::max(report.max_reward, r.reward);
    ++episode_steps;
    if (r.episode_over()) {
      ++report.episodes;
      report.terminated += r.terminated ? 1 : 0;
      report.truncated += r.terminated ? 0 : 1;
      report.longest_episode = std::max(report.longest_episode, episode_steps);
      episode_steps = 0;
      start(step);
    } else {
      SEEDRL_REQUIRE(episode_steps < options.max_episode_steps, "check_environment: an episode ",
                     "ran ", episode_steps, " steps without ending (max_episode_steps ",
                     options.max_episode_steps, "): truncate it with a time limit");
    }
  }
  return report;
}

}  // namespace seedrl
