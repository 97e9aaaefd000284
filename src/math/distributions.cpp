#include "seedrl/math/distributions.hpp"

#include <cmath>

#include "seedrl/core/error.hpp"
#include "seedrl/math/categorical.hpp"

namespace seedrl::math {
namespace {

void require_rows(const char* what, Eigen::Index rows, std::size_t count, const char* of) {
  SEEDRL_REQUIRE(static_cast<Eigen::Index>(count) == rows, what, ": ", rows, " rows but ", count,
                 " ", of);
}

void require_same(const char* what, const ConstMatrixRef& a, const ConstMatrixRef& b,
                  const char* a_name, const char* b_name) {
  SEEDRL_REQUIRE(a.rows() == b.rows() && a.cols() == b.cols(), what, ": ", a_name, " is [",
                 a.rows(), ", ", a.cols(), "] but ", b_name, " is [", b.rows(), ", ", b.cols(),
                 "]");
}

void require_vector(const char* what, const ConstMatrixRef& m, const ConstVectorRef& g) {
  SEEDRL_REQUIRE(g.size() == m.rows(), what, ": ", m.rows(), " rows but a gradient of ", g.size());
}

void require_out(const char* what, const ConstMatrixRef& m, const MatrixRef& out,
                 const char* name) {
  SEEDRL_REQUIRE(out.rows() == m.rows() && out.cols() == m.cols(), what, ": ", name, " must be [",
                 m.rows(), ", ", m.cols(), "], got [", out.rows(), ", ", out.cols(), "]");
}

// The arguments of a Gaussian backward: mean, log_std and `other` (actions or noise) of one
// shape, g one entry per row, both gradient outputs of that shape.
void require_gaussian_backward(const char* what, const ConstMatrixRef& mean,
                               const ConstMatrixRef& log_std, const ConstMatrixRef& other,
                               const char* other_name, const ConstVectorRef& g,
                               const MatrixRef& grad_mean, const MatrixRef& grad_log_std) {
  require_same(what, mean, log_std, "mean", "log_std");
  require_same(what, mean, other, "mean", other_name);
  require_vector(what, mean, g);
  require_out(what, mean, grad_mean, "grad_mean");
  require_out(what, mean, grad_log_std, "grad_log_std");
}

void check_actions(const char* what, std::span<const std::int32_t> actions, Eigen::Index count) {
  for (std::size_t i = 0; i < actions.size(); ++i)
    SEEDRL_REQUIRE(actions[i] >= 0 && actions[i] < count, what, ": action ", actions[i], " of row ",
                   i, " is out of range [0, ", count, ")");
}

}  // namespace

float log_one_minus_tanh_squared(float u) {
  // 1 - tanh(u)^2 = 4 / (e^u + e^-u)^2 = 4 e^-2|u| / (1 + e^-2|u|)^2.
  const float x = std::abs(u);
  return 2.0f * (0.69314718055994531f - x - std::log1p(std::exp(-2.0f * x)));
}

// ---- Categorical ----

void Categorical::sample(const ConstMatrixRef& logits, std::span<std::int32_t> actions, Rng& rng) {
  require_rows("Categorical::sample", logits.rows(), actions.size(), "actions");
  const std::vector<std::uint8_t> greedy(actions.size(), 0);
  sample_categorical(logits, greedy, actions, rng);
}

void Categorical::mode(const ConstMatrixRef& logits, std::span<std::int32_t> actions) {
  require_rows("Categorical::mode", logits.rows(), actions.size(), "actions");
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    Eigen::Index best = 0;
    logits.row(i).maxCoeff(&best);
    actions[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(best);
  }
}

Eigen::VectorXf Categorical::log_prob(const ConstMatrixRef& logits,
                                      std::span<const std::int32_t> actions) {
  require_rows("Categorical::log_prob", logits.rows(), actions.size(), "actions");
  check_actions("Categorical::log_prob", actions, logits.cols());
  const RowMatrixXf log_probs = log_softmax(logits);
  Eigen::VectorXf out(logits.rows());
  for (Eigen::Index i = 0; i < logits.rows(); ++i)
    out(i) = log_probs(i, actions[static_cast<std::size_t>(i)]);
  return out;
}

Eigen::VectorXf Categorical::entropy(const ConstMatrixRef& logits) {
  return entropy_from_log_probs(log_softmax(logits));
}

void Categorical::log_prob_backward(const ConstMatrixRef& logits,
                                    std::span<const std::int32_t> actions, const ConstVectorRef& g,
                                    MatrixRef grad_logits) {
  require_rows("Categorical::log_prob_backward", logits.rows(), actions.size(), "actions");
  check_actions("Categorical::log_prob_backward", actions, logits.cols());
  require_vector("Categorical::log_prob_backward", logits, g);
  require_out("Categorical::log_prob_backward", logits, grad_logits, "grad_logits");
  grad_logits = softmax(logits);
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    grad_logits.row(i) *= -g(i);
    grad_logits(i, actions[static_cast<std::size_t>(i)]) += g(i);
  }
}

