// minatar_vtrace: SEED RL's V-trace agent learning a MinAtar game from its 10 x 10 pixels, in one
// process: actor threads step the game, a central inference server runs the MinAtar network
// (conv 16 3x3, linear 128) on their batched observations, a V-trace learner trains it.
//
//   minatar_vtrace [--game breakout|freeway|asterix|seaquest|space_invaders] [--frames 5000000]
//                  [--seed 1] [--logdir DIR] [--actors 4] [--envs-per-actor 16] [agent options]
//
// Progress on stderr; the last line of stdout is the JSON object of the other examples (frames,
// seconds, fps, episodes, mean_return, ...). Sticky actions (0.1) and difficulty ramping are on,
// as in MinAtar's published baselines.
#include <string>

#include "seedrl/cli/train.hpp"
#include "seedrl/recipes/minatar.hpp"
#include "seedrl/seedrl.hpp"
#include "seedrl/session/local_trainer.hpp"

int main(int argc, char** argv) {
  using namespace seedrl;

  seedrl::cli::CommandLine app("SEED RL V-trace on a MinAtar game, in one process");
  // The recipe docs/results.md measures (seedrl/recipes/minatar.hpp), unless flags change it.
  const auto recipe = recipes::minatar_vtrace();
  cli::VTraceCli cli(recipe);
  LocalTrainerOptions run = recipe.run;
  std::string game = "breakout";
  minatar::Options game_options;
  cli.add_options(app, run);
  app.remove("--env");
  cli::add_game_option(app, game, game_options);
  cli::add_actor_options(app, run, 1024);
  if (const auto exit = app.parse(argc, argv)) return *exit;

  return cli::train_on_minatar("minatar_vtrace", game, cli, run, game_options);
}
