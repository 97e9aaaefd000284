// SAC's n-step windows and its learner on the CPU backend (declared extern in the header).
#include "seedrl/agents/sac.hpp"

#include "seedrl/learner/transitions.hpp"

namespace seedrl {

SacWindows sac_windows(const UnrollBatch& batch, std::int64_t n_step, float discount,
                       float max_abs_reward, std::int64_t version) {
  const Transitions tr = make_transitions(batch, 0, n_step, max_abs_reward, version);
  const Eigen::Index columns = tr.mask.cols();
  SacWindows w{Eigen::ArrayXf::Zero(columns), Eigen::ArrayXf::Zero(columns),
               Eigen::ArrayXf::Zero(columns),
               std::vector<std::int64_t>(static_cast<std::size_t>(columns), 1)};
  for (Eigen::Index b = 0; b < columns; ++b) {
    if (tr.mask(0, b) == 0.0f) continue;  // the window starts at an episode's last step
    float g = 1.0f, ret = 0.0f;
    std::int64_t k = n_step;
    for (std::int64_t i = 0; i < n_step; ++i) {
      ret += g * tr.rewards(i, b);
      g *= discount;
      if (tr.dones(i, b) > 0.0f) {  // terminated with r_{i+1}: nothing to bootstrap from
        g = 0.0f;
        k = i + 1;
        break;
      }
      if (i + 1 < n_step && tr.mask(i + 1, b) == 0.0f) {  // x_{i+1} was cut short: bootstrap
        k = i + 1;
        break;
      }
    }
    w.returns(b) = ret;
    w.discounts(b) = g;
    w.mask(b) = 1.0f;
    w.bootstrap_step[static_cast<std::size_t>(b)] = k;
    ++w.count;
  }
  w.policy_lag = tr.policy_lag;
  return w;
}

template class Learner<SacAgent, cpu::Backend>;

}  // namespace seedrl
