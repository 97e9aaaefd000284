// Generalized advantage estimation, GAE(lambda) (Schulman et al. 2016, "High-Dimensional
// Continuous Control Using Generalized Advantage Estimation", eq. 16), as PPO uses it.
//
// Layout: time-major Eigen arrays with T rows (time) and B columns (batch entries).
//   delta_t = r_t + gamma (1 - done_t) V_{t+1} - V_t,     V_T = bootstrap_value
//   A_t     = delta_t + gamma lambda (1 - done_t) A_{t+1},  A_T = 0
// done_t = 1 where the episode ended with the reward r_t (a terminal state): it cuts both the
// bootstrap and the sum there. The value targets are A + V.
#pragma once

#include <Eigen/Core>

namespace seedrl {

/// GAE(lambda) advantages [T, B] from rewards, values and dones [T, B] (dones 0 or 1) and
/// bootstrap_value [B] (the value of the state after the last step). gamma and lambda in [0, 1].
/// Throws seedrl::Error naming a mismatched shape or a bad gamma / lambda.
Eigen::ArrayXXf gae(const Eigen::ArrayXXf& rewards, const Eigen::ArrayXXf& values,
                    const Eigen::ArrayXXf& dones, const Eigen::ArrayXf& bootstrap_value,
                    float gamma, float lambda);

}  // namespace seedrl
