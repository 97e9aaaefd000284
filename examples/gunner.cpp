// gunner: action branches with a legal-action mask per branch, end to end (issue 36). Actors play
// Gunner (env/gunner.hpp: a gun on a track of 7 cells chooses a move and a trigger together every
// step; a shot under the target scores 1, a miss -0.1; moving off the track or firing while
// reloading is illegal and scores -1), central inference draws one action per branch, and the
// learner trains one categorical per branch (V-trace, PPO) or a branching dueling Q-network
// (R2D2: one state value, advantages per branch).
//
//   gunner vtrace|ppo|r2d2 [--no-mask] [--frames 300000] [--seed 1] [--logdir DIR]
//          [--export-onnx FILE] [agent options...]
//
// Progress goes to stderr; the last line of stdout is one JSON object, which also counts the
// illegal actions of the training and the evaluation (greedy) actors: "illegal_actions" and
// "evaluation_illegal_actions", 0 with the mask. An episode is 40 steps: a player that chases the
// target scores 13.8 on average, a random legal one 0.2. --no-mask plays the same game without
// declaring the mask. With --export-onnx the model has one logits output per branch and takes
// the mask as an input (docs/deployment.md).
#include <CLI/CLI.hpp>

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cli.hpp"
#include "seedrl/env/gunner.hpp"
#include "seedrl/seedrl.hpp"

namespace {

using namespace seedrl;

// Gunner counting its illegal actions into a run's total.
struct CountedGunner {
  Gunner game;
  std::atomic<std::int64_t>* illegal;

  TensorSpec observation_spec() const { return game.observation_spec(); }
  ActionSpec action_spec() const { return game.action_spec(); }
  std::vector<StepFieldSpec> step_fields() const { return game.step_fields(); }
  void reset(const StepRow& row) { game.reset(row); }
  StepResult step(std::span<const std::int32_t> actions, const StepRow& row) {
    const std::int64_t before = game.illegal_actions();
    const StepResult r = game.step(actions, row);
    illegal->fetch_add(game.illegal_actions() - before, std::memory_order_relaxed);
    return r;
  }
};

struct Counts {
  std::atomic<std::int64_t> training{0}, evaluation{0};
};

template <class Cli>
int train(const char* agent, const Cli& cli, const LocalTrainerOptions& run, bool mask,
          const std::vector<std::int64_t>& hidden) {
  try {
    Counts illegal;
    nn::NetworkOptions network = nn::NetworkOptions::mlp(16, 5, hidden).branches({3, 2});
    const TrainingResult result = examples::train_in_process(
        "gunner", "gunner", cli, run, network, [&](std::uint64_t seed, bool evaluation) {
          return CountedGunner{Gunner(seed, {.action_mask = mask}),
                               evaluation ? &illegal.evaluation : &illegal.training};
        });
    examples::print_result("gunner", cli.seed, result,
                           str_cat(",\"agent\":\"", agent, "\",\"masks\":", mask ? "true" : "false",
                                   ",\"illegal_actions\":", illegal.training.load(),
                                   ",\"evaluation_illegal_actions\":", illegal.evaluation.load()));
    return 0;
  } catch (const std::exception& e) {
    return examples::fail("gunner", e);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Action branches: V-trace, PPO or R2D2 on Gunner, in one process"};
  app.require_subcommand(1);
  app.fallthrough();  // --no-mask after the agent's name too
  bool no_mask = false;
  app.add_flag("--no-mask", no_mask, "do not declare the legal-action mask (the same game)");
  // The run every agent shares: 2 actors of 8 games, unrolls of 20, one greedy evaluation actor.
  LocalTrainerOptions run;
  run.num_actors = 2;
  run.envs_per_actor = 8;
  run.evaluation_actors = 1;
  run.server.unroll_length = 20;
  examples::VTraceCli vtrace;
  vtrace.environments = {"gunner"};
  vtrace.env_name = "gunner";
  vtrace.frames = 300'000;
  vtrace.hidden = {64};
  vtrace.learning_rate = 1e-3;
  examples::PpoCli ppo;
  ppo.frames = 300'000;
  ppo.hidden = {64};
  ppo.batch = 4;
  ppo.learning_rate = 1e-3;
  ppo.normalize_observations = false;
  ppo.scale_rewards = false;
  ppo.entropy_cost = 0.01f;  // without it each seed's policy settles early, at 7.8 to 11.1
  examples::R2D2Cli r2d2;
  r2d2.frames = 300'000;
  r2d2.batch = 16;
  r2d2.lstm = 32;
  r2d2.n_step = 3;
  r2d2.target_period = 100;
  r2d2.replay_capacity = 4'000;
  r2d2.min_replay = 64;
  LocalTrainerOptions r2d2_run = run;
  r2d2_run.server.unroll_length = 10;
  r2d2_run.server.burn_in = 2;
  LocalTrainerOptions vtrace_run = run, ppo_run = run;
  CLI::App* agents[] = {app.add_subcommand("vtrace", "V-trace (IMPALA)"),
                        app.add_subcommand("ppo", "PPO"),
                        app.add_subcommand("r2d2", "R2D2 with a branching dueling Q-network")};
  vtrace.add_options(*agents[0], vtrace_run);
  ppo.add_options(*agents[1], ppo_run);
  r2d2.add_options(*agents[2], r2d2_run);
  examples::add_actor_options(*agents[0], vtrace_run, 64);
  examples::add_actor_options(*agents[1], ppo_run, 64);
  examples::add_actor_options(*agents[2], r2d2_run, 64);
  CLI11_PARSE(app, argc, argv);

  if (agents[0]->parsed()) return train("vtrace", vtrace, vtrace_run, !no_mask, vtrace.hidden);
  if (agents[1]->parsed()) return train("ppo", ppo, ppo_run, !no_mask, ppo.hidden);
  return train("r2d2", r2d2, r2d2_run, !no_mask, {64});
}
