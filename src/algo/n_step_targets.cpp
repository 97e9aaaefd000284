#include "seedrl/algo/n_step_targets.hpp"

#include "seedrl/math/masked_categorical.hpp"

namespace seedrl {

Eigen::ArrayXXf n_step_targets(const Eigen::ArrayXXf& rewards, const Eigen::ArrayXXf& dones,
                               const Eigen::ArrayXXf& q_next, std::int64_t n, double gamma) {
  SEEDRL_REQUIRE(n >= 1, "n_step_targets: n must be >= 1, got ", n);
  SEEDRL_REQUIRE(gamma >= 0.0 && gamma <= 1.0, "n_step_targets: gamma must be in [0, 1], got ",
                 gamma);
  const Eigen::Index steps = rewards.rows(), batch = rewards.cols();
  SEEDRL_REQUIRE(dones.rows() == steps && dones.cols() == batch && q_next.rows() == steps &&
                     q_next.cols() == batch,
                 "n_step_targets: rewards [", steps, ", ", batch, "], dones [", dones.rows(), ", ",
                 dones.cols(), "] and q_next [", q_next.rows(), ", ", q_next.cols(),
                 "] must have the same shape");
  Eigen::ArrayXXf targets(steps, batch);
  for (Eigen::Index b = 0; b < batch; ++b) {
    for (Eigen::Index t = 0; t < steps; ++t) {
      const Eigen::Index m = std::min<Eigen::Index>(n, steps - t);
      double total = 0.0, discount = 1.0;  // discount = gamma^i prod_{k<i} (1 - d_{t+k})
      for (Eigen::Index i = 0; i < m; ++i) {
        total += discount * rewards(t + i, b);
        discount *= gamma * (1.0 - static_cast<double>(dones(t + i, b)));
      }
      targets(t, b) = static_cast<float>(total + discount * q_next(t + m - 1, b));
    }
  }
  return targets;
}

Eigen::ArrayXi greedy_actions(const math::ConstMatrixRef& q) {
  SEEDRL_REQUIRE(q.cols() > 0, "greedy_actions: no actions");
  Eigen::ArrayXi actions(q.rows());
  for (Eigen::Index i = 0; i < q.rows(); ++i) {
    Eigen::Index best = 0;
    q.row(i).maxCoeff(&best);
    actions(i) = static_cast<int>(best);
  }
  return actions;
}

Eigen::ArrayXf double_q_values(const math::ConstMatrixRef& q_online,
                               const math::ConstMatrixRef& q_target,
                               std::span<const std::uint8_t> legal) {
  SEEDRL_REQUIRE(q_online.rows() == q_target.rows() && q_online.cols() == q_target.cols(),
                 "double_q_values: online Q is [", q_online.rows(), ", ", q_online.cols(),
                 "] but target Q is [", q_target.rows(), ", ", q_target.cols(), "]");
  Eigen::ArrayXi actions(q_online.rows());
  if (legal.empty()) {
    actions = greedy_actions(q_online);
  } else {
    math::masked_greedy(
        q_online, legal, math::Branches({q_online.cols()}, "double_q_values"),
        std::span<std::int32_t>(actions.data(), static_cast<std::size_t>(actions.size())));
  }
  Eigen::ArrayXf values(q_online.rows());
  for (Eigen::Index i = 0; i < q_online.rows(); ++i) values(i) = q_target(i, actions(i));
  return values;
}

}  // namespace seedrl
