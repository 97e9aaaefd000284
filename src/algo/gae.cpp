#include "seedrl/algo/gae.hpp"

#include "seedrl/core/error.hpp"

namespace seedrl {

Eigen::ArrayXXf gae(const Eigen::ArrayXXf& rewards, const Eigen::ArrayXXf& values,
                    const Eigen::ArrayXXf& dones, const Eigen::ArrayXf& bootstrap_value,
                    float gamma, float lambda) {
  const Eigen::Index steps = rewards.rows(), batch = rewards.cols();
  SEEDRL_REQUIRE(values.rows() == steps && values.cols() == batch && dones.rows() == steps &&
                     dones.cols() == batch && bootstrap_value.size() == batch,
                 "gae: rewards, values and dones must be [T, B] and bootstrap_value [B]; got "
                 "rewards [",
                 steps, ", ", batch, "], values [", values.rows(), ", ", values.cols(),
                 "], dones [", dones.rows(), ", ", dones.cols(), "], bootstrap_value [",
                 bootstrap_value.size(), "]");
  SEEDRL_REQUIRE(gamma >= 0.0f && gamma <= 1.0f, "gae: gamma must be in [0, 1], got ", gamma);
  SEEDRL_REQUIRE(lambda >= 0.0f && lambda <= 1.0f, "gae: lambda must be in [0, 1], got ", lambda);

  Eigen::ArrayXXf advantages(steps, batch);
  Eigen::ArrayXf next_value = bootstrap_value;
  Eigen::ArrayXf next_advantage = Eigen::ArrayXf::Zero(batch);
  for (Eigen::Index t = steps - 1; t >= 0; --t) {
    const Eigen::ArrayXf continues = 1.0f - dones.row(t).transpose();
    const Eigen::ArrayXf delta =
        rewards.row(t).transpose() + gamma * continues * next_value - values.row(t).transpose();
    next_advantage = delta + gamma * lambda * continues * next_advantage;
    advantages.row(t) = next_advantage.transpose();
    next_value = values.row(t).transpose();
  }
  return advantages;
}

}  // namespace seedrl
