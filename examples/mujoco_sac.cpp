// mujoco_sac: soft actor-critic on MuJoCo locomotion (HalfCheetah, Hopper, Walker2d, Ant;
// Gymnasium v4 semantics) in one process. An actor steps the simulation, central inference draws
// the squashed Gaussian policy's action, the transitions stream into a replay table and the SAC
// learner samples it: CleanRL's sac_continuous_action settings (one update of batch 256 per step,
// 5,000 random steps first).
//
//   mujoco_sac --env halfcheetah|hopper|walker2d|ant [--frames 1000000] [--seed 1]
//              [--logdir DIR] [--export-onnx FILE] [options...]
//
// --frames counts agent steps, as Gymnasium does. The mean return printed is that of the last 100
// training episodes. Progress goes to stderr; the last line of stdout is one JSON object with the
// run's figures. With --logdir, metrics, TensorBoard events and checkpoints are written there, and
// a run pointed at a directory with a checkpoint resumes from it. Ctrl-C stops cleanly.
#include <cstdio>
#include <string>

#include "seedrl/cli/train.hpp"
#include "seedrl/env/mujoco.hpp"

int main(int argc, char** argv) {
  using namespace seedrl;
  seedrl::cli::CommandLine app("SEED RL SAC on MuJoCo locomotion, in one process");
  // The recipe docs/results.md measures (seedrl/recipes/control.hpp), unless flags change it.
  const auto recipe = recipes::mujoco_sac();
  cli::SacCli cli(recipe);
  std::string env_name = "halfcheetah";
  LocalTrainerOptions run = recipe.run;
  app.option("--env", env_name, "halfcheetah, hopper, walker2d or ant")
      .one_of({"halfcheetah", "half_cheetah", "hopper", "walker2d", "ant"});
  cli.add_options(app, run);
  cli::add_actor_options(app, run, 64);
  if (const auto exit = app.parse(argc, argv)) return *exit;
  MujocoTask task;
  try {
    task = parse_mujoco_task(env_name);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mujoco_sac: error: %s\n", e.what());
    return 1;
  }
  return cli::train_sac("mujoco_sac", std::string(mujoco_task_name(task)), cli, run,
                        [task](std::uint64_t seed) { return MujocoEnv(task, seed); });
}
