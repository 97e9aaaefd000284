// play: a trained agent plays evaluation episodes from its checkpoint alone, through
// seedrl::Policy (policy/policy.hpp), on the built-in environment it was trained on.
//
//   play --checkpoint FILE|LOGDIR --env cartpole|catch|breakout|freeway|asterix|seaquest|
//        space_invaders|pendulum|halfcheetah|hopper|walker2d|ant [--episodes 100] [--envs 8]
//        [--seed 1] [--threads 1]
//        [--acting greedy|sample|epsilon_greedy] [--epsilon 0.001]
//        [--gif FILE [--gif-frames 1000] [--gif-fps 20]] [--export-onnx FILE]
//   play --checkpoint FILE|LOGDIR --env tictactoe|connect4|standoff [--episodes 100]
//        [--opponent random|CHECKPOINT | --human [--human-first]] [--opening-moves K] [--gif FILE]
//   play --checkpoint FILE|LOGDIR --export-onnx FILE
//
// The agent acts as the training run's evaluation actors did (the checkpoint records how: V-trace
// greedy, R2D2 epsilon-greedy at 0.001) unless --acting says otherwise, so its mean return
// matches the run's evaluation_mean_return within noise. --envs environments play at once, one
// policy stream each; episodes are only started while fewer than --episodes have been, so that
// short episodes are not over-counted. Progress on stderr; the last line of stdout is a JSON
// object (env, agent, acting, episodes, mean_return, std_return, min_return, max_return, frames,
// seconds, training_frames). --gif records the first episode of environment 0 (up to --gif-frames
// frames), drawn from its observations (env/render.hpp), as an animated GIF (io/gif.hpp).
// --export-onnx writes the checkpoint's network as an ONNX model (io/onnx.hpp, docs/deployment.md)
// first, with the run's observation normalisation in the graph; without --env that is all play
// does. Box-action agents (pendulum; the MuJoCo tasks where seedrl's MuJoCo part is built) act
// with the Gaussian's mean, clipped to the bounds the checkpoint records, or sample with
// --acting sample. The games of two players (examples/play_games.hpp) play --episodes games
// against a random player, another checkpoint or a person at the terminal, alternating sides,
// and end with a table of wins, draws and losses from each side and a JSON line. --threads: the
// compute threads of each forward (PolicyOptions::threads; 0: OpenMP's default, every core).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "play_games.hpp"
#include "play_recording.hpp"
#include "seedrl/cli/train.hpp"
#include "seedrl/env/pendulum.hpp"
#include "seedrl/env/render.hpp"
#ifdef SEEDRL_HAS_MUJOCO
#include "seedrl/env/mujoco.hpp"
#endif
#include "seedrl/io/gif.hpp"
#include "seedrl/io/onnx.hpp"
#include "seedrl/policy/policy.hpp"

namespace {

using namespace seedrl;
using examples::Recording;

struct PlayResult {
  std::vector<double> returns;
  std::int64_t frames = 0;
  double seconds = 0.0;
};

/// One environment of any type behind virtual calls, so that play's loop is compiled once rather
/// than once per environment (twelve of them with MuJoCo).
class PlayEnv {
 public:
  virtual ~PlayEnv() = default;
  virtual TensorSpec observation_spec() const = 0;
  virtual ActionSpec action_spec() const = 0;
  virtual bool box() const = 0;
  virtual void reset(const Tensor& observation) = 0;
  virtual StepResult step(std::int32_t action, const Tensor& observation) = 0;
  virtual StepResult step(std::span<const float> action, const Tensor& observation) = 0;
};

template <class Env>
class PlayEnvOf final : public PlayEnv {
 public:
  explicit PlayEnvOf(Env env) : env_(std::move(env)) {}
  TensorSpec observation_spec() const override { return env_.observation_spec(); }
  ActionSpec action_spec() const override { return env_.action_spec(); }
  bool box() const override { return BoxEnvironment<Env>; }
  void reset(const Tensor& observation) override { env_.reset(observation); }
  StepResult step(std::int32_t action, const Tensor& observation) override {
    if constexpr (BoxEnvironment<Env>) {
      (void)action, (void)observation;
      fail("play: a discrete action for an environment of box actions");
    } else {
      return env_.step(action, observation);
    }
  }
  StepResult step(std::span<const float> action, const Tensor& observation) override {
    if constexpr (BoxEnvironment<Env>) {
      return env_.step(action, observation);
    } else {
      (void)action, (void)observation;
      fail("play: box actions for an environment of discrete actions");
    }
  }