void Categorical::entropy_backward(const ConstMatrixRef& logits, const ConstVectorRef& g,
                                   MatrixRef grad_logits) {
  require_vector("Categorical::entropy_backward", logits, g);
  require_out("Categorical::entropy_backward", logits, grad_logits, "grad_logits");
  const RowMatrixXf log_probs = log_softmax(logits);
  const Eigen::VectorXf h = entropy_from_log_probs(log_probs);
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    grad_logits.row(i) =
        (-g(i) * log_probs.row(i).array().exp() * (log_probs.row(i).array() + h(i))).matrix();
  }
}

// ---- DiagGaussian ----

void DiagGaussian::sample(const ConstMatrixRef& mean, const ConstMatrixRef& log_std,
                          MatrixRef actions, Rng& rng) {
  require_same("DiagGaussian::sample", mean, log_std, "mean", "log_std");
  require_out("DiagGaussian::sample", mean, actions, "actions");
  for (Eigen::Index i = 0; i < mean.rows(); ++i)
    for (Eigen::Index d = 0; d < mean.cols(); ++d)
      actions(i, d) = mean(i, d) + std::exp(log_std(i, d)) * static_cast<float>(rng.normal());
}

void DiagGaussian::mode(const ConstMatrixRef& mean, MatrixRef actions) {
  require_out("DiagGaussian::mode", mean, actions, "actions");
  actions = mean;
}

Eigen::VectorXf DiagGaussian::log_prob(const ConstMatrixRef& mean, const ConstMatrixRef& log_std,
                                       const ConstMatrixRef& actions) {
  require_same("DiagGaussian::log_prob", mean, log_std, "mean", "log_std");
  require_same("DiagGaussian::log_prob", mean, actions, "mean", "actions");
  const Eigen::ArrayXXf z = (actions - mean).array() * (-log_std.array()).exp();
  return (-0.5f * z.square() - log_std.array() - kHalfLogTwoPi).rowwise().sum().matrix();
}

Eigen::VectorXf DiagGaussian::entropy(const ConstMatrixRef& log_std) {
  return (log_std.array() + (0.5f + kHalfLogTwoPi)).rowwise().sum().matrix();
}

void DiagGaussian::log_prob_backward(const ConstMatrixRef& mean, const ConstMatrixRef& log_std,
                                     const ConstMatrixRef& actions, const ConstVectorRef& g,
                                     MatrixRef grad_mean, MatrixRef grad_log_std) {
  require_gaussian_backward("DiagGaussian::log_prob_backward", mean, log_std, actions, "actions", g,
                            grad_mean, grad_log_std);
  const Eigen::ArrayXXf inv_std = (-log_std.array()).exp();
  const Eigen::ArrayXXf z = (actions - mean).array() * inv_std;
  const Eigen::ArrayXXf rows = g.array().replicate(1, mean.cols());
  grad_mean = (rows * z * inv_std).matrix();
  grad_log_std = (rows * (z.square() - 1.0f)).matrix();
}

