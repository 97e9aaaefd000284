#include "seedrl/runtime/vtrace_learner.hpp"

namespace seedrl {

VTraceInputs vtrace_inputs(const Transitions& tr, const float* values, float discount) {
  const Eigen::Index steps = tr.mask.rows(), batch = tr.mask.cols();
  const Eigen::Map<const Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>
      all_values(values, steps + 1, batch);
  VTraceInputs in;
  in.values = all_values.topRows(steps);
  in.bootstrap = all_values.row(steps).transpose();
  in.rewards = (tr.mask > 0.0f).select(tr.rewards, in.values);
  in.discounts = discount * (1.0f - tr.dones);
  return in;
}

// The V-trace runtime on the CPU backend (declared extern in the header).
template class Learner<VTraceAgent, cpu::Backend>;
template class InferenceServer<VTraceAgent, cpu::Backend>;
template class TrainingSession<VTraceAgent, cpu::Backend>;

}  // namespace seedrl
