// A program that trains on one game with three agents as subcommands (vtrace, ppo, r2d2),
// --no-mask to play the same game without declaring the legal-action mask, and a JSON line that
// counts the illegal actions of the training and the evaluation actors (examples/card_pick and
// examples/gunner).
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "seedrl/cli/train.hpp"
#include "seedrl/recipes/games.hpp"

namespace seedrl::cli {

/// A program's game, its agents' settings (their recipes' defaults, which the command line may
/// change) and their runs.
struct GameProgram {
  GameProgram(const recipes::Recipe<VTraceAgentOptions>& vtrace_recipe,
              const recipes::Recipe<PpoAgentOptions>& ppo_recipe,
              const recipes::Recipe<R2D2AgentOptions>& r2d2_recipe)
      : vtrace_run(vtrace_recipe.run),
        ppo_run(ppo_recipe.run),
        r2d2_run(r2d2_recipe.run),
        vtrace(vtrace_recipe),
        ppo(ppo_recipe),
        r2d2(r2d2_recipe),
        r2d2_hidden(r2d2_recipe.agent.network.mlp_hidden) {}

  const char* program = "";      ///< "card_pick": the name in messages and the JSON line
  const char* description = "";  ///< the program's --help line
  const char* r2d2_description = "R2D2";
  LocalTrainerOptions vtrace_run, ppo_run, r2d2_run;
  VTraceCli vtrace;
  PpoCli ppo;
  R2D2Cli r2d2;
  std::vector<std::int64_t> r2d2_hidden;  ///< R2D2's MLP (it has no --hidden)

  /// Parses the command line and trains the agent it names:
  /// `train(agent_name, cli, run, mask, hidden)` with that agent's Cli.
  template <class Train>
  int main(int argc, char** argv, Train&& train) {
    CommandLine app(description);
    app.require_subcommands(1, 1);  // --no-mask after the agent's name too
    bool no_mask = false;
    app.flag("--no-mask", no_mask, "do not declare the legal-action mask (the same game)");
    CommandLine* agents[] = {&app.subcommand("vtrace", "V-trace (IMPALA)"),
                             &app.subcommand("ppo", "PPO"),
                             &app.subcommand("r2d2", r2d2_description)};
    vtrace.add_options(*agents[0], vtrace_run);
    ppo.add_options(*agents[1], ppo_run);
    r2d2.add_options(*agents[2], r2d2_run);
    add_actor_options(*agents[0], vtrace_run, 64);
    add_actor_options(*agents[1], ppo_run, 64);
    add_actor_options(*agents[2], r2d2_run, 64);
    if (const std::optional<int> exit = app.parse(argc, argv)) return *exit;
    if (agents[0]->given()) return train("vtrace", vtrace, vtrace_run, !no_mask, vtrace.hidden);
    if (agents[1]->given()) return train("ppo", ppo, ppo_run, !no_mask, ppo.hidden);
    return train("r2d2", r2d2, r2d2_run, !no_mask, r2d2_hidden);
  }
};

/// Illegal actions of a run, as its environments count them.
struct IllegalCounts {
  std::atomic<std::int64_t> training{0}, evaluation{0};
};

/// Trains `cli`'s agent with `network` on `make_env(seed, counter)` (the counter: the training or
/// the evaluation actors' illegal actions), then prints the JSON line with the agent, the mask and
/// both counts. Errors end the program with their message (exit status 1).
template <class Cli, class MakeEnv>
int train_game(const char* program, const char* agent, const Cli& cli,
               const LocalTrainerOptions& run, nn::NetworkOptions network, bool mask,
               MakeEnv make_env) {
  try {
    IllegalCounts illegal;
    const TrainingResult result = train_in_process(
        program, program, cli, run, std::move(network), [&](std::uint64_t seed, bool evaluation) {
          return make_env(seed, evaluation ? &illegal.evaluation : &illegal.training);
        });
    print_result(program, cli.seed, result,
                 str_cat(",\"agent\":\"", agent, "\",\"masks\":", mask ? "true" : "false",
                         ",\"illegal_actions\":", illegal.training.load(),
                         ",\"evaluation_illegal_actions\":", illegal.evaluation.load()));
    return 0;
  } catch (const std::exception& e) {
    return end_with_error(program, e);
  }
}

}  // namespace seedrl::cli
