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
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "game_example.hpp"
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

}  // namespace

int main(int argc, char** argv) {
  examples::GameExample ex;
  ex.program = "card_pick";
  ex.description = "Legal-action masks: V-trace, PPO or R2D2 on CardPick, in one process";
  // The run every agent shares: 2 actors of 8 deals, unrolls of 8, one greedy evaluation actor.
  ex.run.num_actors = 2;
  ex.run.envs_per_actor = 8;
  ex.run.evaluation_actors = 1;
  ex.run.server.unroll_length = 8;
  ex.r2d2_run = ex.run;
  ex.r2d2_run.server.burn_in = 2;
  ex.vtrace.environments = {"card_pick"};
  ex.vtrace.env_name = "card_pick";
  ex.vtrace.frames = 150'000;
  ex.vtrace.hidden = {32};
  ex.vtrace.learning_rate = 1e-3;
  ex.ppo.frames = 150'000;
  ex.ppo.hidden = {32};
  ex.ppo.batch = 4;
  ex.ppo.learning_rate = 1e-3;
  ex.ppo.normalize_observations = false;
  ex.ppo.scale_rewards = false;
  ex.r2d2.frames = 150'000;
  ex.r2d2.batch = 16;
  ex.r2d2.lstm = 16;
  ex.r2d2.n_step = 2;
  ex.r2d2.target_period = 50;
  ex.r2d2.replay_capacity = 4'000;
  ex.r2d2.min_replay = 64;
  ex.r2d2_hidden = {32};
  return ex.main(argc, argv,
                 [](const char* agent, const auto& cli, const LocalTrainerOptions& run, bool mask,
                    const std::vector<std::int64_t>& hidden) {
                   return examples::train_game(
                       "card_pick", agent, cli, run, nn::NetworkOptions::mlp(16, 8, hidden), mask,
                       [mask](std::uint64_t seed, std::atomic<std::int64_t>* illegal) {
                         return CountedCardPick{
                             FlattenObservation(CardPick(seed, {.action_mask = mask})), illegal};
                       });
                 });
}
