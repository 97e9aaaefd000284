// card_pick: legal-action masks end to end (issue 36). Actors deal CardPick (env/card_pick.hpp:
// 8 cards of value 1 to 9 face up, take 4 one by one; taking a position whose card is gone scores
// -1 and ends the deal), the environments declare which cards are still there (the step field
// "action_mask"), central inference picks among them only, and the learner trains the masked
// policy (V-trace, PPO) or masked Q-values (R2D2).
//
//   card_pick vtrace|ppo|r2d2 [--no-mask] [--frames 150000] [--seed 1] [--logdir DIR]
//             [--export-onnx FILE] [agent options...]
//
// Progress goes to stderr; the last line of stdout is one JSON object, which also counts the
// illegal picks of the training and the evaluation (greedy) actors: "illegal_actions" and
// "evaluation_illegal_actions", 0 with the mask. A deal scores the values taken / 9: a random
// legal player 2.22 on average, the best 3.10. --no-mask plays the same game without declaring
// the mask, so the agent has to learn what is illegal (and its illegal picks are counted).
// With --export-onnx the model takes the mask as a second input (docs/deployment.md).
#include <CLI/CLI.hpp>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "cli.hpp"
#include "seedrl/env/card_pick.hpp"
#include "seedrl/seedrl.hpp"

namespace {

using namespace seedrl;

// CardPick with its board flattened for the MLP, counting its illegal picks (only they score < 0).
struct CountedCardPick {
  FlattenObservation<CardPick> game;
  std::atomic<std::int64_t>* illegal;

  TensorSpec observation_spec() const { return game.observation_spec(); }
  ActionSpec action_spec() const { return game.action_spec(); }
  std::vector<StepFieldSpec> step_fields() const { return game.step_fields(); }
  void reset(const StepRow& row) { game.reset(row); }
  StepResult step(std::int32_t action, const StepRow& row) {
    const StepResult r = game.step(action, row);
    if (r.reward < 0.0f) illegal->fetch_add(1, std::memory_order_relaxed);
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
    const TrainingResult result = examples::train_in_process(
        "card_pick", "card_pick", cli, run, nn::NetworkOptions::mlp(16, 8, hidden),
        [&](std::uint64_t seed, bool evaluation) {
          return CountedCardPick{FlattenObservation(CardPick(seed, {.action_mask = mask})),
                                 evaluation ? &illegal.evaluation : &illegal.training};
        });
    examples::print_result("card_pick", cli.seed, result,
                           str_cat(",\"agent\":\"", agent, "\",\"masks\":", mask ? "true" : "false",
                                   ",\"illegal_actions\":", illegal.training.load(),
                                   ",\"evaluation_illegal_actions\":", illegal.evaluation.load()));
    return 0;
  } catch (const std::exception& e) {
    return examples::fail("card_pick", e);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Legal-action masks: V-trace, PPO or R2D2 on CardPick, in one process"};
  app.require_subcommand(1);
  app.fallthrough();  // --no-mask after the agent's name too
  bool no_mask = false;
  app.add_flag("--no-mask", no_mask, "do not declare the legal-action mask (the same game)");
  // The run every agent shares: 2 actors of 8 deals, unrolls of 8, one greedy evaluation actor.
  LocalTrainerOptions run;
  run.num_actors = 2;
  run.envs_per_actor = 8;
  run.evaluation_actors = 1;
  run.server.unroll_length = 8;
  examples::VTraceCli vtrace;
  vtrace.environments = {"card_pick"};
  vtrace.env_name = "card_pick";
  vtrace.frames = 150'000;
  vtrace.hidden = {32};
  vtrace.learning_rate = 1e-3;
  examples::PpoCli ppo;
  ppo.frames = 150'000;
  ppo.hidden = {32};
  ppo.batch = 4;
  ppo.learning_rate = 1e-3;
  ppo.normalize_observations = false;
  ppo.scale_rewards = false;
  examples::R2D2Cli r2d2;
  r2d2.frames = 150'000;
  r2d2.batch = 16;
  r2d2.lstm = 16;
  r2d2.n_step = 2;
  r2d2.target_period = 50;
  r2d2.replay_capacity = 4'000;
  r2d2.min_replay = 64;
  LocalTrainerOptions r2d2_run = run;
  r2d2_run.server.burn_in = 2;
  LocalTrainerOptions vtrace_run = run, ppo_run = run;
  CLI::App* agents[] = {app.add_subcommand("vtrace", "V-trace (IMPALA)"),
                        app.add_subcommand("ppo", "PPO"), app.add_subcommand("r2d2", "R2D2")};
  vtrace.add_options(*agents[0], vtrace_run);
  ppo.add_options(*agents[1], ppo_run);
  r2d2.add_options(*agents[2], r2d2_run);
  examples::add_actor_options(*agents[0], vtrace_run, 64);
  examples::add_actor_options(*agents[1], ppo_run, 64);
  examples::add_actor_options(*agents[2], r2d2_run, 64);
  CLI11_PARSE(app, argc, argv);

  if (agents[0]->parsed()) return train("vtrace", vtrace, vtrace_run, !no_mask, vtrace.hidden);
  if (agents[1]->parsed()) return train("ppo", ppo, ppo_run, !no_mask, ppo.hidden);
  return train("r2d2", r2d2, r2d2_run, !no_mask, {32});
}
