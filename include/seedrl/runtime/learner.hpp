// Learner<Agent, Backend>: trains an agent's network on what inference produced. Each agent
// provides its specialisation (runtime/vtrace_learner.hpp for VTraceAgent).
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>

#include "seedrl/nn/backend.hpp"
#include "seedrl/nn/gradient_clipping.hpp"
#include "seedrl/nn/learning_rate.hpp"
#include "seedrl/nn/optimizer.hpp"
#include "seedrl/runtime/shared_parameters.hpp"

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

/// The end of every learner step, once the gradients are in `parameters`: clip them to
/// `max_grad_norm` (0: only measure), and unless the norm is not finite (the step is then skipped
/// and reported) take an optimizer step at `learning_rate.at(steps)` under the write lock,
/// count it and publish the new version to inference; `after_update()` runs under the same lock
/// (e.g. R2D2's target copy). Returns the stats with grad_norm, learning_rate, skipped and step.
template <nn::Backend B, class AfterUpdate>
LearnerStepStats apply_update(nn::ParameterStore& parameters, nn::Optimizer& optimizer,
                              SharedParameters& shared, std::atomic<std::int64_t>& steps,
                              double max_grad_norm, const nn::LinearDecay& learning_rate,
                              AfterUpdate after_update) {
  LearnerStepStats stats;
  stats.grad_norm = max_grad_norm > 0.0 ? nn::clip_by_global_norm<B>(parameters, max_grad_norm)
                                        : nn::global_grad_norm<B>(parameters);
  stats.learning_rate = learning_rate.at(steps);
  stats.skipped = !std::isfinite(stats.grad_norm);
  if (!stats.skipped) {
    auto guard = shared.write();
    optimizer.step(static_cast<float>(stats.learning_rate));
    ++steps;
    shared.publish(steps);
    after_update();
  }
  stats.step = steps;
  return stats;
}

}  // namespace seedrl
