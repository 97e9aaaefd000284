// pendulum_sac: soft actor-critic on Pendulum-v1 in one process. An actor steps the environment,
// central inference draws the squashed Gaussian policy's torques, the transitions stream into a
// replay table and the SAC learner samples it, one update of batch 256 per transition.
//
//   pendulum_sac [--frames 20000] [--seed 1] [--logdir DIR] [--export-onnx FILE] [options...]
//
// --frames counts agent steps. Progress goes to stderr; the last line of stdout is one JSON
// object with the run's figures (the mean return of the last 100 training episodes).
#include "seedrl/cli/train.hpp"
#include "seedrl/env/pendulum.hpp"

int main(int argc, char** argv) {
  using namespace seedrl;
  seedrl::cli::CommandLine app("SEED RL SAC on Pendulum-v1, in one process");
  // The recipe docs/results.md measures (seedrl/recipes/control.hpp), unless flags change it.
  const auto recipe = recipes::pendulum_sac();
  cli::SacCli cli(recipe);
  LocalTrainerOptions run = recipe.run;
  cli.add_options(app, run);
  cli::add_actor_options(app, run, 64);
  if (const auto exit = app.parse(argc, argv)) return *exit;
  return cli::train_sac("pendulum_sac", "pendulum", cli, run,
                        [](std::uint64_t seed) { return Pendulum(seed); });
}
