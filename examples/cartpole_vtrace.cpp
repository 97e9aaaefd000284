// cartpole_vtrace: SEED RL in one process. Actors step CartPole (or Catch), a central inference
// server batches their observations, a V-trace learner trains the policy they act with.
//
//   cartpole_vtrace [--frames 500000] [--actors 4] [--envs-per-actor 8] [--unroll 20] [--batch 32]
//                   [--seed 1] [--logdir DIR] [--threads 1] [--env cartpole|catch] [agent
//                   options...]
//
// Progress goes to stderr; the last line of stdout is one JSON object with the run's figures.
// With --logdir, metrics.csv, TensorBoard event files and checkpoint.safetensors are written there,
// and a run pointed at a directory with a checkpoint resumes from it. Ctrl-C stops cleanly (with
// a final checkpoint).
#include <CLI/CLI.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <string>

#include "seedrl/env/cartpole.hpp"
#include "seedrl/env/catch.hpp"
#include "seedrl/runtime/local_trainer.hpp"
#include "seedrl/runtime/vtrace_learner.hpp"
#include "seedrl/seedrl.hpp"

namespace {

std::atomic<bool> interrupted{false};
void on_signal(int) {
  interrupted = true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace seedrl;
  using Backend = cpu::Backend;

  CLI::App app{"SEED RL V-trace on CartPole-v1 (or bsuite Catch), in one process"};
  std::string env_name = "cartpole";
  std::int64_t frames = 500'000;
  LocalTrainerOptions run;
  run.num_actors = 4;
  run.envs_per_actor = 8;
  run.checkpoint_seconds = 300;
  run.server.unroll_length = 20;
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

  app.add_option("--env", env_name, "environment: cartpole or catch")
      ->check(CLI::IsMember({"cartpole", "catch"}));
  app.add_option("--frames", frames, "environment frames to train for")->check(CLI::PositiveNumber);
  app.add_option("--actors", run.num_actors, "actor threads")->check(CLI::Range(1, 256));
  app.add_option("--envs-per-actor", run.envs_per_actor, "environments each actor steps")
      ->check(CLI::Range(1, 256));
  app.add_option("--eval-actors", run.evaluation_actors, "extra greedy actors that do not train")
      ->check(CLI::Range(0, 64));
  app.add_option("--unroll", run.server.unroll_length, "transitions per unroll (T)")
      ->check(CLI::Range(1, 10000));
  app.add_option("--batch", batch, "unrolls per learner step (B)")->check(CLI::Range(1, 4096));
  app.add_option("--seed", seed, "seed of parameters, environments and sampling");
  app.add_option("--logdir", run.logdir,
                 "directory for metrics, TensorBoard events and checkpoints");
  app.add_option("--threads", run.learner_threads, "learner compute threads")
      ->check(CLI::Range(1, 256));
  app.add_option("--inference-threads", run.server.threads, "inference compute threads")
      ->check(CLI::Range(1, 256));
  app.add_option("--checkpoint-seconds", run.checkpoint_seconds,
                 "checkpoint period (0: at the end only)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--report-seconds", run.report_seconds, "progress and metrics period")
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
  CLI11_PARSE(app, argc, argv);

  try {
    const bool cartpole = env_name == "cartpole";
    VTraceAgentOptions agent_options;
    agent_options.network =
        cartpole ? nn::NetworkConfig::mlp(4, 2, hidden) : nn::NetworkConfig::mlp(50, 3, hidden);
    agent_options.network.lstm_size = lstm;
    agent_options.network.seed = seed;
    agent_options.batch_size = batch;
    agent_options.discount = discount;
    agent_options.vtrace = {clip_rho, clip_pg_rho, lambda};
    agent_options.loss = {baseline_cost, entropy_cost};
    agent_options.max_abs_reward = max_abs_reward;
    agent_options.max_grad_norm = max_grad_norm;
    agent_options.optimizer.kind =
        optimizer == "adam" ? nn::OptimizerKind::adam : nn::OptimizerKind::rmsprop;
    agent_options.optimizer.adam.epsilon = static_cast<float>(adam_epsilon);
    agent_options.optimizer.rmsprop.epsilon = static_cast<float>(rmsprop_epsilon);
    const std::int64_t frames_per_step = batch * run.server.unroll_length;
    agent_options.learning_rate = {
        learning_rate, decay ? (frames + frames_per_step - 1) / frames_per_step : 0, 0.0};
    const VTraceAgent agent(agent_options);

    run.total_frames = frames;
    run.server.seed = seed;
    run.server.batch_timeout = std::chrono::microseconds(batch_timeout_us);
    run.interrupt = &interrupted;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);

    std::fprintf(stderr,
                 "cartpole_vtrace: %s, %d actors x %d envs, unroll %lld, batch %lld, seed %llu\n",
                 env_name.c_str(), run.num_actors, run.envs_per_actor,
                 static_cast<long long>(run.server.unroll_length), static_cast<long long>(batch),
                 static_cast<unsigned long long>(seed));
    auto env_seed = [seed](std::int32_t actor, std::int32_t env) {
      return seed * 1000003ULL + static_cast<std::uint64_t>(actor) * 1009ULL +
             static_cast<std::uint64_t>(env);
    };
    TrainingResult result;
    if (cartpole) {
      result = train_locally<VTraceAgent, Backend>(
          agent, [&](std::int32_t a, std::int32_t e) { return CartPole(env_seed(a, e)); }, run);
    } else {
      // Catch's board [10, 5] is seen as a vector of 50 by the MLP.
      result = train_locally<VTraceAgent, Backend>(
          agent,
          [&](std::int32_t a, std::int32_t e) { return FlattenObservation(Catch(env_seed(a, e))); },
          run);
    }
    std::printf(
        "{\"env\":\"%s\",\"frames\":%lld,\"seconds\":%.3f,\"fps\":%.1f,\"episodes\":%lld,\"mean_"
        "return\":%.3f,"
        "\"learner_steps\":%lld,\"seed\":%llu,\"resumed\":%s,\"interrupted\":%s}\n",
        env_name.c_str(), static_cast<long long>(result.frames), result.seconds, result.fps,
        static_cast<long long>(result.episodes), result.mean_return,
        static_cast<long long>(result.learner_steps), static_cast<unsigned long long>(seed),
        result.resumed ? "true" : "false", result.interrupted ? "true" : "false");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cartpole_vtrace: error: %s\n", e.what());
    return 1;
  }
}
