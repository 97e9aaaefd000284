// What a policy-gradient loss needs of a batch's policy outputs, for either kind of action:
// log pi(a | x) of the actions taken and the entropy per frame, their backward pass, and the
// behaviour policy's log-probabilities from what inference recorded in the unrolls. PPO and
// V-trace share them.
//
//   discrete  policy = logits [..., A], actions i32 [...]        (math::Categorical)
//   box       policy = mean [..., D], log_std [..., D], actions f32 [..., D]
//             (math::DiagGaussian; the actions are the draws, before any clipping)
//
// Leading dimensions are flattened to N frames in row-major order (a [T, B, ...] tensor gives
// frame t * B + b). All on the host.
//
// Legal-action masks (discrete actions, the step field kActionMaskField): where `legal` is given
// (u8, at least N rows of A, row-major; its first N rows are used) the categorical is the masked
// one of math/masked_categorical.hpp: renormalised over the legal actions, so that
// log-probabilities, entropy and their gradients are over the legal set and the illegal logits get
// no gradient.
//
// Action branches (ActionSpec::branched): where `branches` has K >= 2, the logits [..., A] hold
// the branches side by side and the actions are i32 [..., K]; the policy is one categorical per
// branch, log pi(a | x) and the entropy the sums over the branches (masked per branch alike).
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <span>
#include <vector>

#include "seedrl/core/tensor.hpp"
#include "seedrl/experience/unroll.hpp"
#include "seedrl/math/masked_categorical.hpp"

namespace seedrl {

struct PolicyTerms {
  Eigen::ArrayXf log_probs;  ///< [N]
  Eigen::ArrayXf entropy;    ///< [N]
};

/// `log_std` is undefined for discrete actions.
PolicyTerms policy_terms(const Tensor& policy, const Tensor& log_std, const Tensor& actions,
                         std::span<const std::uint8_t> legal = {},
                         const math::Branches& branches = {});

/// Writes d loss / d policy (and d loss / d log_std for a box) into `grad_policy` and
/// `grad_log_std` (host tensors of N rows, e.g. shaped like the outputs) from d loss / d log_prob
/// and d loss / d entropy [N].
void policy_terms_backward(const Tensor& policy, const Tensor& log_std, const Tensor& actions,
                           const Eigen::ArrayXf& grad_log_probs, const Eigen::ArrayXf& grad_entropy,
                           const Tensor& grad_policy, const Tensor& grad_log_std,
                           std::span<const std::uint8_t> legal = {},
                           const math::Branches& branches = {});

/// log mu(a_t | x_t) of the behaviour policy for the first `steps` steps of `batch` (the [T B]
/// frames t * B + b), from its recorded logits or Gaussian mean and log std.
Eigen::ArrayXf behaviour_log_probs(const UnrollBatch& batch, std::int64_t steps,
                                   std::span<const std::uint8_t> legal = {},
                                   const math::Branches& branches = {});

}  // namespace seedrl