 private:
  Env env_;
};

/// `envs` environments from `make_env(seed)`, seeded as the training runs seed theirs.
template <class MakeEnv>
std::vector<std::unique_ptr<PlayEnv>> make_play_envs(MakeEnv make_env, std::int32_t envs,
                                                     std::uint64_t seed) {
  using Env = decltype(make_env(std::uint64_t{0}));
  std::vector<std::unique_ptr<PlayEnv>> games;
  games.reserve(static_cast<std::size_t>(envs));
  for (std::int32_t e = 0; e < envs; ++e)
    games.push_back(
        std::make_unique<PlayEnvOf<Env>>(make_env(seedrl::environment_seed(seed, 0, e))));
  return games;
}

/// Plays `episodes` episodes on `games` at once.
PlayResult play(Policy<>& policy, std::vector<std::unique_ptr<PlayEnv>> games,
                std::int64_t episodes, Recording& recording) {
  const auto envs = static_cast<std::int32_t>(games.size());
  const TensorSpec spec = games[0]->observation_spec();
  SEEDRL_REQUIRE(spec.shape == policy.network_config().observation_shape,
                 "play: ", policy.checkpoint(), " holds a network for observations ",
                 policy.network_config().observation_shape, ", the environment gives ", spec.shape,
                 " (another environment or game?)");
  SEEDRL_REQUIRE(games[0]->action_spec() == policy.action_spec(), "play: ", policy.checkpoint(),
                 " acts on ", policy.action_spec().to_string(), ", the environment on ",
                 games[0]->action_spec().to_string());
  const bool box = games[0]->box();
  const std::int32_t dims = policy.action_spec().dims();

  const Tensor observations = Tensor::zeros(spec.shape.prepend({envs}), spec.dtype);
  std::vector<double> running(static_cast<std::size_t>(envs), 0.0);
  std::vector<bool> active(static_cast<std::size_t>(envs), false);
  std::int64_t started = 0;
  for (std::int32_t e = 0; e < envs && started < episodes; ++e, ++started) {
    games[static_cast<std::size_t>(e)]->reset(observations[e]);
    active[static_cast<std::size_t>(e)] = true;
  }

  recording.start(spec);
  recording.add(observations[0]);

  PlayResult result;
  std::vector<std::int32_t> actions(box ? 0 : static_cast<std::size_t>(envs));
  std::vector<float> box_actions(box ? static_cast<std::size_t>(envs * dims) : 0);
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  double next_report = 2.0;
  while (static_cast<std::int64_t>(result.returns.size()) < episodes) {
    if (box) {
      policy.act(observations, std::span<float>(box_actions));
    } else {
      policy.act(observations, std::span<std::int32_t>(actions));
    }
    for (std::int32_t e = 0; e < envs; ++e) {
      const auto i = static_cast<std::size_t>(e);
      if (!active[i]) continue;
      StepResult step;
      if (box) {
        step = games[i]->step(
            std::span<const float>(box_actions)
                .subspan(i * static_cast<std::size_t>(dims), static_cast<std::size_t>(dims)),
            observations[e]);
      } else {
        step = games[i]->step(actions[i], observations[e]);
      }
      running[i] += step.reward;
      ++result.frames;
      if (e == 0) recording.add(observations[0]);
      if (!step.episode_over()) continue;
      if (e == 0) recording.done = true;
      result.returns.push_back(running[i]);
      running[i] = 0.0;
      policy.reset(e);
      active[i] = started < episodes;
      if (active[i]) {
        games[i]->reset(observations[e]);
        ++started;
      }
    }
    if (elapsed() >= next_report) {
      next_report += 2.0;
      double sum = 0.0;
      for (double r : result.returns) sum += r;
      std::fprintf(stderr, "play: %zu/%lld episodes, mean return %.2f, %.0f frames/s\n",
                   result.returns.size(), static_cast<long long>(episodes),
                   result.returns.empty() ? 0.0 : sum / static_cast<double>(result.returns.size()),
                   static_cast<double>(result.frames) / elapsed());
    }
  }
  result.seconds = elapsed();
  return result;
}

/// The box-action environments play knows besides with_environment's and MinAtar's.
std::vector<std::string> box_environments() {
  std::vector<std::string> names{"pendulum"};
#ifdef SEEDRL_HAS_MUJOCO
  for (const char* task : {"halfcheetah", "hopper", "walker2d", "ant"}) names.emplace_back(task);
#endif
  return names;
}

/// Calls `f(make_env)` for a built-in environment or MinAtar game (with `minatar`), by name.
template <class F>
decltype(auto) with_builtin_environment(const std::string& name, F&& f,
                                        const minatar::Options& minatar = {}) {
  for (const std::string& game : seedrl::minatar_games())
    if (game == name) return seedrl::with_minatar_game(name, f, minatar);
  if (name == "pendulum") return f([](std::uint64_t seed) { return Pendulum(seed); });
#ifdef SEEDRL_HAS_MUJOCO
  if (name != "cartpole" && name != "catch") {
    const MujocoTask task = parse_mujoco_task(name);
    return f([task](std::uint64_t seed) { return MujocoEnv(task, seed); });
  }
#endif
  return seedrl::with_environment(name, f);
}

/// The Policy of a checkpoint file, or of a run's logdir (its newest checkpoint that verifies:
/// io/checkpoint.hpp, generations); `checkpoint` becomes the file read.
std::unique_ptr<Policy<>> load_policy(std::string& checkpoint, const PolicyOptions& options) {
  std::unique_ptr<Policy<>> loaded;
  const auto load = [&](const std::string& file) {
    loaded = std::make_unique<Policy<>>(file, options);
    return loaded->counters();
  };
  if (std::filesystem::is_directory(checkpoint)) {
    const io::LoadedGeneration newest = io::load_newest_generation(
        (std::filesystem::path(checkpoint) / "checkpoint.safetensors").string(), load);
    SEEDRL_REQUIRE(newest.counters.has_value(), "play: ", checkpoint, " holds no checkpoint");
    for (const std::string& note : newest.notes) std::fprintf(stderr, "play: %s\n", note.c_str());
    checkpoint = newest.path;
  } else if (!load(checkpoint).checksummed) {
    std::fprintf(stderr,
                 "play: warning: %s carries no checksums (written before seedrl recorded "
                 "them): its data could not be verified\n",
                 checkpoint.c_str());
  }
  return loaded;
}

}  // namespace

