// Learner<VTraceAgent, Backend>: the V-trace learner of SEED RL.
//
//   B unrolls of T+1 steps ──stack──▶ [T+1, B] batch ──network──▶ logits, values
//     ──▶ V-trace targets (discounts cut at terminations; episode boundaries masked)
//     ──▶ actor-critic loss and its gradients ──backward──▶ global-norm clip ──▶ optimizer step
//     under SharedParameters::write(), version + 1: inference uses the new parameters at once.
//
// Step t of an unroll is the transition (x_t, a_t) -> (r_{t+1}, x_{t+1}). When x_t is the last
// observation of an episode, a_t was not executed and x_{t+1} starts a new episode: that step is
// a boundary. It gets reward V(x_t) and discount 0 (so V-trace's target there is V(x_t) itself
// and nothing crosses it) and weight 0 in the loss. A truncated episode therefore bootstraps
// from the value of its true final observation; a terminated one (discount 0) does not.
//
// Thread-safety: one thread calls step(); inference reads the parameters concurrently.
#pragma once

#include <atomic>
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "seedrl/algo/actor_critic_loss.hpp"
#include "seedrl/algo/vtrace.hpp"
#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/io/checkpoint.hpp"
#include "seedrl/nn/gradient_clipping.hpp"
#include "seedrl/nn/network.hpp"
#include "seedrl/nn/optimizer.hpp"
#include "seedrl/runtime/bounded_queue.hpp"
#include "seedrl/runtime/learner.hpp"
#include "seedrl/runtime/shared_parameters.hpp"
#include "seedrl/runtime/staging.hpp"
#include "seedrl/runtime/unroll.hpp"
#include "seedrl/runtime/vtrace_agent.hpp"

namespace seedrl {

/// The [T, B] inputs of V-trace and the loss from a batch of T+1-step unrolls and the learner's
/// values of all T+1 steps (`values` row t * B + b).
struct VTraceTransitions {
  Eigen::ArrayXXi actions;
  Eigen::ArrayXXf rewards;    ///< r_{t+1}, clipped; V(x_t) at boundaries
  Eigen::ArrayXXf discounts;  ///< gamma, 0 after a termination and at boundaries
  Eigen::ArrayXXf values;     ///< V(x_t)
  Eigen::ArrayXXf mask;       ///< 1 for a transition, 0 at an episode boundary
  Eigen::ArrayXf bootstrap;   ///< V(x_T)
};

inline VTraceTransitions vtrace_transitions(const UnrollBatch& batch, const float* values,
                                            float discount, float max_abs_reward) {
  const std::int64_t length = batch.flags.dim(0), b_size = batch.flags.dim(1), steps = length - 1;
  const std::uint8_t* flags = batch.flags.data<std::uint8_t>();
  const float* rewards = batch.rewards.data<float>();
  const std::int32_t* actions = batch.actions.data<std::int32_t>();
  VTraceTransitions tr{Eigen::ArrayXXi(steps, b_size), Eigen::ArrayXXf(steps, b_size),
                       Eigen::ArrayXXf(steps, b_size), Eigen::ArrayXXf(steps, b_size),
                       Eigen::ArrayXXf(steps, b_size), Eigen::ArrayXf(b_size)};
  for (std::int64_t b = 0; b < b_size; ++b) {
    tr.bootstrap(b) = values[steps * b_size + b];
    for (std::int64_t t = 0; t < steps; ++t) {
      const std::int64_t i = t * b_size + b;
      tr.actions(t, b) = actions[i];
      tr.values(t, b) = values[i];
      if (is_last(flags[i])) {  // x_t ended an episode; x_{t+1} starts the next: no transition
        tr.rewards(t, b) = values[i];
        tr.discounts(t, b) = 0.0f;
        tr.mask(t, b) = 0.0f;
        continue;
      }
      const float reward = rewards[i + b_size];
      tr.rewards(t, b) =
          max_abs_reward > 0.0f ? std::clamp(reward, -max_abs_reward, max_abs_reward) : reward;
      tr.discounts(t, b) = (flags[i + b_size] & step_flags::kTerminated) ? 0.0f : discount;
      tr.mask(t, b) = 1.0f;
    }
  }
  return tr;
}

template <nn::Backend B>
class Learner<VTraceAgent, B> {
 public:
  Learner(const VTraceAgent& agent, const UnrollSpec& spec,
          BoundedQueue<std::unique_ptr<Unroll>>& unrolls)
      : agent_(agent),
        spec_(spec),
        unrolls_(unrolls),
        network_(agent.network_config()),
        optimizer_(nn::make_optimizer<B>(network_.parameters(), agent.options().optimizer)),
        shared_(network_.parameters()) {
    SEEDRL_REQUIRE(spec.store_logits,
                   "Learner<VTraceAgent>: unrolls must store the behaviour logits");
    SEEDRL_REQUIRE(
        spec.overlap == 1,
        "Learner<VTraceAgent>: V-trace unrolls have no burn-in (overlap 1), got overlap ",
        spec.overlap);
    SEEDRL_REQUIRE(spec.state_size == agent.network_config().lstm_size,
                   "Learner<VTraceAgent>: unroll state size ", spec.state_size,
                   " differs from the network's LSTM size ", agent.network_config().lstm_size);
  }

