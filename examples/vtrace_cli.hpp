// Command-line pieces shared by cartpole_vtrace, distributed_learner and distributed_actor: the
// built-in environments by name, the V-trace agent's options, the session's options and the
// final JSON line. Copy it along with the program you start from.
#pragma once

#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "seedrl/env/cartpole.hpp"
#include "seedrl/env/catch.hpp"
#include "seedrl/env/flatten_observation.hpp"
#include "seedrl/runtime/local_trainer.hpp"
#include "seedrl/runtime/training_session.hpp"
#include "seedrl/runtime/vtrace_learner.hpp"

namespace seedrl::examples {

/// Calls `f(make_env)` with a factory `make_env(std::uint64_t seed)` for the named built-in
/// environment ("cartpole" or "catch"; Catch's [10, 5] board is flattened to 50 for the MLP).
template <class F>
decltype(auto) with_environment(const std::string& name, F&& f) {
  if (name == "cartpole") return f([](std::uint64_t seed) { return CartPole(seed); });
  SEEDRL_REQUIRE(name == "catch", "unknown environment '", name, "' (cartpole or catch)");
  return f([](std::uint64_t seed) { return FlattenObservation(Catch(seed)); });
}

/// Makes SIGINT and SIGTERM set the returned flag (for TrainingSessionOptions::interrupt, or to
/// poll) instead of killing the program, so that it can stop cleanly and save what it has.
inline const std::atomic<bool>* stop_on_signals() {
  static std::atomic<bool> stop{false};
  auto set = [](int) { stop = true; };
  std::signal(SIGINT, set);
  std::signal(SIGTERM, set);
  return &stop;
}

/// A distinct environment seed per (run seed, actor, environment).
inline std::uint64_t environment_seed(std::uint64_t seed, std::int64_t actor, std::int64_t env) {
  return seed * 1000003ULL + static_cast<std::uint64_t>(actor) * 1009ULL +
         static_cast<std::uint64_t>(env);
}

inline void add_environment_option(CLI::App& app, std::string& name) {
  app.add_option("--env", name, "environment: cartpole or catch")
      ->check(CLI::IsMember({"cartpole", "catch"}));
}

/// The V-trace agent's command-line options, with the defaults of examples/cartpole_vtrace.
struct VTraceCli {
  std::string env_name = "cartpole";
  std::int64_t frames = 500'000;
  std::uint64_t seed = 1;
  std::vector<std::int64_t> hidden{64, 64};
  std::int64_t lstm = 0;
  std::int64_t batch = 8;
  float discount = 0.99f, baseline_cost = 0.5f, entropy_cost = 0.01f, lambda = 1.0f,
        clip_rho = 1.0f, clip_pg_rho = 1.0f, max_abs_reward = 0.0f;
  double learning_rate = 3e-3, max_grad_norm = 40.0, adam_epsilon = 1e-8, rmsprop_epsilon = 1e-5;
  bool decay = true;
  std::string optimizer = "rmsprop";
  int batch_timeout_us = 1000;

  /// --env, --frames, --seed, the agent's options, and the session's options into `session`.
  void add_options(CLI::App& app, TrainingSessionOptions& session) {
    add_environment_option(app, env_name);
    app.add_option("--frames", frames, "environment frames to train for")
        ->check(CLI::PositiveNumber);
    app.add_option("--seed", seed, "seed of parameters, environments and sampling");
    app.add_option("--unroll", session.server.unroll_length, "transitions per unroll (T)")
        ->check(CLI::Range(1, 10000));
    app.add_option("--batch", batch, "unrolls per learner step (B)")->check(CLI::Range(1, 4096));
    app.add_option("--logdir", session.logdir,
                   "directory for metrics, TensorBoard events and checkpoints");
    app.add_option("--threads", session.learner_threads, "learner compute threads")
        ->check(CLI::Range(1, 256));
    app.add_option("--inference-threads", session.server.threads, "inference compute threads")
        ->check(CLI::Range(1, 256));
    app.add_option("--checkpoint-seconds", session.checkpoint_seconds,
                   "checkpoint period (0: at the end only)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--report-seconds", session.report_seconds, "progress and metrics period")
        ->check(CLI::PositiveNumber);
    app.add_option("--batch-timeout-us", batch_timeout_us,
                   "serve a partial inference batch after this long")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--hidden", hidden, "MLP torso sizes")->check(CLI::PositiveNumber);
    app.add_option("--lstm", lstm, "LSTM core size (0: none)")->check(CLI::NonNegativeNumber);
    app.add_option("--learning-rate", learning_rate, "initial learning rate")
        ->check(CLI::PositiveNumber);
    app.add_option("--lr-decay", decay, "decay the learning rate linearly to 0 over --frames");
    app.add_option("--optimizer", optimizer, "adam or rmsprop")
        ->check(CLI::IsMember({"adam", "rmsprop"}));
    app.add_option("--adam-epsilon", adam_epsilon, "Adam epsilon")->check(CLI::PositiveNumber);
    app.add_option("--rmsprop-epsilon", rmsprop_epsilon, "RMSProp epsilon (inside the square root)")
        ->check(CLI::PositiveNumber);
    app.add_option("--discount", discount, "discount factor gamma")->check(CLI::Range(0.0, 1.0));
    app.add_option("--baseline-cost", baseline_cost, "weight of the value loss")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--entropy-cost", entropy_cost, "weight of the entropy bonus")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--lambda", lambda, "V-trace lambda")->check(CLI::Range(0.0, 1.0));
    app.add_option("--clip-rho", clip_rho, "V-trace rho-bar")->check(CLI::PositiveNumber);
    app.add_option("--clip-pg-rho", clip_pg_rho, "V-trace policy-gradient rho-bar")
        ->check(CLI::PositiveNumber);
    app.add_option("--max-grad-norm", max_grad_norm, "global gradient-norm clip (0: none)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--max-abs-reward", max_abs_reward, "reward clipping for the loss (0: none)")
        ->check(CLI::NonNegativeNumber);
  }

