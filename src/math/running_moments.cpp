#include "seedrl/math/running_moments.hpp"

#include <cmath>

#include "seedrl/core/error.hpp"

namespace seedrl::math {

RunningMoments::RunningMoments(std::int64_t size, double prior_count)
    : count_(prior_count),
      mean_(Eigen::VectorXd::Zero(size)),
      variance_(Eigen::VectorXd::Ones(size)) {
  SEEDRL_REQUIRE(size > 0, "RunningMoments: size must be positive, got ", size);
  SEEDRL_REQUIRE(prior_count >= 0.0 && std::isfinite(prior_count),
                 "RunningMoments: prior_count must be >= 0, got ", prior_count);
}

void RunningMoments::combine(double count, const Eigen::VectorXd& mean,
                             const Eigen::VectorXd& variance) {
  if (count <= 0.0) return;
  const double total = count_ + count;
  const Eigen::VectorXd delta = mean - mean_;
  mean_ += delta * (count / total);
  // M2 = M2_a + M2_b + delta^2 n_a n_b / n, divided by n for the population variance.
  variance_ = (variance_ * count_ + variance * count +
               delta.array().square().matrix() * (count_ * count / total)) /
              total;
  count_ = total;
}

void RunningMoments::update(const ConstMatrixRef& samples) {
  SEEDRL_REQUIRE(samples.cols() == size(), "RunningMoments::update: rows of ", samples.cols(),
                 " values, expected ", size());
  const Eigen::Index n = samples.rows();
  if (n == 0) return;
  for (Eigen::Index i = 0; i < n; ++i)
    SEEDRL_REQUIRE(samples.row(i).allFinite(), "RunningMoments::update: row ", i,
                   " holds a non-finite value");
  const Eigen::MatrixXd x = samples.cast<double>();
  const Eigen::VectorXd mean = x.colwise().mean().transpose();
  const Eigen::VectorXd variance =
      (x.rowwise() - mean.transpose()).array().square().colwise().mean().transpose();
  combine(static_cast<double>(n), mean, variance);
}

void RunningMoments::merge(const RunningMoments& other) {
  SEEDRL_REQUIRE(other.size() == size(), "RunningMoments::merge: sizes ", size(), " and ",
                 other.size());
  combine(other.count_, other.mean_, other.variance_);
}

void RunningMoments::normalize(const ConstMatrixRef& x, MatrixRef out, float clip,
                               float epsilon) const {
  SEEDRL_REQUIRE(x.cols() == size() && out.rows() == x.rows() && out.cols() == x.cols(),
                 "RunningMoments::normalize: x is [", x.rows(), ", ", x.cols(), "], out [",
                 out.rows(), ", ", out.cols(), "], the statistics have ", size(), " values");
  const Eigen::RowVectorXf mean = mean_.transpose().cast<float>();
  const Eigen::RowVectorXf scale =
      (variance_.array() + static_cast<double>(epsilon)).rsqrt().matrix().transpose().cast<float>();
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    out.row(i) = ((x.row(i) - mean).array() * scale.array()).min(clip).max(-clip).matrix();
}

void RunningMoments::restore(double count, const Eigen::VectorXd& mean,
                             const Eigen::VectorXd& variance) {
  SEEDRL_REQUIRE(mean.size() == size() && variance.size() == size(),
                 "RunningMoments::restore: ", mean.size(), " means and ", variance.size(),
                 " variances for statistics of ", size(), " values");
  SEEDRL_REQUIRE(std::isfinite(count) && count >= 0.0, "RunningMoments::restore: count ", count);
  SEEDRL_REQUIRE(mean.allFinite() && variance.allFinite() && (variance.array() >= 0.0).all(),
                 "RunningMoments::restore: non-finite mean or negative / non-finite variance");
  count_ = count;
  mean_ = mean;
  variance_ = variance;
}

}  // namespace seedrl::math