  nn::Network<B>& network() { return network_; }
  SharedParameters& parameters() { return shared_; }
  nn::Optimizer& optimizer() { return *optimizer_; }
  const VTraceAgent& agent() const { return agent_; }
  /// Updates applied so far; may be read from any thread.
  std::int64_t steps() const { return steps_.load(); }

  /// Waits for batch_size unrolls and trains on them; nothing once the queue is closed and empty.
  std::optional<LearnerStepStats> step() {
    if (!unrolls_.pop_many(static_cast<std::size_t>(agent_.options().batch_size), batch_unrolls_))
      return std::nullopt;
    return train_on(batch_unrolls_);
  }

  /// One update from these unrolls (all of the learner's UnrollSpec).
  LearnerStepStats train_on(std::span<const std::unique_ptr<Unroll>> unrolls) {
    const VTraceAgentOptions& o = agent_.options();
    const std::int64_t version_before = steps_;
    batch_.stack(unrolls, spec_);
    const std::int64_t length = spec_.length, steps = length - 1,
                       batch = static_cast<std::int64_t>(unrolls.size());
    const std::int64_t num_actions = spec_.num_actions;
    const Tensor resets = reset_buffer_.view({length, batch}, DType::u8);
    for (std::int64_t i = 0; i < length * batch; ++i) {
      resets.data<std::uint8_t>()[i] = is_first(batch_.flags.data<std::uint8_t>()[i]) ? 1 : 0;
    }
    if constexpr (kLossOnDevice) return train_on_device(resets, version_before);
    const nn::NetworkOutputs& out = host_outputs_(network_.forward(
        device_observations_(batch_.observations), device_state_(batch_.initial_state), resets));

    const VTraceTransitions tr =
        vtrace_transitions(batch_, out.values.data<float>(), o.discount, o.max_abs_reward);
    const Eigen::ArrayXXi& actions = tr.actions;
    const Eigen::ArrayXXf& mask = tr.mask;
    const auto target_logits = out.logits.reshape({length * batch, num_actions})
                                   .template matrix<float>()
                                   .topRows(steps * batch);
    const auto behaviour_logits = batch_.logits.reshape({length * batch, num_actions})
                                      .template matrix<float>()
                                      .topRows(steps * batch);
    const Eigen::ArrayXXf log_rhos =
        (action_log_probs(target_logits, actions) - action_log_probs(behaviour_logits, actions)) *
        mask;
    const VTraceReturns targets =
        vtrace(log_rhos, tr.discounts, tr.rewards, tr.values, tr.bootstrap, o.vtrace);
    const ActorCriticLoss loss =
        actor_critic_loss(target_logits, actions, tr.values, targets, o.loss, &mask);

    // Gradients of the loss w.r.t. the outputs of all T + 1 steps (the last only bootstraps).
    const Tensor grad_logits = grad_logits_buffer_.view({length, batch, num_actions});
    const Tensor grad_values = grad_values_buffer_.view({length, batch});
    grad_logits.fill_zero();
    grad_values.fill_zero();
    grad_logits.reshape({length * batch, num_actions})
        .template matrix<float>()
        .topRows(steps * batch) = loss.grad_logits;
    for (std::int64_t t = 0; t < steps; ++t)
      for (std::int64_t b = 0; b < batch; ++b)
        grad_values.data<float>()[t * batch + b] = loss.grad_values(t, b);
    network_.backward(
        {.logits = device_grad_logits_(grad_logits), .values = device_grad_values_(grad_values)});

    return finish_step(loss, version_before);
  }

  /// Whether the backend computes V-trace and the loss on its device (the CUDA backend), so the
  /// network's outputs never leave it.
  static constexpr bool kLossOnDevice =
      requires(const Tensor& t, const VTraceOptions& v, const ActorCriticLossOptions& l) {
    B::vtrace_loss(t, t, t, t, t, t, 0.0f, 0.0f, v, l, t, t);
  };

  /// Saves parameters, optimizer state and `counters` (learner_steps is taken from this learner).
  void save_checkpoint(const std::string& path, io::CheckpointCounters counters) {
    counters.learner_steps = steps_;
    auto guard = shared_.read();  // no update while the values are copied out
    io::save_checkpoint(path, network_.parameters(), optimizer_.get(), counters,
                        checkpoint_metadata());
  }

