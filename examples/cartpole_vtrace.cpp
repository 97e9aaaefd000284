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
//
// Under an MPI launcher (mpirun -np 2 cartpole_vtrace ...) the ranks train as one learner group,
// each with its own actors, and rank 0 prints the group's JSON line with "ranks":2
// (docs/scaling.md).
#include <cstdio>
#include <string>

#include "seedrl/cli/train.hpp"
#include "seedrl/seedrl.hpp"
#include "seedrl/session/local_trainer.hpp"

int main(int argc, char** argv) {
  using namespace seedrl;

  seedrl::cli::CommandLine app("SEED RL V-trace on CartPole-v1 (or bsuite Catch), in one process");
  // The recipe docs/results.md measures (seedrl/recipes/control.hpp), unless flags change it.
  const auto recipe = recipes::cartpole_vtrace();
  cli::VTraceCli cli(recipe);
  LocalTrainerOptions run = recipe.run;
  cli.add_options(app, run);
  cli::add_actor_options(app, run, 256);
  app.option("--eval-actors", run.evaluation_actors, "extra greedy actors that do not train")
      .range(0, 64);
  if (const auto exit = app.parse(argc, argv)) return *exit;

  try {
    const TrainingResult result = seedrl::with_environment(cli.env_name, [&](auto make_env) {
      const auto probe = make_env(0);
      return cli::train_in_process(
          "cartpole_vtrace", cli.env_name, cli, run,
          nn::NetworkOptions::mlp(probe.observation_spec().shape.numel(),
                                  probe.action_spec().num_actions, cli.hidden),
          make_env);
    });
    cli::print_result(cli.env_name, cli.seed, result);
    return 0;
  } catch (const std::exception& e) {
    return cli::end_with_error("cartpole_vtrace", e);
  }
}
