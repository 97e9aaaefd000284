#include "seedrl/math/categorical.hpp"

#include <cmath>

#include "seedrl/core/error.hpp"

namespace seedrl::math {

void sample_categorical(const ConstMatrixRef& logits, std::span<const std::uint8_t> greedy,
                        std::span<std::int32_t> actions, Rng& rng) {
  const Eigen::Index rows = logits.rows(), num_actions = logits.cols();
  SEEDRL_REQUIRE(static_cast<Eigen::Index>(greedy.size()) == rows &&
                     static_cast<Eigen::Index>(actions.size()) == rows,
                 "sample_categorical: ", rows, " rows of logits, ", greedy.size(),
                 " greedy flags and ", actions.size(), " actions");
  for (Eigen::Index i = 0; i < rows; ++i) {
    Eigen::Index best = 0;
    const float max_logit = logits.row(i).maxCoeff(&best);
    const auto k = static_cast<std::size_t>(i);
    if (greedy[k]) {
      actions[k] = static_cast<std::int32_t>(best);
      continue;
    }
    double total = 0.0;
    for (Eigen::Index a = 0; a < num_actions; ++a)
      total += std::exp(static_cast<double>(logits(i, a) - max_logit));
    double u = rng.uniform() * total;
    Eigen::Index chosen = num_actions - 1;
    for (Eigen::Index a = 0; a < num_actions; ++a) {
      u -= std::exp(static_cast<double>(logits(i, a) - max_logit));
      if (u < 0.0) {
        chosen = a;
        break;
      }
    }
    actions[k] = static_cast<std::int32_t>(chosen);
  }
}

}  // namespace seedrl::math
