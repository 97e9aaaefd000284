#include "seedrl/algo/sequence_priority.hpp"

namespace seedrl {

Eigen::ArrayXf sequence_priorities(const Eigen::ArrayXXf& td_errors, double eta) {
  SEEDRL_REQUIRE(eta >= 0.0 && eta <= 1.0, "sequence_priorities: eta must be in [0, 1], got ", eta);
  SEEDRL_REQUIRE(td_errors.rows() > 0, "sequence_priorities: sequences have no time steps");
  const Eigen::ArrayXXf magnitude = td_errors.abs();
  const auto max = magnitude.colwise().maxCoeff();
  const auto mean = magnitude.colwise().mean();
  return (static_cast<float>(eta) * max + static_cast<float>(1.0 - eta) * mean).transpose();
}

}  // namespace seedrl