  /// Completes `session` from the parsed options (frame budget, seed, batch timeout).
  void finish(TrainingSessionOptions& session) const {
    session.total_frames = frames;
    session.server.seed = seed;
    session.server.batch_timeout = std::chrono::microseconds(batch_timeout_us);
  }

  /// The agent the parsed options describe, with an MLP for observations of `observation_size`
  /// floats.
  VTraceAgent make_agent(std::int64_t observation_size, std::int64_t num_actions,
                         std::int64_t unroll_length) const {
    return make_agent(nn::NetworkConfig::mlp(observation_size, num_actions, hidden), unroll_length);
  }

  /// The agent the parsed options describe, with `network` (its LSTM size and seed set from the
  /// options).
  VTraceAgent make_agent(nn::NetworkConfig network, std::int64_t unroll_length) const {
    VTraceAgentOptions o;
    o.network = std::move(network);
    o.network.lstm_size = lstm;
    o.network.seed = seed;
    o.batch_size = batch;
    o.discount = discount;
    o.vtrace = {clip_rho, clip_pg_rho, lambda};
    o.loss = {baseline_cost, entropy_cost};
    o.max_abs_reward = max_abs_reward;
    o.max_grad_norm = max_grad_norm;
    o.optimizer.kind = optimizer == "adam" ? nn::OptimizerKind::adam : nn::OptimizerKind::rmsprop;
    o.optimizer.adam.epsilon = static_cast<float>(adam_epsilon);
    o.optimizer.rmsprop.epsilon = static_cast<float>(rmsprop_epsilon);
    const std::int64_t frames_per_step = batch * unroll_length;
    o.learning_rate = {learning_rate, decay ? (frames + frames_per_step - 1) / frames_per_step : 0,
                       0.0};
    return VTraceAgent(o);
  }
};

/// --actors and --envs-per-actor of the in-process programs.
inline void add_actor_options(CLI::App& app, LocalTrainerOptions& run, int max_envs_per_actor) {
  app.add_option("--actors", run.num_actors, "actor threads")->check(CLI::Range(1, 256));
  app.add_option("--envs-per-actor", run.envs_per_actor, "environments each actor steps")
      ->check(CLI::Range(1, max_envs_per_actor));
}

/// Trains the agent `cli` describes, with `network`, in one process on environments from
/// `make_env(seed)`, after a line on stderr saying what runs; stops cleanly on SIGINT/SIGTERM.
template <class MakeEnv>
TrainingResult train_in_process(const char* program, const std::string& env_name,
                                const VTraceCli& cli, LocalTrainerOptions run,
                                nn::NetworkConfig network, MakeEnv make_env) {
  cli.finish(run);
  run.interrupt = stop_on_signals();
  std::fprintf(stderr, "%s: %s, %d actors x %d envs, unroll %lld, batch %lld, seed %llu\n", program,
               env_name.c_str(), run.num_actors, run.envs_per_actor,
               static_cast<long long>(run.server.unroll_length), static_cast<long long>(cli.batch),
               static_cast<unsigned long long>(cli.seed));
  const VTraceAgent agent = cli.make_agent(std::move(network), run.server.unroll_length);
  return train_locally<VTraceAgent, cpu::Backend>(
      agent,
      [&](std::int32_t a, std::int32_t e) { return make_env(environment_seed(cli.seed, a, e)); },
      run);
}

/// The last line of the training programs' stdout: one JSON object with the run's figures.
inline void print_result(const std::string& env_name, std::uint64_t seed,
                         const TrainingResult& result) {
  std::printf(
      "{\"env\":\"%s\",\"frames\":%lld,\"seconds\":%.3f,\"fps\":%.1f,\"episodes\":%lld,"
      "\"mean_return\":%.3f,\"learner_steps\":%lld,\"seed\":%llu,\"resumed\":%s,"
      "\"interrupted\":%s}\n",
      env_name.c_str(), static_cast<long long>(result.frames), result.seconds, result.fps,
      static_cast<long long>(result.episodes), result.mean_return,
      static_cast<long long>(result.learner_steps), static_cast<unsigned long long>(seed),
      result.resumed ? "true" : "false", result.interrupted ? "true" : "false");
  std::fflush(stdout);
}

}  // namespace seedrl::examples
