#include "seedrl/learner/policy_terms.hpp"

#include "seedrl/math/distributions.hpp"
#include "seedrl/math/masked_categorical.hpp"

namespace seedrl {
namespace {

// The [N, K] matrix of a tensor whose last dimension is K.
Eigen::Map<const RowMatrixXf> rows_of(const Tensor& t) {
  const std::int64_t k = t.dim(t.rank() - 1);
  return {t.data<float>(), t.numel() / k, k};
}
Eigen::Map<RowMatrixXf> mutable_rows_of(const Tensor& t) {
  const std::int64_t k = t.dim(t.rank() - 1);
  return {t.data<float>(), t.numel() / k, k};
}

std::span<const std::int32_t> discrete(const Tensor& actions) {
  return {actions.data<std::int32_t>(), static_cast<std::size_t>(actions.numel())};
}

// Whether discrete actions take the masked, branched categorical (masked_categorical.hpp).
bool branched_or_masked(const Tensor& actions, std::span<const std::uint8_t> legal,
                        const math::Branches& branches) {
  return actions.dtype() == DType::i32 && (!legal.empty() || branches.count() > 1);
}
// `branches`, or one branch of all the logits.
math::Branches layout(const math::Branches& branches, Eigen::Index width) {
  return branches.count() > 0 ? branches : math::Branches({width});
}

// The first rows of `legal` that cover `logits` (empty stays empty: every action legal).
std::span<const std::uint8_t> rows_of_mask(std::span<const std::uint8_t> legal,
                                           const Eigen::Map<const RowMatrixXf>& logits) {
  if (legal.empty()) return legal;
  const auto n = static_cast<std::size_t>(logits.rows() * logits.cols());
  SEEDRL_REQUIRE(legal.size() >= n, "policy_terms: a legal-action mask of ", legal.size(),
                 " entries for ", logits.rows(), " frames of ", logits.cols(), " actions");
  return legal.first(n);
}

}  // namespace

PolicyTerms policy_terms(const Tensor& policy, const Tensor& log_std, const Tensor& actions,
                         std::span<const std::uint8_t> legal, const math::Branches& branches) {
  PolicyTerms terms;
  if (branched_or_masked(actions, legal, branches)) {
    const auto logits = rows_of(policy);
    const math::Branches one = layout(branches, logits.cols());
    const RowMatrixXf log_probs =
        math::branch_log_softmax(logits, rows_of_mask(legal, logits), one);
    terms.log_probs = math::joint_log_prob(log_probs, discrete(actions), one).array();
    terms.entropy = math::branch_entropy(log_probs, one).array();
  } else if (actions.dtype() == DType::i32) {
    const auto logits = rows_of(policy);
    terms.log_probs = math::Categorical::log_prob(logits, discrete(actions));
    terms.entropy = math::Categorical::entropy(logits);
  } else {
    const auto log_stds = rows_of(log_std);
    terms.log_probs = math::DiagGaussian::log_prob(rows_of(policy), log_stds, rows_of(actions));
    terms.entropy = math::DiagGaussian::entropy(log_stds);
  }
  return terms;
}

void policy_terms_backward(const Tensor& policy, const Tensor& log_std, const Tensor& actions,
                           const Eigen::ArrayXf& grad_log_probs, const Eigen::ArrayXf& grad_entropy,
                           const Tensor& grad_policy, const Tensor& grad_log_std,
                           std::span<const std::uint8_t> legal, const math::Branches& branches) {
  if (branched_or_masked(actions, legal, branches)) {
    const auto logits = rows_of(policy);
    const math::Branches one = layout(branches, logits.cols());
    const RowMatrixXf log_probs =
        math::branch_log_softmax(logits, rows_of_mask(legal, logits), one);
    auto grad = mutable_rows_of(grad_policy);
    math::branch_backward(log_probs, discrete(actions), grad_log_probs.matrix(),
                          grad_entropy.matrix(), one, grad);
    return;
  }
  if (actions.dtype() == DType::i32) {
    const auto logits = rows_of(policy);
    auto grad = mutable_rows_of(grad_policy);
    math::Categorical::log_prob_backward(logits, discrete(actions), grad_log_probs.matrix(), grad);
    RowMatrixXf entropy_grad(logits.rows(), logits.cols());
    math::Categorical::entropy_backward(logits, grad_entropy.matrix(), entropy_grad);
    grad += entropy_grad;
    return;
  }
  auto grad_std = mutable_rows_of(grad_log_std);
  auto grad_mean = mutable_rows_of(grad_policy);
  math::DiagGaussian::log_prob_backward(rows_of(policy), rows_of(log_std), rows_of(actions),
                                        grad_log_probs.matrix(), grad_mean, grad_std);
  RowMatrixXf entropy_grad(grad_std.rows(), grad_std.cols());
  math::DiagGaussian::entropy_backward(grad_entropy.matrix(), entropy_grad);
  grad_std += entropy_grad;
}

Eigen::ArrayXf behaviour_log_probs(const UnrollBatch& batch, std::int64_t steps,
                                   std::span<const std::uint8_t> legal,
                                   const math::Branches& branches) {
  const Eigen::Index n = steps * batch.flags.dim(1);
  const auto behaviour = rows_of(batch.behaviour).topRows(n);
  if (branched_or_masked(batch.actions, legal, branches)) {
    const auto all = rows_of(batch.behaviour);
    const Eigen::Map<const RowMatrixXf> first(all.data(), n, all.cols());
    const math::Branches one = layout(branches, all.cols());
    return math::joint_log_prob(
               math::branch_log_softmax(first, rows_of_mask(legal, first), one),
               std::span<const std::int32_t>(batch.actions.data<std::int32_t>(),
                                             static_cast<std::size_t>(n * one.count())),
               one)
        .array();
  }
  if (batch.actions.dtype() == DType::i32) {
    return math::Categorical::log_prob(
        behaviour, std::span<const std::int32_t>(batch.actions.data<std::int32_t>(),
                                                 static_cast<std::size_t>(n)));
  }
  const Eigen::Index d = batch.actions.dim(2);
  return math::DiagGaussian::log_prob(behaviour.leftCols(d), behaviour.rightCols(d),
                                      rows_of(batch.actions).topRows(n));
}

}  // namespace seedrl