void DiagGaussian::entropy_backward(const ConstVectorRef& g, MatrixRef grad_log_std) {
  SEEDRL_REQUIRE(g.size() == grad_log_std.rows(),
                 "DiagGaussian::entropy_backward: ", grad_log_std.rows(),
                 " rows but a gradient of ", g.size());
  grad_log_std = g.replicate(1, grad_log_std.cols());
}

// ---- TanhGaussian ----

void TanhGaussian::sample(const ConstMatrixRef& mean, const ConstMatrixRef& log_std,
                          MatrixRef pre_tanh, Rng& rng) {
  DiagGaussian::sample(mean, log_std, pre_tanh, rng);
}

void TanhGaussian::mode(const ConstMatrixRef& mean, MatrixRef pre_tanh) {
  DiagGaussian::mode(mean, pre_tanh);
}

void TanhGaussian::squash(const ConstMatrixRef& pre_tanh, MatrixRef actions) {
  require_out("TanhGaussian::squash", pre_tanh, actions, "actions");
  actions = pre_tanh.array().tanh().matrix();
}

namespace {
// sum_d log(1 - tanh(u_d)^2) per row.
Eigen::VectorXf tanh_correction(const ConstMatrixRef& u) {
  return u.unaryExpr([](float x) { return log_one_minus_tanh_squared(x); }).rowwise().sum();
}
}  // namespace

Eigen::VectorXf TanhGaussian::log_prob(const ConstMatrixRef& mean, const ConstMatrixRef& log_std,
                                       const ConstMatrixRef& pre_tanh) {
  return DiagGaussian::log_prob(mean, log_std, pre_tanh) - tanh_correction(pre_tanh);
}

void TanhGaussian::log_prob_backward(const ConstMatrixRef& mean, const ConstMatrixRef& log_std,
                                     const ConstMatrixRef& pre_tanh, const ConstVectorRef& g,
                                     MatrixRef grad_mean, MatrixRef grad_log_std) {
  DiagGaussian::log_prob_backward(mean, log_std, pre_tanh, g, grad_mean, grad_log_std);
}

Eigen::VectorXf TanhGaussian::entropy_estimate(const ConstMatrixRef& mean,
                                               const ConstMatrixRef& log_std,
                                               const ConstMatrixRef& noise) {
  require_same("TanhGaussian::entropy_estimate", mean, log_std, "mean", "log_std");
  require_same("TanhGaussian::entropy_estimate", mean, noise, "mean", "noise");
  const RowMatrixXf u = (mean.array() + log_std.array().exp() * noise.array()).matrix();
  return DiagGaussian::entropy(log_std) + tanh_correction(u);
}

void TanhGaussian::entropy_estimate_backward(const ConstMatrixRef& mean,
                                             const ConstMatrixRef& log_std,
                                             const ConstMatrixRef& noise, const ConstVectorRef& g,
                                             MatrixRef grad_mean, MatrixRef grad_log_std) {
  require_gaussian_backward("TanhGaussian::entropy_estimate_backward", mean, log_std, noise,
                            "noise", g, grad_mean, grad_log_std);
  const Eigen::ArrayXXf std_dev = log_std.array().exp();
  const Eigen::ArrayXXf tanh_u = (mean.array() + std_dev * noise.array()).tanh();
  const Eigen::ArrayXXf rows = g.array().replicate(1, mean.cols());
  // d/du log(1 - tanh(u)^2) = -2 tanh(u); du/dmean = 1, du/dlog_std = std z.
  grad_mean = (-2.0f * rows * tanh_u).matrix();
  grad_log_std = (rows * (1.0f - 2.0f * tanh_u * std_dev * noise.array())).matrix();
}

}  // namespace seedrl::math
