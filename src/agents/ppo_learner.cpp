#include "seedrl/agents/ppo.hpp"

namespace seedrl {

PpoTargets ppo_targets(const UnrollBatch& batch, const Transitions& tr, const float* values,
                       float discount, float lambda, const math::Branches& branches) {
  const Eigen::Index steps = tr.mask.rows(), columns = tr.mask.cols();
  const VTraceInputs v = vtrace_inputs(tr, values, discount);
  const Eigen::ArrayXXf advantages =
      gae(v.rewards, v.values, tr.dones, v.bootstrap, discount, lambda);
  PpoTargets out;
  const Eigen::Index n = steps * columns;
  out.advantages.resize(n);
  out.returns.resize(n);
  out.old_values.resize(n);
  for (Eigen::Index t = 0; t < steps; ++t) {
    for (Eigen::Index b = 0; b < columns; ++b) {
      const Eigen::Index row = t * columns + b;
      out.advantages(row) = advantages(t, b);
      out.old_values(row) = v.values(t, b);
      out.returns(row) = advantages(t, b) + v.values(t, b);
      if (tr.mask(t, b) > 0.0f) out.rows.push_back(row);
    }
  }
  out.branches = branches;
  out.legal = legal_actions(batch, branches);
  out.old_log_probs = behaviour_log_probs(batch, steps, out.legal, branches);
  return out;
}

// The PPO runtime on the CPU backend (declared extern in the header).
template class Learner<PpoAgent, cpu::Backend>;

}  // namespace seedrl
