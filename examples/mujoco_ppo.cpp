// mujoco_ppo: MuJoCo locomotion (HalfCheetah, Hopper, Walker2d, Ant; Gymnasium v4 semantics) in
// one process. Actors step the simulations, central inference samples the Gaussian policy, the PPO
// learner (or, with --agent vtrace, the V-trace learner) trains it; PPO's defaults are CleanRL's
// MuJoCo settings.
//
//   mujoco_ppo --env halfcheetah|hopper|walker2d|ant [--agent ppo|vtrace] [--frames 1000000]
//              [--actors 2] [--envs-per-actor 8] [--unroll 128] [--batch 16] [--seed 1]
//              [--logdir DIR] [agent options...]
//
// --frames counts agent steps, as Gymnasium does (a step simulates the task's frame skip). The
// mean return printed is that of the last 100 training episodes. Progress goes to stderr; the last
// line of stdout is one JSON object with the run's figures. With --logdir, metrics, TensorBoard
// events and checkpoints are written there, and a run pointed at a directory with a checkpoint
// resumes from it. Ctrl-C stops cleanly (with a final checkpoint).
#include <cstdio>
#include <string>

#include "seedrl/cli/train.hpp"
#include "seedrl/env/mujoco.hpp"
#include "seedrl/seedrl.hpp"

int main(int argc, char** argv) {
  using namespace seedrl;

  seedrl::cli::CommandLine app("SEED RL PPO (or V-trace) on MuJoCo locomotion, in one process");
  // The recipe docs/results.md measures (seedrl/recipes/control.hpp), unless flags change it.
  const auto recipe = recipes::mujoco_ppo();
  cli::PpoCli cli(recipe);
  cli.env_name = "halfcheetah";
  std::string agent = "ppo";
  LocalTrainerOptions run = recipe.run;
  app.option("--env", cli.env_name, "halfcheetah, hopper, walker2d or ant")
      .one_of({"halfcheetah", "half_cheetah", "hopper", "walker2d", "ant"});
  app.option("--agent", agent, "ppo or vtrace").one_of({"ppo", "vtrace"});
  cli.add_options(app, run);
  cli::add_actor_options(app, run, 256);
  if (const auto exit = app.parse(argc, argv)) return *exit;
  if (agent == "vtrace") cli.use_vtrace_defaults(app, run, recipes::mujoco_vtrace());

  MujocoTask task;
  try {
    task = parse_mujoco_task(cli.env_name);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mujoco_ppo: error: %s\n", e.what());
    return 1;
  }
  return cli::train_box_agent("mujoco_ppo", std::string(mujoco_task_name(task)), agent, cli, run,
                              [task](std::uint64_t seed) { return MujocoEnv(task, seed); });
}
