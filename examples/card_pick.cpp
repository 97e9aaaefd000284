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

#include "seedrl/cli/game_program.hpp"
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
  // The recipes docs/results.md measures (seedrl/recipes/games.hpp), unless flags change them:
  // 2 actors of 8 deals, unrolls of 8, one greedy evaluation actor, 150 k frames.
  cli::GameProgram ex(recipes::card_pick_vtrace(), recipes::card_pick_ppo(),
                      recipes::card_pick_r2d2());
  ex.program = "card_pick";
  ex.description = "Legal-action masks: V-trace, PPO or R2D2 on CardPick, in one process";
  ex.vtrace.environments = {"card_pick"};
  ex.vtrace.env_name = "card_pick";
  return ex.main(argc, argv,
                 [](const char* agent, const auto& cli, const LocalTrainerOptions& run, bool mask,
                    const std::vector<std::int64_t>& hidden) {
                   return cli::train_game(
                       "card_pick", agent, cli, run, nn::NetworkOptions::mlp(16, 8, hidden), mask,
                       [mask](std::uint64_t seed, std::atomic<std::int64_t>* illegal) {
                         return CountedCardPick{
                             FlattenObservation(CardPick(seed, {.action_mask = mask})), illegal};
                       });
                 });
}
