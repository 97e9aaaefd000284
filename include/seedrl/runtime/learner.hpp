// Learner<Agent, Backend>: trains an agent's network on what inference produced. Each agent
// provides its specialisation (runtime/vtrace_learner.hpp for VTraceAgent).
#pragma once

#include <cstdint>

#include "seedrl/nn/backend.hpp"

namespace seedrl {

template <class Agent, nn::Backend B>
class Learner;

/// What one learner step did.
struct LearnerStepStats {
  std::int64_t step = 0;  ///< updates applied after this step (the published parameter version)
  double total_loss = 0.0;
  double policy_loss = 0.0;
  double baseline_loss = 0.0;
  double entropy_loss = 0.0;
  double entropy = 0.0;
  double grad_norm = 0.0;  ///< global gradient norm before clipping
  double learning_rate = 0.0;
  double policy_lag = 0.0;       ///< mean updates between acting and training on a transition
  std::int64_t transitions = 0;  ///< transitions trained on (episode boundaries excluded)
  bool skipped = false;          ///< the update was skipped (non-finite gradients)
};

}  // namespace seedrl
