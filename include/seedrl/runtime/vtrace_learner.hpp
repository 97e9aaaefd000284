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

    LearnerStepStats stats = apply_update<B>(network_.parameters(), *optimizer_, shared_, steps_,
                                             o.max_grad_norm, o.learning_rate, [] {});
    stats.total_loss = loss.total_loss;
    stats.policy_loss = loss.policy_loss;
    stats.baseline_loss = loss.baseline_loss;
    stats.entropy_loss = loss.entropy_loss;
    stats.entropy = loss.mean_entropy;
    double lag = 0.0;
    for (std::int64_t t = 0; t < steps; ++t)
      for (std::int64_t b = 0; b < batch; ++b) {
        if (mask(t, b) == 0.0f) continue;
        lag += static_cast<double>(version_before -
                                   batch_.policy_versions.data<std::int32_t>()[t * batch + b]);
        ++stats.transitions;
      }
    stats.policy_lag = stats.transitions ? lag / static_cast<double>(stats.transitions) : 0.0;
    return stats;
  }

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
  StateStaging device_state_{B::device};
  HostOutputs host_outputs_{B::device};
};

}  // namespace seedrl
