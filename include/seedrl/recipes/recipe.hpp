// A recipe: the settings a family of tasks trains with, as one value. Each example program runs
// its family's recipe when no flag changes it, and the figures in docs/results.md are measured at
// them; docs/algorithms.md lists them against the options structs' own defaults. A host program
// starts from a recipe the same way: take it, fill in the network's sizes from its environment,
// change what it wants, and build the agent.
#pragma once

#include <cstdint>

#include "seedrl/session/local_trainer.hpp"

namespace seedrl::recipes {

/// An agent's options and the run's, with the frame budget and the shape of the learning rate's
/// schedule over it. The network in `agent` is complete but for the sizes the environment gives
/// (observation shape, actions), which the program fills in; `agent.learning_rate.initial` is the
/// rate, and a program that decays it computes the decay's steps from `frames` (they depend on
/// the batch and the learner group's size: seedrl/cli/agent_options.hpp).
template <class AgentOptionsT, class RunOptionsT = LocalTrainerOptions>
struct Recipe {
  AgentOptionsT agent;
  RunOptionsT run;
  std::int64_t frames = 1'000'000;  ///< environment frames (agent steps) to train for
  bool lr_decay = true;             ///< the rate decays linearly over the run
  double lr_floor = 0.0;            ///< where it ends, a fraction of the initial rate
};

}  // namespace seedrl::recipes
