// gunner: action branches with a legal-action mask per branch, end to end (issue 36). Actors play
// Gunner (env/gunner.hpp: a gun on a track of 7 cells chooses a move and a trigger together every
// step; a shot under the target scores 1, a miss -0.1; moving off the track or firing while
// reloading is illegal and scores -1), central inference draws one action per branch, and the
// learner trains one categorical per branch (V-trace, PPO) or a branching dueling Q-network
// (R2D2: one state value, advantages per branch).
//
//   gunner vtrace|ppo|r2d2 [--no-mask] [--frames 1000000] [--seed 1] [--logdir DIR]
//          [--export-onnx FILE] [agent options...]
//
// Progress goes to stderr; the last line of stdout is one JSON object, which also counts the
// illegal actions of the training and the evaluation (greedy) actors: "illegal_actions" and
// "evaluation_illegal_actions", 0 with the mask. An episode is 40 steps: a player that chases the
// target scores 13.8 on average, a random legal one 0.2. --no-mask plays the same game without
// declaring the mask. With --export-onnx the model has one logits output per branch and takes
// the mask as an input (docs/deployment.md).
#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "seedrl/cli/game_program.hpp"
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

}  // namespace

int main(int argc, char** argv) {
  // The recipes docs/results.md measures (seedrl/recipes/games.hpp), unless flags change them:
  // 2 actors of 8 games, unrolls of 20 (R2D2: 10), one greedy evaluation actor, 1 M frames.
  cli::GameProgram ex(recipes::gunner_vtrace(), recipes::gunner_ppo(), recipes::gunner_r2d2());
  ex.program = "gunner";
  ex.description = "Action branches: V-trace, PPO or R2D2 on Gunner, in one process";
  ex.r2d2_description = "R2D2 with a branching dueling Q-network";
  ex.vtrace.environments = {"gunner"};
  ex.vtrace.env_name = "gunner";
  return ex.main(argc, argv,
                 [](const char* agent, const auto& cli, const LocalTrainerOptions& run, bool mask,
                    const std::vector<std::int64_t>& hidden) {
                   return cli::train_game(
                       "gunner", agent, cli, run,
                       nn::NetworkOptions::mlp(16, 5, hidden).branches({3, 2}), mask,
                       [mask](std::uint64_t seed, std::atomic<std::int64_t>* illegal) {
                         return CountedGunner{Gunner(seed, {.action_mask = mask}), illegal};
                       });
                 });
}
