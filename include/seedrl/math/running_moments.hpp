// Running mean and variance of vectors, merged batch by batch (Chan, Golub & LeVeque 1979's
// parallel update, in double precision), and the normalisation PPO applies to observations:
// clip((x - mean) / sqrt(variance + epsilon), -clip, clip), as Gymnasium's NormalizeObservation
// and Stable-Baselines3's VecNormalize compute it. The statistics start from a prior of
// `prior_count` samples with mean 0 and variance 1 (1e-4, as both do), so that the first
// normalisations are finite.
#pragma once

#include <Eigen/Core>
#include <cstdint>

#include "seedrl/math/softmax.hpp"

namespace seedrl::math {

class RunningMoments {
 public:
  explicit RunningMoments(std::int64_t size, double prior_count = 1e-4);

  std::int64_t size() const { return mean_.size(); }
  double count() const { return count_; }
  const Eigen::VectorXd& mean() const { return mean_; }
  const Eigen::VectorXd& variance() const { return variance_; }

  /// Adds the rows of `samples` [N, size]; non-finite values are an error naming the row.
  void update(const ConstMatrixRef& samples);
  /// Adds what `other` has seen (the same as having updated with its samples).
  void merge(const RunningMoments& other);
  /// out = clip((x - mean) / sqrt(variance + epsilon), -clip, clip), row by row; out may be x.
  void normalize(const ConstMatrixRef& x, MatrixRef out, float clip = 10.0f,
                 float epsilon = 1e-8f) const;

  /// Restores saved statistics (a checkpoint's); throws naming a size mismatch, a negative or
  /// non-finite count or variance.
  void restore(double count, const Eigen::VectorXd& mean, const Eigen::VectorXd& variance);

 private:
  void combine(double count, const Eigen::VectorXd& mean, const Eigen::VectorXd& variance);

  double count_;
  Eigen::VectorXd mean_, variance_;
};

}  // namespace seedrl::math