int main(int argc, char** argv) {
  seedrl::cli::CommandLine app("A trained agent plays evaluation episodes from its checkpoint");
  std::string checkpoint, env_name, acting;
  std::int64_t episodes = 100;
  std::int32_t envs = 8;
  std::uint64_t seed = 1;
  double epsilon = 0.001;
  int threads = 1;
  Recording recording;
  std::vector<std::string> names{"cartpole", "catch"};
  for (const std::string& game : seedrl::minatar_games()) names.push_back(game);
  for (const std::string& env : box_environments()) names.push_back(env);
  for (const char* game : {"tictactoe", "connect4", "standoff"}) names.emplace_back(game);
  app.option("--checkpoint", checkpoint, "a checkpoint file, or a training run's --logdir")
      .required();
  app.option("--env", env_name, "the environment it was trained on").one_of(names);
  app.option("--episodes", episodes, "episodes to play").range(1, 10'000'000);
  app.option("--envs", envs, "environments playing at once").range(1, 4096);
  app.option("--seed", seed, "seed of the environments and of the policy's sampling");
  app.option("--threads", threads, "compute threads of each forward (0: every core)")
      .range(0, 1024);
  app.option("--acting", acting, "override how the agent acts (default: as its evaluation)")
      .one_of({"greedy", "sample", "epsilon_greedy"});
  app.option("--epsilon", epsilon, "with --acting epsilon_greedy").range(0.0, 1.0);
  app.option("--gif", recording.path, "record the first episode as an animated GIF here");
  app.option("--gif-frames", recording.max_frames, "at most this many frames in the GIF")
      .range(1, 100'000);
  app.option("--gif-fps", recording.fps, "frames per second of the GIF").range(1, 100);
  std::string export_onnx;
  app.option("--export-onnx", export_onnx, "write the checkpoint's network as an ONNX model");
  examples::GameSeriesOptions series;
  bool human = false;
  app.option("--opponent", series.opponent,
             "games of two players: 'random' or another checkpoint (file or logdir)");
  app.flag("--human", human, "games of two players: play against the agent at the terminal");
  app.flag("--human-first", series.human_first,
           "the opponent (you, with --human) moves first in game 1 (then sides alternate)");
  app.option("--opening-moves", series.opening_moves,
             "games of two players: the first K moves of every game at random")
      .range(0, 1000);
  if (const auto exit = app.parse(argc, argv)) return *exit;
  const bool two_players = examples::is_two_player_game(env_name);
  if (!two_players &&
      (human || app.count("--opponent") || series.human_first || series.opening_moves > 0)) {
    std::fprintf(stderr,
                 "play: --human, --opponent, --human-first and --opening-moves are for games of "
                 "two players (tictactoe, connect4, standoff), not --env %s\n",
                 env_name.c_str());
    return 2;
  }
  if (human && app.count("--opponent")) {
    std::fprintf(stderr, "play: --human and --opponent %s: one opponent at a time\n",
                 series.opponent.c_str());
    return 2;
  }
  if (env_name.empty() && export_onnx.empty()) {
    std::fprintf(stderr, "play: --env is required (or --export-onnx alone, to export only)\n");
    return 2;
  }

  try {
    PolicyOptions options;
    options.seed = seed;
    options.threads = threads;
    if (!acting.empty())
      options.acting = ActingOptions::parse(
          acting == "epsilon_greedy" ? acting + " " + std::to_string(epsilon) : acting, "--acting");
    std::unique_ptr<Policy<>> loaded = load_policy(checkpoint, options);
    Policy<>& policy = *loaded;
    std::fprintf(
        stderr, "play: %s (agent %s, network %s, trained %lld frames), %s, acting %s\n",
        checkpoint.c_str(), policy.agent().c_str(), nn::describe(policy.network_config()).c_str(),
        static_cast<long long>(policy.counters().frames),
        env_name.empty() ? "no environment" : env_name.c_str(), policy.acting().to_text().c_str());
    if (!export_onnx.empty()) {
      io::OnnxExportOptions onnx;  // the graph normalises observations as the run did
      onnx.observation_moments = policy.normalization().moments;
      onnx.observation_clip = policy.normalization().clip;
      onnx.step_fields = policy.step_fields();
      if (policy.description().squashed) onnx.squashed_box = policy.action_spec();
      io::export_onnx(policy.network(), export_onnx, onnx);
      std::fprintf(stderr, "play: exported the network as ONNX: %s\n", export_onnx.c_str());
      if (env_name.empty()) {
        std::printf("{\"checkpoint\":\"%s\",\"agent\":\"%s\",\"onnx\":\"%s\"}\n",
                    checkpoint.c_str(), policy.agent().c_str(), export_onnx.c_str());
        return 0;
      }
    }
    if (!recording.path.empty()) recording.kind = renderer_kind(env_name);
    if (two_players) {
      series.games = app.count("--episodes") || !human ? episodes : 2;  // a person: one each side
      series.seed = seed;
      if (human) series.opponent = "human";
      std::unique_ptr<Policy<>> opponent;
      if (series.opponent != "human" && series.opponent != "random") {
        opponent = load_policy(series.opponent, options);
        std::fprintf(stderr, "play: the opponent: %s (agent %s, trained %lld frames)\n",
                     series.opponent.c_str(), opponent->agent().c_str(),
                     static_cast<long long>(opponent->counters().frames));
      }
      return examples::play_named_game_series(env_name, policy, opponent.get(), series, recording);
    }
    // A MinAtar policy of fewer than six actions was trained on the game's minimal action set
    // (--minimal-actions).
    minatar::Options game_options;
    game_options.minimal_action_set = policy.action_spec().num_actions > 0 &&
                                      policy.action_spec().num_actions < minatar::kNumActions;
    const PlayResult r =
        play(policy,
             with_builtin_environment(
                 env_name, [&](auto make_env) { return make_play_envs(make_env, envs, seed); },
                 game_options),
             episodes, recording);
    if (!recording.path.empty()) {
      io::write_gif(recording.path, recording.animation);
      std::fprintf(stderr, "play: %zu frames of the first episode in %s\n",
                   recording.animation.frames.size(), recording.path.c_str());
    }

    double sum = 0.0, lowest = std::numeric_limits<double>::infinity(), highest = -lowest;
    for (double x : r.returns) {
      sum += x;
      lowest = std::min(lowest, x);
      highest = std::max(highest, x);
    }
    const double n = static_cast<double>(r.returns.size()), mean = sum / n;
    double squares = 0.0;
    for (double x : r.returns) squares += (x - mean) * (x - mean);
    std::printf(
        "{\"env\":\"%s\",\"agent\":\"%s\",\"acting\":\"%s\",\"episodes\":%zu,"
        "\"mean_return\":%.3f,\"std_return\":%.3f,\"min_return\":%.3f,\"max_return\":%.3f,"
        "\"frames\":%lld,\"seconds\":%.3f,\"training_frames\":%lld}\n",
        env_name.c_str(), policy.agent().c_str(), policy.acting().to_text().c_str(),
        r.returns.size(), mean, std::sqrt(squares / n), lowest, highest,
        static_cast<long long>(r.frames), r.seconds,
        static_cast<long long>(policy.counters().frames));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "play: error: %s\n", e.what());
    return 1;
  }
}
