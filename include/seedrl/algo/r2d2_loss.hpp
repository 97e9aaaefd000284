// The R2D2 loss (Kapturowski et al. 2019) of a batch of sequences, from the online and target
// networks' Q-values over the trained window, as a pure function: the learner feeds it the
// networks' outputs and the transitions, and backpropagates grad_q.
//
// Conventions: a window of T transitions has T + 1 steps (the last only bootstraps). B sequences.
//   q_online, q_target  [(T + 1) B, A] row-major, row t * B + b (Network outputs flattened)
//   actions, rewards, dones, mask  [T, B]: the transitions (learner/transitions.hpp); mask 0 marks
//                       an episode boundary, whose reward and done the loss sets itself (below)
//   weights             [B] importance weights, or empty (all 1)
//
//   legal    [(T + 1) B, A] u8 legal-action masks, or empty (all legal)
//
//   v_t      = h^-1(q_target[t, argmax_a q_online[t, a]])          (double Q, raw units; the
//            argmax over the actions legal in x_t where a mask is given)
//   at a boundary t (x_t ended an episode, no transition): r_t = v_t and d_t = 1, so an n-step
//            window reaching it stops there and bootstraps from the episode's final state
//   y_t      = n-step target of algo/n_step_targets.hpp with q_next[t] = v_{t+1}
//   delta_t  = (q_online[t, a_t] - h(y_t)) * mask_t            (h: value_rescale, or identity)
//   loss     = (1/B) sum_b w_b sum_t 0.5 delta_t^2;  d loss / d q_online[t, a_t] = w_b delta_t / B
//   priority = eta max_t |delta_t| + (1 - eta) mean_t |delta_t|
// The targets carry no gradient.
//
// Action branches (branching dueling Q-networks, Tavakoli et al. 2018): with K branches the
// Q-values hold the branches side by side [.., A = sum n_k] and the actions are one [T, B] array
// per branch. Each branch k has its own target, from its own double-Q argmax over its legal
// actions: y_k = n-step target with v_k,t = h^-1(Q_k,target(x_t, argmax_a Q_k,online(x_t, a))),
// delta_k,t = Q_k,online(x_t, a_k,t) - h(y_k,t); the loss is the mean over the branches of each
// branch's loss above (gradients scaled by 1/K alike), the TD errors the mean over branches of
// |delta_k| (unsigned), and the priorities are computed from them.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <span>
#include <vector>

#include "seedrl/algo/n_step_targets.hpp"
#include "seedrl/algo/sequence_priority.hpp"
#include "seedrl/algo/value_rescale.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/math/masked_categorical.hpp"
#include "seedrl/math/softmax.hpp"

namespace seedrl {

struct R2D2LossOptions {
  std::int64_t n_step = 5;
  double discount = 0.997;
  bool value_rescaling = true;  ///< train on h(y) and bootstrap through h^-1
  double value_rescale_epsilon = kValueRescaleEpsilon;
  double priority_eta = kSequencePriorityEta;
};

struct R2D2Loss {
  double loss = 0.0;          ///< (1/B) sum_b w_b sum_t 0.5 delta^2
  Eigen::ArrayXXf td_errors;  ///< delta [T, B] (0 at episode boundaries), in rescaled units
  Eigen::ArrayXf priorities;  ///< [B]
  double mean_q = 0.0;        ///< mean online Q(x_t, a_t) over transitions (raw units)
  std::int64_t transitions = 0;
  RowMatrixXf grad_q;  ///< d loss / d q_online [(T + 1) B, A]; the last step's rows are 0
};

R2D2Loss r2d2_loss(const math::ConstMatrixRef& q_online, const math::ConstMatrixRef& q_target,
                   const Eigen::ArrayXXi& actions, const Eigen::ArrayXXf& rewards,
                   const Eigen::ArrayXXf& dones, const Eigen::ArrayXXf& mask,
                   std::span<const float> weights, const R2D2LossOptions& options,
                   std::span<const std::uint8_t> legal = {});

/// The branched loss (above): `branch_actions[k]` [T, B] is branch k's actions, `legal` u8
/// [(T + 1) B, A] or empty.
R2D2Loss r2d2_loss(const math::ConstMatrixRef& q_online, const math::ConstMatrixRef& q_target,
                   const std::vector<Eigen::ArrayXXi>& branch_actions,
                   const Eigen::ArrayXXf& rewards, const Eigen::ArrayXXf& dones,
                   const Eigen::ArrayXXf& mask, std::span<const float> weights,
                   const R2D2LossOptions& options, std::span<const std::uint8_t> legal,
                   const math::Branches& branches);

}  // namespace seedrl
