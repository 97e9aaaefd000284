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
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "cli.hpp"
#include "seedrl/runtime/local_trainer.hpp"
#include "seedrl/seedrl.hpp"

int main(int argc, char** argv) {
  using namespace seedrl;

  CLI::App app{"SEED RL V-trace on a MinAtar game, in one process"};
  examples::VTraceCli cli;
  cli.frames = 5'000'000;
  cli.learning_rate = 6e-4;
  cli.batch = 16;
  LocalTrainerOptions run;
  run.num_actors = 4;
  run.envs_per_actor = 16;
  run.checkpoint_seconds = 300;
  run.server.unroll_length = 20;
  std::string game = "breakout";
  cli.add_options(app, run);
  app.remove_option(app.get_option("--env"));
  app.add_option("--game", game, "MinAtar game")->check(CLI::IsMember(examples::minatar_games()));
  examples::add_actor_options(app, run, 1024);
  CLI11_PARSE(app, argc, argv);

  try {
    const TrainingResult result = examples::with_minatar_game(game, [&](auto make_env) {
      const auto probe = make_env(0);
      return examples::train_in_process(
          "minatar_vtrace", game, cli, run,
          nn::NetworkConfig::minatar(probe.observation_spec().shape[2],
                                     probe.action_spec().num_actions),
          make_env);
    });
    examples::print_result(game, cli.seed, result);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "minatar_vtrace: error: %s\n", e.what());
    return 1;
  }
}
