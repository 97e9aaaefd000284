// mujoco_ppo: MuJoCo locomotion (HalfCheetah, Hopper, Walker2d, Ant; Gymnasium v4 semantics) in
// one process. Actors step the simulations, central inference samples the Gaussian policy, the PPO
// learner trains it with CleanRL's MuJoCo settings.
//
//   mujoco_ppo --env halfcheetah|hopper|walker2d|ant [--frames 1000000] [--actors 2]
//              [--envs-per-actor 8] [--unroll 128] [--batch 16] [--seed 1] [--logdir DIR]
//              [agent options...]
//
// --frames counts agent steps, as Gymnasium does (a step simulates the task's frame skip). The
// mean return printed is that of the last 100 training episodes. Progress goes to stderr; the last
// line of stdout is one JSON object with the run's figures. With --logdir, metrics, TensorBoard
// events and checkpoints are written there, and a run pointed at a directory with a checkpoint
// resumes from it. Ctrl-C stops cleanly (with a final checkpoint).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "cli.hpp"
#include "seedrl/env/mujoco.hpp"
#include "seedrl/seedrl.hpp"

int main(int argc, char** argv) {
  using namespace seedrl;

  CLI::App app{"SEED RL PPO on MuJoCo locomotion, in one process"};
  examples::PpoCli cli;
  cli.env_name = "halfcheetah";
  cli.frames = 1'000'000;
  LocalTrainerOptions run;
  run.num_actors = 2;
  run.envs_per_actor = 8;
  run.checkpoint_seconds = 300;
  run.server.unroll_length = 128;
  app.add_option("--env", cli.env_name, "halfcheetah, hopper, walker2d or ant");
  cli.add_options(app, run);
  examples::add_actor_options(app, run, 256);
  CLI11_PARSE(app, argc, argv);

  try {
    const MujocoTask task = parse_mujoco_task(cli.env_name);
    const MujocoEnv probe(task);
    nn::NetworkConfig network =
        nn::NetworkConfig::mlp(probe.observation_spec().shape.numel(), 0, cli.hidden);
    network.gaussian(probe.action_spec().dims());
    const std::string name(mujoco_task_name(task));
    run.run_info.push_back({"env", name});
    const TrainingResult result =
        examples::train_in_process("mujoco_ppo", name, cli, run, network,
                                   [task](std::uint64_t seed) { return MujocoEnv(task, seed); });
    examples::print_result(name, cli.seed, result);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mujoco_ppo: error: %s\n", e.what());
    return 1;
  }
}
