// minatar_r2d2: SEED RL's R2D2 agent learning a MinAtar game from its 10 x 10 pixels, in one
// process: actor threads step the game, a central inference server runs a dueling LSTM Q-network
// (MinAtar torso, LSTM, dueling head) on their batched observations and acts epsilon-greedily
// with a rate per environment (0.4 down to 0.4^8), and the learner keeps sequences of burn-in +
// unroll + 1 steps in a prioritized replay and trains on n-step double-Q targets.
//
//   minatar_r2d2 [--game breakout|freeway|asterix|seaquest|space_invaders] [--frames 5000000]
//                [--seed 1] [--logdir DIR] [--actors 4] [--envs-per-actor 16] [agent options]
//
// Progress on stderr (with the replay's size and the mean Q); the last line of stdout is the JSON
// object of the other examples (frames, seconds, fps, episodes, mean_return, ...).
#include <string>

#include "seedrl/cli/train.hpp"
#include "seedrl/recipes/minatar.hpp"
#include "seedrl/seedrl.hpp"
#include "seedrl/session/local_trainer.hpp"

int main(int argc, char** argv) {
  using namespace seedrl;

  seedrl::cli::CommandLine app("SEED RL R2D2 on a MinAtar game, in one process");
  // The recipe docs/results.md measures (seedrl/recipes/minatar.hpp), unless flags change it.
  const auto recipe = recipes::minatar_r2d2();
  cli::R2D2Cli cli(recipe);
  LocalTrainerOptions run = recipe.run;
  std::string game = "breakout";
  minatar::Options game_options;
  cli.add_options(app, run);
  cli::add_game_option(app, game, game_options);
  cli::add_actor_options(app, run, 1024);
  if (const auto exit = app.parse(argc, argv)) return *exit;

  return cli::train_on_minatar("minatar_r2d2", game, cli, run, game_options);
}
