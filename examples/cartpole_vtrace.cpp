// cartpole_vtrace: SEED RL in one process. Actors step CartPole (or Catch), a central inference
// server batches their observations, a V-trace learner trains the policy they act with.
//
//   cartpole_vtrace [--frames 500000] [--actors 4] [--envs-per-actor 8] [--unroll 20] [--batch 8]
//                   [--seed 1] [--logdir DIR] [--threads 1] [--env cartpole|catch]
//                   [agent options...]
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

#include "seedrl/runtime/local_trainer.hpp"
#include "seedrl/seedrl.hpp"
#include "vtrace_cli.hpp"

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
  examples::VTraceCli cli;
  LocalTrainerOptions run;
  run.num_actors = 4;
  run.envs_per_actor = 8;
  run.checkpoint_seconds = 300;
  run.server.unroll_length = 20;
  cli.add_options(app, run);
  app.add_option("--actors", run.num_actors, "actor threads")->check(CLI::Range(1, 256));
  app.add_option("--envs-per-actor", run.envs_per_actor, "environments each actor steps")
      ->check(CLI::Range(1, 256));
  app.add_option("--eval-actors", run.evaluation_actors, "extra greedy actors that do not train")
      ->check(CLI::Range(0, 64));
  CLI11_PARSE(app, argc, argv);

  try {
    cli.finish(run);
    run.interrupt = &interrupted;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    std::fprintf(stderr,
                 "cartpole_vtrace: %s, %d actors x %d envs, unroll %lld, batch %lld, seed %llu\n",
                 cli.env_name.c_str(), run.num_actors, run.envs_per_actor,
                 static_cast<long long>(run.server.unroll_length),
                 static_cast<long long>(cli.batch), static_cast<unsigned long long>(cli.seed));
    const TrainingResult result = examples::with_environment(cli.env_name, [&](auto make_env) {
      const auto probe = make_env(0);
      const VTraceAgent agent =
          cli.make_agent(probe.observation_spec().shape.numel(), probe.action_spec().num_actions,
                         run.server.unroll_length);
      return train_locally<VTraceAgent, Backend>(
          agent,
          [&](std::int32_t a, std::int32_t e) {
            return make_env(examples::environment_seed(cli.seed, a, e));
          },
          run);
    });
    examples::print_result(cli.env_name, cli.seed, result);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cartpole_vtrace: error: %s\n", e.what());
    return 1;
  }
}
