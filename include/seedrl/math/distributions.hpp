// The policy distributions: one small family over the rows of a batch, each with sample, mode,
// log-probability, entropy and the gradients a policy-gradient loss needs.
//
//   Categorical   discrete actions from logits [N, A] (the softmax of softmax.hpp)
//   DiagGaussian  real vectors: mean [N, D], log standard deviation [N, D]
//   TanhGaussian  bounded real vectors: tanh(u), u ~ DiagGaussian(mean, log_std)
//
// A log standard deviation that is a free parameter (one per dimension, as PPO's usual head has)
// is broadcast to [N, D] by the caller, which sums the rows of grad_log_std for its gradient; a
// network that outputs it passes its output as it is.
//
// Gradients are vector-Jacobian products: given g [N] (d loss / d f_i for the per-row value f_i),
// they write d loss / d inputs (overwriting the output matrices). CPU reference on Eigen
// row-major matrices, in float, with the numerically stable forms noted.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <span>

#include "seedrl/core/random.hpp"
#include "seedrl/math/softmax.hpp"

namespace seedrl::math {

/// log(2 pi) / 2, the Gaussian's normalising constant per dimension.
inline constexpr float kHalfLogTwoPi = 0.91893853320467274178f;

/// log(1 - tanh(u)^2) = 2 (log 2 - u - softplus(-2u)): finite for every finite u (the naive form
/// is log(0) = -inf once tanh(u) rounds to 1, near |u| = 9 in float).
float log_one_minus_tanh_squared(float u);

struct Categorical {
  /// actions[i] ~ softmax(logits[i]) (one rng.uniform() draw per row).
  static void sample(const ConstMatrixRef& logits, std::span<std::int32_t> actions, Rng& rng);
  /// The most likely action of each row (lowest index among ties).
  static void mode(const ConstMatrixRef& logits, std::span<std::int32_t> actions);
  /// log softmax(logits[i])[actions[i]]; throws naming an action out of range.
  static Eigen::VectorXf log_prob(const ConstMatrixRef& logits,
                                  std::span<const std::int32_t> actions);
  /// -sum_j p_j log p_j per row.
  static Eigen::VectorXf entropy(const ConstMatrixRef& logits);
  /// grad_logits[i] = g_i (onehot(actions[i]) - softmax(logits[i])).
  static void log_prob_backward(const ConstMatrixRef& logits, std::span<const std::int32_t> actions,
                                const ConstVectorRef& g, MatrixRef grad_logits);
  /// grad_logits[i, j] = -g_i p_j (log p_j + H_i).
  static void entropy_backward(const ConstMatrixRef& logits, const ConstVectorRef& g,
                               MatrixRef grad_logits);
};

struct DiagGaussian {
  /// actions = mean + exp(log_std) * z, z ~ N(0, 1) per element (rng.normal()).
  static void sample(const ConstMatrixRef& mean, const ConstMatrixRef& log_std, MatrixRef actions,
                     Rng& rng);
  /// The mean.
  static void mode(const ConstMatrixRef& mean, MatrixRef actions);
  /// sum_d -((a - mean) / std)^2 / 2 - log_std - log(2 pi) / 2, per row.
  static Eigen::VectorXf log_prob(const ConstMatrixRef& mean, const ConstMatrixRef& log_std,
                                  const ConstMatrixRef& actions);
  /// sum_d log_std + (1 + log(2 pi)) / 2, per row.
  static Eigen::VectorXf entropy(const ConstMatrixRef& log_std);
  /// grad_mean = g (a - mean) / std^2; grad_log_std = g (((a - mean) / std)^2 - 1).
  static void log_prob_backward(const ConstMatrixRef& mean, const ConstMatrixRef& log_std,
                                const ConstMatrixRef& actions, const ConstVectorRef& g,
                                MatrixRef grad_mean, MatrixRef grad_log_std);
  /// grad_log_std[i, d] = g_i.
  static void entropy_backward(const ConstVectorRef& g, MatrixRef grad_log_std);
};

/// a = tanh(u), u ~ N(mean, exp(log_std)^2) per dimension: actions in (-1, 1) (scale them to an
/// environment's bounds outside). Every function takes the unsquashed u, which is what a caller
/// records at acting time: recovering it as atanh(a) loses everything once tanh(u) rounds to +-1.
struct TanhGaussian {
  /// pre_tanh = mean + exp(log_std) * z, z ~ N(0, 1); the action is squash(pre_tanh).
  static void sample(const ConstMatrixRef& mean, const ConstMatrixRef& log_std, MatrixRef pre_tanh,
                     Rng& rng);
  /// The mean (its squash is the action of a deterministic policy).
  static void mode(const ConstMatrixRef& mean, MatrixRef pre_tanh);
  /// actions = tanh(pre_tanh).
  static void squash(const ConstMatrixRef& pre_tanh, MatrixRef actions);
  /// log density of the action tanh(u): DiagGaussian::log_prob(u) - sum_d log(1 - tanh(u_d)^2).
  static Eigen::VectorXf log_prob(const ConstMatrixRef& mean, const ConstMatrixRef& log_std,
                                  const ConstMatrixRef& pre_tanh);
  /// For a fixed u the correction does not depend on mean or log_std: DiagGaussian's gradient.
  static void log_prob_backward(const ConstMatrixRef& mean, const ConstMatrixRef& log_std,
                                const ConstMatrixRef& pre_tanh, const ConstVectorRef& g,
                                MatrixRef grad_mean, MatrixRef grad_log_std);
  /// The entropy has no closed form: a one-sample, reparameterised estimate with noise z [N, D]
  /// (u = mean + std z): DiagGaussian::entropy + sum_d log(1 - tanh(u_d)^2). Its expectation over
  /// z ~ N(0, 1) is the entropy of the squashed distribution.
  static Eigen::VectorXf entropy_estimate(const ConstMatrixRef& mean, const ConstMatrixRef& log_std,
                                          const ConstMatrixRef& noise);
  /// Gradient of entropy_estimate through u: grad_mean = -2 g tanh(u),
  /// grad_log_std = g (1 - 2 tanh(u) std z).
  static void entropy_estimate_backward(const ConstMatrixRef& mean, const ConstMatrixRef& log_std,
                                        const ConstMatrixRef& noise, const ConstVectorRef& g,
                                        MatrixRef grad_mean, MatrixRef grad_log_std);
};

}  // namespace seedrl::math
