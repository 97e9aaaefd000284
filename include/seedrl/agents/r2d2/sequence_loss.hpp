// R2D2's loss on a batch of sequences (agents/r2d2/learner.hpp's): the target network over the
// whole sequence, the online network's burn-in without gradient and then its trained window,
// r2d2_loss (algo/r2d2_loss.hpp) over the window's transitions, per branch where the actions have
// branches and within the legal actions where the steps carry masks; the priorities of new
// sequences the same way without gradient, or from the Q-values recorded while acting. On a
// backend that computes the loss on its device (CUDA) and a batch without masks or branches, the
// Q-values never leave it.
#pragma once

#include <cstdint>
#include <ranges>
#include <span>
#include <utility>
#include <vector>

#include "seedrl/agents/r2d2/agent.hpp"
#include "seedrl/algo/r2d2_loss.hpp"
#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/experience/unroll.hpp"
#include "seedrl/learner/learner_pass.hpp"
#include "seedrl/learner/transitions.hpp"
#include "seedrl/math/masked_categorical.hpp"
#include "seedrl/shared/staging.hpp"

namespace seedrl {

/// A pass of the R2D2 learner: the core's, with the target network and the loss's buffers.
template <nn::Backend B>
struct R2D2Pass final : LearnerPass<B> {
  R2D2Pass(NetworkSet<B>& networks, const LearnerPassContext& context)
      : LearnerPass<B>(networks, context), target(networks.network("target")) {}
  nn::Network<B>& target;
  double policy_lag = 0.0;  // of the last evaluated batch
  ScratchBuffer burn_state_h{B::device}, burn_state_c{B::device};
  StagingBuffer device_grad_q{B::device}, device_weights{B::device};
  // The device loss path writes its gradient, TD errors and priorities on the device.
  ScratchBuffer device_grad_q_buffer{B::device}, device_td_buffer{B::device},
      device_priority_buffer{B::device};
  HostOutputs host_target{B::device}, host_online{B::device};
};
template <nn::Backend B>
class R2D2SequenceLoss {
 public:
  using Pass = R2D2Pass<B>;
  /// Whether the backend computes the targets, priorities and loss on its device (the CUDA
  /// backend), so the Q-values never leave it.
  static constexpr bool kLossOnDevice = requires { typename B::R2D2LossConfig; };

  R2D2SequenceLoss(const R2D2AgentOptions& options, const UnrollSpec& spec)
      : options_(options), spec_(spec), branches_(unroll_branches(spec)) {}

  /// Leading steps of a sequence that only warm up the LSTM state.
  std::int64_t burn_in() const { return spec_.overlap - 1; }

  /// Priorities the loss would give these sequences now (no gradient, nothing changes).
  template <std::ranges::random_access_range Range>
  Eigen::ArrayXf sequence_priorities(Pass& pass, const Range& sequences) const {
    return evaluate(pass, pass.stack(sequences), {}, false).priorities;
  }

  /// The priorities from the Q-values recorded while acting, as both networks' (no network runs).
  template <std::ranges::random_access_range Range>
  Eigen::ArrayXf actor_priorities(Pass& pass, const Range& sequences) const {
    SEEDRL_REQUIRE(spec_.store_behaviour,
                   "Learner<R2D2Agent>: the sequences do not record the acting Q-values");
    pass.stack(sequences);
    const std::int64_t length = spec_.length, burn = burn_in(), window = length - burn,
                       batch = pass.batch().flags.dim(1), actions = spec_.num_actions;
    const Transitions tr = pass.transitions(burn, window - 1, options_.max_abs_reward);
    const auto q = pass.batch()
                       .behaviour.slice(burn, length)
                       .reshape({window * batch, actions})
                       .template matrix<float>();
    const std::vector<std::uint8_t> legal = legal_actions(pass.batch(), branches_);
    return loss_of(pass, q, q, tr, {}, window_rows(legal)).priorities;
  }

  /// The loss with importance weights (empty: all 1), its gradients in the online network's.
  template <std::ranges::random_access_range Range>
  R2D2Loss loss_and_gradients(Pass& pass, const Range& sequences,
                              std::span<const float> weights) const {
    return evaluate(pass, pass.stack(sequences), weights, true);
  }

 private:
  R2D2LossOptions loss_options() const {
    const R2D2AgentOptions& o = options_;
    return {o.n_step, o.discount, o.value_rescaling, o.value_rescale_epsilon, o.priority_eta};
  }

  // The trained window's rows (from the burn-in on) of the batch's legal-action masks.
  std::span<const std::uint8_t> window_rows(const std::vector<std::uint8_t>& legal) const {
    if (legal.empty()) return {};
    const auto per_step = legal.size() / static_cast<std::size_t>(spec_.length);
    return std::span<const std::uint8_t>(legal).subspan(static_cast<std::size_t>(burn_in()) *
                                                        per_step);
  }

  // r2d2_loss of the window's transitions `tr`, per branch where the actions have branches.
  R2D2Loss loss_of(const Pass& pass, const math::ConstMatrixRef& q_online,
                   const math::ConstMatrixRef& q_target, const Transitions& tr,
                   std::span<const float> weights, std::span<const std::uint8_t> legal) const {
    if (branches_.count() <= 1)
      return r2d2_loss(q_online, q_target, tr.actions, tr.rewards, tr.dones, tr.mask, weights,
                       loss_options(), legal);
    std::vector<Eigen::ArrayXXi> actions;
    for (std::int64_t k = 0; k < branches_.count(); ++k)
      actions.push_back(branch_actions(pass.batch(), burn_in(), tr.mask.rows(), k));
    return r2d2_loss(q_online, q_target, actions, tr.rewards, tr.dones, tr.mask, weights,
                     loss_options(), legal, branches_);
  }

