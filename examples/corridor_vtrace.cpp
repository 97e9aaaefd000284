// corridor_vtrace: train V-trace on the tutorial environment (examples/corridor_env.hpp).
// The shortest useful program: an environment checked, an agent, a way to make environments,
// and train_locally.
//
//   corridor_vtrace [--frames 100000] [--length 8] [--seed 1]
//
// Under mpirun -np N it trains as a learner group of N ranks (seedrl/cli/program.hpp), like the
// other training examples.
#include <cstdio>
#include <string>

#include "corridor_env.hpp"
#include "seedrl/cli/command_line.hpp"
#include "seedrl/cli/program.hpp"
#include "seedrl/cli/result_line.hpp"
#include "seedrl/env/check.hpp"
#include "seedrl/seedrl.hpp"

int main(int argc, char** argv) {
  seedrl::cli::CommandLine app("V-trace on the corridor tutorial environment");
  std::int64_t frames = 100'000;
  std::int32_t length = 8;
  std::uint64_t seed = 1;
  app.option("--frames", frames, "environment frames to train for").positive();
  app.option("--length", length, "corridor length").range(2, 1000);
  app.option("--seed", seed, "seed");
  std::string export_onnx;
  app.option("--export-onnx", export_onnx, "write the trained network here as an ONNX model");
  if (const auto exit = app.parse(argc, argv)) return *exit;

  try {
    const int rank = seedrl::cli::group_rank();
    // Environments: one per (actor, index), each with its own seed.
    const auto make_env = [&](std::uint64_t env_seed) {
      return corridor::CorridorEnv(env_seed, {length, true});
    };

    // 0. The environment keeps its contract (writes its whole observation, the same episodes
    // for the same seed, finite rewards, episodes that end): random play, a few thousand steps.
    const seedrl::EnvironmentCheckReport check =
        seedrl::check_environment(make_env, {.seed = seed});
    if (rank == 0)
      std::fprintf(stderr, "corridor_vtrace: environment check: %s\n", check.describe().c_str());

    // 1. The agent: which network, and how to train it.
    seedrl::VTraceAgentOptions agent;
    agent.network = seedrl::nn::NetworkOptions::mlp(length, 2, {32});
    agent.network.seed = seed;
    agent.batch_size = 8;
    agent.optimizer.kind = seedrl::nn::OptimizerKind::rmsprop;
    agent.learning_rate = {3e-3, frames / (8 * 20), 0.0};

    // 2. How to run it: actors, environments per actor, the frame budget.
    seedrl::LocalTrainerOptions run;
    run.total_frames = frames;
    run.num_actors = 4;
    run.envs_per_actor = 8;
    run.server.unroll_length = 20;
    run.messages = seedrl::io::console_sink();  // progress on stderr; the default is silent
    run.export_onnx = export_onnx;              // empty: no export
    run.group = seedrl::cli::learner_group();   // null unless started by mpirun

    // 3. Train: environment (actor, index) of this rank gets a seed of its own.
    const seedrl::TrainingResult result =
        seedrl::train_locally<seedrl::VTraceAgent, seedrl::cpu::Backend>(
            seedrl::VTraceAgent(agent),
            [&](std::int32_t actor, std::int32_t env) {
              return make_env(seed * 1000 +
                              static_cast<std::uint64_t>(rank * 10000 + actor * 100 + env));
            },
            run);
    // The last line: the run's figures as JSON (the mean return null when no episode ended; a
    // learner group's line is rank 0's).
    seedrl::cli::print_result("corridor", seed, result);
    return 0;
  } catch (const std::exception& e) {
    return seedrl::cli::end_with_error("corridor_vtrace", e);
  }
}
