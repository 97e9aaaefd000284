// Replay priorities of R2D2 sequences from their TD errors.
#pragma once

#include <Eigen/Core>

#include "seedrl/core/error.hpp"

namespace seedrl {

inline constexpr double kSequencePriorityEta = 0.9;

/// Priority of each sequence (column of td_errors [T, B]):
///   eta * max_t |delta_t| + (1 - eta) * mean_t |delta_t|    (R2D2 uses eta = 0.9).
Eigen::ArrayXf sequence_priorities(const Eigen::ArrayXXf& td_errors,
                                   double eta = kSequencePriorityEta);

}  // namespace seedrl
