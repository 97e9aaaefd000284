// Replay priorities of R2D2 sequences from their TD errors.
#pragma once

#include <Eigen/Core>

#include "seedrl/core/error.hpp"

namespace seedrl {

inline constexpr double kSequencePriorityEta = 0.9;

/// Priority of each sequence (column of td_errors [T, B]):
///   eta * max_t |delta_t| + (1 - eta) * mean_t |delta_t|    (R2D2 uses eta = 0.9).
inline Eigen::ArrayXf sequence_priorities(const Eigen::ArrayXXf& td_errors,
                                          double eta = kSequencePriorityEta) {
  SEEDRL_REQUIRE(eta >= 0.0 && eta <= 1.0, "sequence_priorities: eta must be in [0, 1], got ", eta);
  SEEDRL_REQUIRE(td_errors.rows() > 0, "sequence_priorities: sequences have no time steps");
  const Eigen::ArrayXXf magnitude = td_errors.abs();
  const auto max = magnitude.colwise().maxCoeff();
  const auto mean = magnitude.colwise().mean();
  return (static_cast<float>(eta) * max + static_cast<float>(1.0 - eta) * mean).transpose();
}

}  // namespace seedrl
