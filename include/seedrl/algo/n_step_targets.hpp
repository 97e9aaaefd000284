// n-step returns with episode ends and double-Q bootstraps, as R2D2 trains on them.
//
// On [T, B] arrays (T time steps, B sequences):
//   rewards[t]  the reward received after the action at step t
//   dones[t]    1 when the episode ended with rewards[t] (a terminal transition), else 0
//   q_next[t]   the bootstrap value of the state that follows rewards[t] (already mapped back
//               through h^-1 when values are rescaled)
// and for m = min(n, T - t) (the window shrinks near the end of the unroll):
//   y_t = sum_{i<m} gamma^i prod_{k<i} (1 - d_{t+k}) r_{t+i}
//         + gamma^m prod_{k<m} (1 - d_{t+k}) q_next[t + m - 1]
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <span>

#include "seedrl/core/error.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/math/softmax.hpp"

namespace seedrl {

/// y_t as above, [T, B].
Eigen::ArrayXXf n_step_targets(const Eigen::ArrayXXf& rewards, const Eigen::ArrayXXf& dones,
                               const Eigen::ArrayXXf& q_next, std::int64_t n, double gamma);

/// The greedy action of each row of q [N, A] (the lowest index among ties).
Eigen::ArrayXi greedy_actions(const math::ConstMatrixRef& q);

/// Double-Q bootstrap values (van Hasselt et al. 2016): the target network's value of the
/// action the online network prefers, q_target[i, argmax_a q_online[i, a]], both [N, A]. With a
/// legal-action mask (u8 [N, A] row-major; empty: all legal) the argmax is over the legal actions
/// of each row (math::masked_greedy; a row that allows nothing is refused by name).
Eigen::ArrayXf double_q_values(const math::ConstMatrixRef& q_online,
                               const math::ConstMatrixRef& q_target,
                               std::span<const std::uint8_t> legal = {});

}  // namespace seedrl
