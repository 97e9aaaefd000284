#include "seedrl/algo/r2d2_loss.hpp"

namespace seedrl {

R2D2Loss r2d2_loss(const math::ConstMatrixRef& q_online, const math::ConstMatrixRef& q_target,
                   const Eigen::ArrayXXi& actions, const Eigen::ArrayXXf& rewards,
                   const Eigen::ArrayXXf& dones, const Eigen::ArrayXXf& mask,
                   std::span<const float> weights, const R2D2LossOptions& options,
                   std::span<const std::uint8_t> legal) {
  const Eigen::Index steps = actions.rows(), batch = actions.cols(), num_actions = q_online.cols();
  SEEDRL_REQUIRE(q_online.rows() == (steps + 1) * batch && q_target.rows() == q_online.rows() &&
                     q_target.cols() == num_actions,
                 "r2d2_loss: Q-values must be [(T + 1) B, A] = [", (steps + 1) * batch, ", A] for ",
                 steps, " transitions of ", batch, " sequences; online [", q_online.rows(), ", ",
                 q_online.cols(), "], target [", q_target.rows(), ", ", q_target.cols(), "]");
  for (const Eigen::ArrayXXf* a : {&rewards, &dones, &mask}) {
    SEEDRL_REQUIRE(a->rows() == steps && a->cols() == batch,
                   "r2d2_loss: rewards, dones and mask must be [T, B] like actions");
  }
  SEEDRL_REQUIRE(weights.empty() || static_cast<Eigen::Index>(weights.size()) == batch,
                 "r2d2_loss: ", weights.size(), " importance weights for ", batch, " sequences");
  const double eps = options.value_rescale_epsilon;
  auto raw = [&](const auto& x) {
    using Plain = typename std::decay_t<decltype(x)>::PlainObject;
    return options.value_rescaling ? inverse_value_rescale(x, eps) : Plain(x);
  };

  // Bootstrap value of the state at window step t: h^-1(Q_target(x_t, argmax Q_online(x_t))).
  const Eigen::ArrayXf bootstrap = raw(double_q_values(q_online, q_target, legal));
  Eigen::ArrayXXf boundary_rewards = rewards, q_next(steps, batch), q_taken(steps, batch);
  for (Eigen::Index b = 0; b < batch; ++b) {
    for (Eigen::Index t = 0; t < steps; ++t) {
      const Eigen::Index row = t * batch + b;
      const int a = actions(t, b);
      SEEDRL_REQUIRE(a >= 0 && a < num_actions, "r2d2_loss: action ", a, " out of range [0, ",
                     num_actions, ")");
      q_taken(t, b) = q_online(row, a);
      q_next(t, b) = bootstrap(row + batch);
      if (mask(t, b) == 0.0f) boundary_rewards(t, b) = bootstrap(row);
    }
  }
  Eigen::ArrayXXf targets =
      n_step_targets(boundary_rewards, dones, q_next, options.n_step, options.discount);
  if (options.value_rescaling) targets = value_rescale(targets, eps);

  R2D2Loss out;
  out.td_errors = (q_taken - targets) * mask;
  out.priorities = sequence_priorities(out.td_errors, options.priority_eta);
  out.transitions = static_cast<std::int64_t>(mask.sum());
  out.mean_q = out.transitions > 0 ? (raw(q_taken) * mask).sum() / out.transitions : 0.0;
  out.grad_q = RowMatrixXf::Zero(q_online.rows(), num_actions);
  double loss = 0.0;
  for (Eigen::Index b = 0; b < batch; ++b) {
    const float w = weights.empty() ? 1.0f : weights[static_cast<std::size_t>(b)];
    loss += w * 0.5 * out.td_errors.col(b).square().cast<double>().sum();
    for (Eigen::Index t = 0; t < steps; ++t)
      out.grad_q(t * batch + b, actions(t, b)) =
          w * out.td_errors(t, b) / static_cast<float>(batch);
  }
  out.loss = loss / static_cast<double>(batch);
  return out;
}

R2D2Loss r2d2_loss(const math::ConstMatrixRef& q_online, const math::ConstMatrixRef& q_target,
                   const std::vector<Eigen::ArrayXXi>& branch_actions,
                   const Eigen::ArrayXXf& rewards, const Eigen::ArrayXXf& dones,
                   const Eigen::ArrayXXf& mask, std::span<const float> weights,
                   const R2D2LossOptions& options, std::span<const std::uint8_t> legal,
                   const math::Branches& branches) {
  const std::int64_t k_count = branches.count();
  SEEDRL_REQUIRE(k_count >= 1 && static_cast<std::int64_t>(branch_actions.size()) == k_count &&
                     q_online.cols() == branches.total() && q_target.cols() == branches.total(),
                 "r2d2_loss: ", branch_actions.size(), " branches of actions and Q-values of ",
                 q_online.cols(), " and ", q_target.cols(), " columns for branches ",
                 branches.to_string());
  const Eigen::Index rows = q_online.rows(), total = branches.total();
  SEEDRL_REQUIRE(legal.empty() || legal.size() == static_cast<std::size_t>(rows * total),
                 "r2d2_loss: a legal-action mask of ", legal.size(), " entries for ", rows,
                 " rows of ", total, " actions");
  const float scale = 1.0f / static_cast<float>(k_count);
  R2D2Loss out;
  out.grad_q = RowMatrixXf::Zero(rows, total);
  Eigen::ArrayXXf abs_td = Eigen::ArrayXXf::Zero(mask.rows(), mask.cols());
  std::vector<std::uint8_t> branch_legal;
  for (std::int64_t k = 0; k < k_count; ++k) {
    const Eigen::Index offset = branches.offset(k), size = branches.size(k);
    if (!legal.empty()) {  // branch k's columns of the mask
      branch_legal.resize(static_cast<std::size_t>(rows * size));
      for (Eigen::Index r = 0; r < rows; ++r)
        std::copy_n(legal.begin() + r * total + offset, size, branch_legal.begin() + r * size);
    }
    const R2D2Loss branch = r2d2_loss(
        q_online.middleCols(offset, size), q_target.middleCols(offset, size),
        branch_actions[static_cast<std::size_t>(k)], rewards, dones, mask, weights, options,
        legal.empty() ? std::span<const std::uint8_t>()
                      : std::span<const std::uint8_t>(branch_legal));
    out.loss += scale * branch.loss;
    out.mean_q += scale * branch.mean_q;
    out.transitions = branch.transitions;
    abs_td += scale * branch.td_errors.abs();
    out.grad_q.middleCols(offset, size) = scale * branch.grad_q;
  }
  out.td_errors = abs_td;
  out.priorities = sequence_priorities(out.td_errors, options.priority_eta);
  return out;
}

}  // namespace seedrl
