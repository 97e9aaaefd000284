#include "seedrl/runtime/ppo_agent.hpp"

namespace seedrl {
namespace {

// The [rows, K] matrix view of a tensor whose last dimension is K.
Eigen::Map<const RowMatrixXf> rows_of(const Tensor& t) {
  const std::int64_t k = t.dim(t.rank() - 1);
  return {t.data<float>(), t.numel() / k, k};
}

}  // namespace

PpoTargets ppo_targets(const UnrollBatch& batch, const Transitions& tr, const float* values,
                       float discount, float lambda) {
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
  // The behaviour policy of steps [0, T) (the first T * B rows of the [L, B, ...] batch).
  const auto behaviour = rows_of(batch.logits).topRows(n);
  if (batch.actions.dtype() == DType::i32) {
    out.old_log_probs = math::Categorical::log_prob(
        behaviour, std::span<const std::int32_t>(batch.actions.data<std::int32_t>(),
                                                 static_cast<std::size_t>(n)));
  } else {
    const Eigen::Index d = batch.actions.dim(2);
    out.old_log_probs = math::DiagGaussian::log_prob(behaviour.leftCols(d), behaviour.rightCols(d),
                                                     rows_of(batch.actions).topRows(n));
  }
  return out;
}

PpoPolicyTerms ppo_policy_terms(const nn::NetworkOutputs& outputs, const Tensor& actions) {
  PpoPolicyTerms terms;
  if (actions.dtype() == DType::i32) {
    const auto logits = rows_of(outputs.logits);
    terms.log_probs = math::Categorical::log_prob(
        logits, std::span<const std::int32_t>(actions.data<std::int32_t>(),
                                              static_cast<std::size_t>(actions.numel())));
    terms.entropy = math::Categorical::entropy(logits);
  } else {
    const auto log_std = rows_of(outputs.log_std);
    terms.log_probs =
        math::DiagGaussian::log_prob(rows_of(outputs.mean), log_std, rows_of(actions));
    terms.entropy = math::DiagGaussian::entropy(log_std);
  }
  return terms;
}

void ppo_policy_backward(const nn::NetworkOutputs& outputs, const Tensor& actions,
                         const Eigen::ArrayXf& grad_log_probs, const Eigen::ArrayXf& grad_entropy,
                         const Tensor& grad_policy, const Tensor& grad_log_std) {
  if (actions.dtype() == DType::i32) {
    const auto logits = rows_of(outputs.logits);
    auto grad = grad_policy.reshape({logits.rows(), logits.cols()}).matrix<float>();
    math::Categorical::log_prob_backward(
        logits,
        std::span<const std::int32_t>(actions.data<std::int32_t>(),
                                      static_cast<std::size_t>(actions.numel())),
        grad_log_probs.matrix(), grad);
    RowMatrixXf entropy_grad(logits.rows(), logits.cols());
    math::Categorical::entropy_backward(logits, grad_entropy.matrix(), entropy_grad);
    grad += entropy_grad;
    return;
  }
  const auto mean = rows_of(outputs.mean), log_std = rows_of(outputs.log_std);
  auto grad_mean = grad_policy.reshape({mean.rows(), mean.cols()}).matrix<float>();
  auto grad_std = grad_log_std.reshape({mean.rows(), mean.cols()}).matrix<float>();
  math::DiagGaussian::log_prob_backward(mean, log_std, rows_of(actions), grad_log_probs.matrix(),
                                        grad_mean, grad_std);
  RowMatrixXf entropy_grad(mean.rows(), mean.cols());
  math::DiagGaussian::entropy_backward(grad_entropy.matrix(), entropy_grad);
  grad_std += entropy_grad;
}

// The PPO runtime on the CPU backend (declared extern in the header).
template class Learner<PpoAgent, cpu::Backend>;
template class InferenceServer<PpoAgent, cpu::Backend>;
template class TrainingSession<PpoAgent, cpu::Backend>;

}  // namespace seedrl
