// pendulum_ppo: continuous control in one process. Actors step Pendulum-v1 (a torque in [-2, 2]),
// central inference samples the Gaussian policy, the PPO learner trains it.
//
//   pendulum_ppo [--frames 500000] [--actors 2] [--envs-per-actor 8] [--unroll 128] [--batch 16]
//                [--seed 1] [--logdir DIR] [agent options...]
//
// --frames counts agent steps (environment steps), as Gymnasium does. Progress goes to stderr; the
// last line of stdout is one JSON object with the run's figures. With --logdir, metrics,
// TensorBoard events and checkpoints are written there, and a run pointed at a directory with a
// checkpoint resumes from it. Ctrl-C stops cleanly (with a final checkpoint).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "cli.hpp"
#include "seedrl/env/pendulum.hpp"
#include "seedrl/seedrl.hpp"

int main(int argc, char** argv) {
  using namespace seedrl;

  CLI::App app{"SEED RL PPO on Pendulum-v1, in one process"};
  examples::PpoCli cli;
  cli.discount = 0.9f;       // Pendulum's reward is immediate: a short horizon learns faster
  cli.learning_rate = 1e-3;  // as RL Baselines3 Zoo's tuned PPO on Pendulum
  LocalTrainerOptions run;
  run.num_actors = 2;
  run.envs_per_actor = 8;
  run.checkpoint_seconds = 300;
  run.server.unroll_length = 128;
  cli.add_options(app, run);
  examples::add_actor_options(app, run, 256);
  CLI11_PARSE(app, argc, argv);

  try {
    const Pendulum probe;
    nn::NetworkConfig network =
        nn::NetworkConfig::mlp(probe.observation_spec().shape.numel(), 0, cli.hidden);
    network.gaussian(probe.action_spec().dims());
    const TrainingResult result =
        examples::train_in_process("pendulum_ppo", "pendulum", cli, run, network,
                                   [](std::uint64_t seed) { return Pendulum(seed); });
    examples::print_result("pendulum", cli.seed, result);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pendulum_ppo: error: %s\n", e.what());
    return 1;
  }
}
