// Softmax, log-softmax and entropy over the rows of a logits matrix [N, A], with their
// vector-Jacobian products (the backward passes) so losses built on them can be trained.
//
// seedrl/math/ holds the math that layers above share (the networks' users, the losses in algo/,
// the agents' action selection): it depends on core/ only.
//
// CPU reference on Eigen row-major matrices (Tensor::matrix<float>() gives one). Numerically
// stable: every row is shifted by its maximum before exponentiation.
#pragma once

#include <Eigen/Core>

#include "seedrl/core/error.hpp"
#include "seedrl/core/tensor.hpp"

namespace seedrl::math {

using ConstMatrixRef = Eigen::Ref<const RowMatrixXf>;
using MatrixRef = Eigen::Ref<RowMatrixXf>;
using ConstVectorRef = Eigen::Ref<const Eigen::VectorXf>;

/// out[i, j] = logits[i, j] - log(sum_k exp(logits[i, k])).
void log_softmax(const ConstMatrixRef& logits, MatrixRef out);
RowMatrixXf log_softmax(const ConstMatrixRef& logits);

/// out = exp(log_softmax(logits)).
void softmax(const ConstMatrixRef& logits, MatrixRef out);
RowMatrixXf softmax(const ConstMatrixRef& logits);

/// Entropy of each row's distribution, H = -sum_j p_j log p_j, from log-probabilities.
Eigen::VectorXf entropy_from_log_probs(const ConstMatrixRef& log_probs);

/// Gradient w.r.t. logits given the gradient w.r.t. log_softmax(logits):
/// dlogits = g - softmax * rowsum(g).
void log_softmax_backward(const ConstMatrixRef& log_probs, const ConstMatrixRef& grad_log_probs,
                          MatrixRef grad_logits);

/// Gradient w.r.t. logits given the gradient w.r.t. softmax(logits) = p:
/// dlogits = p * (g - rowsum(p * g)).
void softmax_backward(const ConstMatrixRef& probs, const ConstMatrixRef& grad_probs,
                      MatrixRef grad_logits);

/// Gradient w.r.t. logits of sum_i grad_entropy[i] * H_i, from log-probabilities:
/// dH_i/dlogits_ij = -p_ij (log p_ij + H_i).
void entropy_backward(const ConstMatrixRef& log_probs, const ConstVectorRef& grad_entropy,
                      MatrixRef grad_logits);

}  // namespace seedrl::math
