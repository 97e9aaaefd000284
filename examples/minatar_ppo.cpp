// minatar_ppo: PPO learning a MinAtar game from its 10 x 10 pixels, in one process: actor threads
// step the game, a central inference server runs the MinAtar network (conv 16 3x3, linear 128,
// policy and value heads) on their batched observations, and the PPO learner makes 4 epochs of 8
// minibatches over each batch of 64 unrolls of 128 steps (8,192 transitions), after gymnax-blines'
// MinAtar PPO (seedrl/recipes/minatar.hpp says where it differs).
//
//   minatar_ppo [--game breakout|freeway|asterix|seaquest|space_invaders] [--frames 5000000]
//               [--seed 1] [--logdir DIR] [--actors 4] [--envs-per-actor 16] [agent options]
//
// Progress on stderr; the last line of stdout is the JSON object of the other examples (frames,
// seconds, fps, episodes, mean_return, ...).
#include <cstdint>
#include <string>
#include <vector>

#include "seedrl/cli/train.hpp"
#include "seedrl/recipes/minatar.hpp"
#include "seedrl/seedrl.hpp"
#include "seedrl/session/local_trainer.hpp"

int main(int argc, char** argv) {
  using namespace seedrl;

  seedrl::cli::CommandLine app("PPO on a MinAtar game, in one process");
  // The recipe docs/results.md measures (seedrl/recipes/minatar.hpp), unless flags change it.
  const auto recipe = recipes::minatar_ppo();
  cli::PpoCli cli(recipe);
  LocalTrainerOptions run = recipe.run;
  std::string game = "breakout";
  minatar::Options game_options;
  cli.add_options(app, run);
  cli::add_game_option(app, game, game_options);
  std::vector<std::int64_t> mlp_torso;
  app.option("--mlp-torso", mlp_torso,
             "an MLP of these hidden sizes on the flattened pixels instead of the MinAtar torso "
             "(gymnax's networks: 256 256)");
  cli::add_actor_options(app, run, 1024);
  if (const auto exit = app.parse(argc, argv)) return *exit;

  return cli::train_on_minatar("minatar_ppo", game, cli, run, game_options, mlp_torso);
}
