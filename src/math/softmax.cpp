#include "seedrl/math/softmax.hpp"

#include <cmath>

#include "seedrl/core/error.hpp"

namespace seedrl::math {

namespace {

void require_same_shape(const ConstMatrixRef& a, Eigen::Index rows, Eigen::Index cols,
                        const char* what) {
  SEEDRL_REQUIRE(a.rows() == rows && a.cols() == cols, what, ": expected [", rows, ", ", cols,
                 "], got [", a.rows(), ", ", a.cols(), "]");
}

}  // namespace

void log_softmax(const ConstMatrixRef& logits, MatrixRef out) {
  require_same_shape(out, logits.rows(), logits.cols(), "log_softmax output");
  SEEDRL_REQUIRE(logits.cols() > 0, "log_softmax: logits have no columns");
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    // (x - max) - log(sum exp(x - max)): exact for the largest logit, no large cancellation.
    const float shift = logits.row(i).maxCoeff();
    out.row(i).array() = logits.row(i).array() - shift;
    out.row(i).array() -= std::log(out.row(i).array().exp().sum());
  }
}

RowMatrixXf log_softmax(const ConstMatrixRef& logits) {
  RowMatrixXf out(logits.rows(), logits.cols());
  log_softmax(logits, out);
  return out;
}

void softmax(const ConstMatrixRef& logits, MatrixRef out) {
  log_softmax(logits, out);
  out = out.array().exp().matrix();
}

RowMatrixXf softmax(const ConstMatrixRef& logits) {
  RowMatrixXf out(logits.rows(), logits.cols());
  softmax(logits, out);
  return out;
}

Eigen::VectorXf entropy_from_log_probs(const ConstMatrixRef& log_probs) {
  return -(log_probs.array().exp() * log_probs.array()).rowwise().sum().matrix();
}

void log_softmax_backward(const ConstMatrixRef& log_probs, const ConstMatrixRef& grad_log_probs,
                          MatrixRef grad_logits) {
  require_same_shape(grad_log_probs, log_probs.rows(), log_probs.cols(),
                     "log_softmax_backward gradient");
  require_same_shape(grad_logits, log_probs.rows(), log_probs.cols(),
                     "log_softmax_backward output");
  for (Eigen::Index i = 0; i < log_probs.rows(); ++i) {
    const float row_sum = grad_log_probs.row(i).sum();
    grad_logits.row(i).array() =
        grad_log_probs.row(i).array() - log_probs.row(i).array().exp() * row_sum;
  }
}

void softmax_backward(const ConstMatrixRef& probs, const ConstMatrixRef& grad_probs,
                      MatrixRef grad_logits) {
  require_same_shape(grad_probs, probs.rows(), probs.cols(), "softmax_backward gradient");
  require_same_shape(grad_logits, probs.rows(), probs.cols(), "softmax_backward output");
  for (Eigen::Index i = 0; i < probs.rows(); ++i) {
    const float dot = probs.row(i).dot(grad_probs.row(i));
    grad_logits.row(i).array() = probs.row(i).array() * (grad_probs.row(i).array() - dot);
  }
}

void entropy_backward(const ConstMatrixRef& log_probs, const ConstVectorRef& grad_entropy,
                      MatrixRef grad_logits) {
  SEEDRL_REQUIRE(grad_entropy.size() == log_probs.rows(), "entropy_backward: ", grad_entropy.size(),
                 " gradients for ", log_probs.rows(), " rows");
  require_same_shape(grad_logits, log_probs.rows(), log_probs.cols(), "entropy_backward output");
  for (Eigen::Index i = 0; i < log_probs.rows(); ++i) {
    const auto log_p = log_probs.row(i).array();
    const float entropy = -(log_p.exp() * log_p).sum();
    grad_logits.row(i).array() = -grad_entropy(i) * log_p.exp() * (log_p + entropy);
  }
}

}  // namespace seedrl::math
