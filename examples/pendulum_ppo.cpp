// pendulum_ppo: continuous control in one process. Actors step Pendulum-v1 (a torque in [-2, 2]),
// central inference samples the Gaussian policy, the PPO learner (or, with --agent vtrace, the
// V-trace learner) trains it.
//
//   pendulum_ppo [--agent ppo|vtrace] [--frames 500000] [--actors 2] [--envs-per-actor 8]
//                [--unroll 128] [--batch 16] [--seed 1] [--logdir DIR] [agent options...]
//
// --frames counts agent steps (environment steps), as Gymnasium does. Progress goes to stderr; the
// last line of stdout is one JSON object with the run's figures (the mean return of the last 100
// training episodes). With --logdir, metrics, TensorBoard events and checkpoints are written
// there, and a run pointed at a directory with a checkpoint resumes from it. Ctrl-C stops cleanly
// (with a final checkpoint).
#include <string>

#include "seedrl/cli/train.hpp"
#include "seedrl/env/pendulum.hpp"
#include "seedrl/seedrl.hpp"

int main(int argc, char** argv) {
  using namespace seedrl;

  seedrl::cli::CommandLine app("SEED RL PPO (or V-trace) on Pendulum-v1, in one process");
  // The recipe docs/results.md measures (seedrl/recipes/control.hpp), unless flags change it.
  const auto recipe = recipes::pendulum_ppo();
  cli::PpoCli cli(recipe);
  LocalTrainerOptions run = recipe.run;
  std::string agent = "ppo";
  app.option("--agent", agent, "ppo or vtrace").one_of({"ppo", "vtrace"});
  cli.add_options(app, run);
  cli::add_actor_options(app, run, 256);
  if (const auto exit = app.parse(argc, argv)) return *exit;
  if (agent == "vtrace") cli.use_vtrace_defaults(app, run, recipes::pendulum_vtrace());
  return cli::train_box_agent("pendulum_ppo", "pendulum", agent, cli, run,
                              [](std::uint64_t seed) { return Pendulum(seed); });
}