  /// Restores a checkpoint written by save_checkpoint for the same network and optimizer.
  io::CheckpointCounters load_checkpoint(const std::string& path) {
    auto guard = shared_.write();
    const io::CheckpointCounters counters =
        io::load_checkpoint(path, network_.parameters(), optimizer_.get(), checkpoint_metadata());
    steps_ = counters.learner_steps;
    shared_.publish(steps_);
    return counters;
  }

  /// What a checkpoint must agree on to be loaded by this learner.
  io::Metadata checkpoint_metadata() const {
    return {{"agent", "vtrace"}, {"network", nn::describe(agent_.network_config())}};
  }

 private:
  // The update after backward, and the step's statistics from the loss terms (host or device).
  template <class Terms>
  LearnerStepStats finish_step(const Terms& terms, std::int64_t version_before) {
    const VTraceAgentOptions& o = agent_.options();
    LearnerStepStats stats = apply_update<B>(network_.parameters(), *optimizer_, shared_, steps_,
                                             o.max_grad_norm, o.learning_rate, [] {});
    stats.total_loss = terms.total_loss;
    stats.policy_loss = terms.policy_loss;
    stats.baseline_loss = terms.baseline_loss;
    stats.entropy_loss = terms.entropy_loss;
    stats.entropy = terms.mean_entropy;
    count_transitions(stats, version_before);
    return stats;
  }

  // Counts the transitions (episode boundaries excluded) and the mean policy lag over them.
  void count_transitions(LearnerStepStats& stats, std::int64_t version_before) const {
    const std::int64_t steps = spec_.length - 1, batch = batch_.flags.dim(1);
    const std::uint8_t* flags = batch_.flags.data<std::uint8_t>();
    double lag = 0.0;
    stats.transitions = 0;
    for (std::int64_t i = 0; i < steps * batch; ++i) {
      if (is_last(flags[i])) continue;
      lag += static_cast<double>(version_before - batch_.policy_versions.data<std::int32_t>()[i]);
      ++stats.transitions;
    }
    stats.policy_lag = stats.transitions ? lag / static_cast<double>(stats.transitions) : 0.0;
  }

  // The step with V-trace and the loss on the backend's device.
  LearnerStepStats train_on_device(const Tensor& resets, std::int64_t version_before) {
    const VTraceAgentOptions& o = agent_.options();
    const std::int64_t num_actions = spec_.num_actions;
    const std::int32_t* actions = batch_.actions.data<std::int32_t>();
    for (std::int64_t i = 0; i < batch_.actions.numel(); ++i) {  // the kernels index with them
      SEEDRL_REQUIRE(actions[i] >= 0 && actions[i] < num_actions, "Learner<VTraceAgent>: action ",
                     actions[i], " out of range [0, ", num_actions, ") in the batch");
    }
    const nn::NetworkOutputs& out = network_.forward(device_observations_(batch_.observations),
                                                     device_state_(batch_.initial_state), resets);
    const Tensor grad_logits = device_grad_buffer_logits_.view(out.logits.shape());
    const Tensor grad_values = device_grad_buffer_values_.view(out.values.shape());
    grad_logits.fill_zero();
    grad_values.fill_zero();
    const auto terms =
        B::vtrace_loss(out.logits, out.values, device_behaviour_logits_(batch_.logits),
                       device_actions_(batch_.actions), device_rewards_(batch_.rewards),
                       device_flags_(batch_.flags), o.discount, o.max_abs_reward, o.vtrace, o.loss,
                       grad_logits, grad_values);
    network_.backward({.logits = grad_logits, .values = grad_values});
    return finish_step(terms, version_before);
  }

  const VTraceAgent agent_;  // a copy: the caller's agent may be a temporary
  UnrollSpec spec_;
  BoundedQueue<std::unique_ptr<Unroll>>& unrolls_;
  nn::Network<B> network_;
  std::unique_ptr<nn::Optimizer> optimizer_;
  SharedParameters shared_;
  std::atomic<std::int64_t> steps_{0};  // read by reporting threads
  std::vector<std::unique_ptr<Unroll>> batch_unrolls_;
  UnrollBatch batch_;
  ScratchBuffer reset_buffer_, grad_logits_buffer_, grad_values_buffer_;
  // The batch goes to the backend's device and the outputs come back (no copies on the CPU).
  StagingBuffer device_observations_{B::device}, device_grad_logits_{B::device},
      device_grad_values_{B::device};
  // The device loss path: the unrolls' other fields, and gradient buffers on the device.
  StagingBuffer device_behaviour_logits_{B::device}, device_actions_{B::device},
      device_rewards_{B::device}, device_flags_{B::device};
  ScratchBuffer device_grad_buffer_logits_{B::device}, device_grad_buffer_values_{B::device};
  StateStaging device_state_{B::device};
  HostOutputs host_outputs_{B::device};
};

}  // namespace seedrl