  using Inputs = typename LearnerPass<B>::NetworkInputs;

  // The loss of the stacked batch (see the top of the file); with `gradients` also backward.
  R2D2Loss evaluate(Pass& pass, const Inputs& in, std::span<const float> weights,
                    bool gradients) const {
    const std::int64_t length = spec_.length, burn = burn_in(), window = length - burn,
                       steps = window - 1, batch = pass.batch().flags.dim(1),
                       actions = spec_.num_actions;
    const Transitions tr = pass.transitions(burn, steps, options_.max_abs_reward);
    pass.policy_lag = tr.policy_lag;
    const auto [target_out, online_out] = forward_networks(pass, in);
    // The device's loss has no masks and no branches: those steps take the host's.
    const std::vector<std::uint8_t> legal = legal_actions(pass.batch(), branches_);
    if constexpr (kLossOnDevice) {
      if (legal.empty() && branches_.count() <= 1)
        return evaluate_on_device(pass, *target_out, *online_out, weights, gradients);
    }
    // On the host: the Q-values come back from the backend's device (no copy on the CPU).
    const auto q_target = pass.host_target(*target_out)
                              .q.slice(burn, length)
                              .reshape({window * batch, actions})
                              .template matrix<float>();
    const auto q_online =
        pass.host_online(*online_out).q.reshape({window * batch, actions}).template matrix<float>();
    R2D2Loss result = loss_of(pass, q_online, q_target, tr, weights, window_rows(legal));
    if (gradients) {
      const Tensor grad_q =
          Tensor::from_blob(result.grad_q.data(), {window, batch, actions}, DType::f32);
      pass.network().backward({.q = pass.device_grad_q(grad_q)});
    }
    return result;
  }

  // The target network over the whole sequence (burn-in included: it only warms the state up);
  // the online network's burn-in without gradient, then the trained window from its final state.
  // Returns both networks' outputs (views of their buffers, on the device).
  std::pair<const nn::NetworkOutputs*, const nn::NetworkOutputs*> forward_networks(
      Pass& pass, const Inputs& in) const {
    const std::int64_t length = spec_.length, burn = burn_in();
    nn::Network<B>& online = pass.network();
    const nn::NetworkOutputs& target =
        pass.target.forward(in.observations, in.initial_state, in.resets);
    nn::LstmState state = in.initial_state;
    if (burn > 0) {
      const nn::NetworkOutputs& warm = online.forward(in.observations.slice(0, burn),
                                                      in.initial_state, in.resets.slice(0, burn));
      if (warm.final_state.defined()) {
        state = {pass.burn_state_h.view(warm.final_state.h.shape()),
                 pass.burn_state_c.view(warm.final_state.c.shape())};
        state.h.copy_from(warm.final_state.h);
        state.c.copy_from(warm.final_state.c);
      }
    }
    const nn::NetworkOutputs& trained =
        online.forward(in.observations.slice(burn, length), state, in.resets.slice(burn, length));
    return {&target, &trained};
  }

  // evaluate() with the targets, TD errors, priorities and gradient computed on the device;
  // only the TD errors and priorities (a few hundred floats) come back. A member template, so
  // that the library's explicit instantiation for the CPU backend leaves it out.
  template <int = 0>
  R2D2Loss evaluate_on_device(Pass& pass, const nn::NetworkOutputs& target,
                              const nn::NetworkOutputs& online, std::span<const float> weights,
                              bool gradients) const {
    const R2D2AgentOptions& o = options_;
    const std::int64_t length = spec_.length, burn = burn_in(), window = length - burn,
                       steps = window - 1, batch = pass.batch().flags.dim(1);
    const auto fields = pass.device_fields();
    const Tensor device_weights =
        weights.empty() ? Tensor()
                        : pass.device_weights(Tensor::from_blob(const_cast<float*>(weights.data()),
                                                                {batch}, DType::f32));
    const Tensor grad_q = gradients ? pass.device_grad_q_buffer.view(online.q.shape()) : Tensor();
    const Tensor td = pass.device_td_buffer.view({steps, batch});
    const Tensor priorities = pass.device_priority_buffer.view({batch});
    typename B::R2D2LossConfig config;
    config.burn_in = burn;
    config.n_step = o.n_step;
    config.discount = o.discount;
    config.max_abs_reward = o.max_abs_reward;
    config.value_rescaling = o.value_rescaling;
    config.value_rescale_epsilon = o.value_rescale_epsilon;
    config.priority_eta = o.priority_eta;
    const auto terms =
        B::r2d2_loss(online.q, target.q.slice(burn, length), fields.actions, fields.rewards,
                     fields.flags, device_weights, config, grad_q, td, priorities);
    R2D2Loss result;
    result.loss = terms.loss;
    result.transitions = terms.transitions;
    result.mean_q =
        terms.transitions > 0 ? terms.raw_q_sum / static_cast<double>(terms.transitions) : 0.0;
    const Tensor host_td = td.clone(Device::cpu), host_priorities = priorities.clone(Device::cpu);
    result.td_errors =
        Eigen::Map<const Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
            host_td.data<float>(), static_cast<Eigen::Index>(steps),
            static_cast<Eigen::Index>(batch));
    result.priorities = host_priorities.flat<float>();
    if (gradients) pass.network().backward({.q = grad_q});
    return result;
  }

  const R2D2AgentOptions options_;
  const UnrollSpec spec_;
  const math::Branches branches_;  // the actions' branches
};

}  // namespace seedrl
