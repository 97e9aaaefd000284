// Learner<VTraceAgent, Backend>: the V-trace learner of SEED RL: its loss and its data path on
// LearnerCore (learner/learner_core.hpp), which does the update, checkpoints and metrics.
//
//   B unrolls of T+1 steps ──stack──▶ [T+1, B] batch ──network──▶ logits, values
//     ──▶ V-trace targets (discounts cut at terminations; episode boundaries masked)
//     ──▶ actor-critic loss and its gradients ──backward──▶ LearnerCore::finish_step
//
// At an episode boundary (learner/transitions.hpp) V-trace gets reward V(x_t) and discount 0, so
// its target there is V(x_t) itself and nothing crosses it, and the loss gives it weight 0.
//
// Thread-safety: one thread calls step(); inference reads the parameters concurrently.
#pragma once

#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "seedrl/agents/vtrace/agent.hpp"
#include "seedrl/algo/actor_critic_loss.hpp"
#include "seedrl/algo/vtrace.hpp"
#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/learner/lag_bounded_batch.hpp"
#include "seedrl/learner/learner_core.hpp"
#include "seedrl/learner/policy_terms.hpp"
#include "seedrl/learner/transitions.hpp"
#include "seedrl/shared/staging.hpp"

namespace seedrl {

template <nn::Backend B>
class Learner<VTraceAgent, B> final : public LearnerCore<B> {
  using Core = LearnerCore<B>;

 public:
  Learner(const VTraceAgent& agent, const UnrollSpec& spec, UnrollQueue& unrolls)
      : Core(VTraceAgent::kName, agent.options(), spec, kMetrics, agent.evaluation_acting()),
        agent_(agent),
        unrolls_(unrolls) {
    SEEDRL_REQUIRE(spec.store_behaviour,
                   "Learner<VTraceAgent>: unrolls must store the behaviour logits");
    SEEDRL_REQUIRE(
        spec.overlap == 1,
        "Learner<VTraceAgent>: V-trace unrolls have no burn-in (overlap 1), got overlap ",
        spec.overlap);
    SEEDRL_REQUIRE(
        !spec.box_actions() || !agent.options().loss.has_entropy_ceiling(),
        "Learner<VTraceAgent>: loss.entropy_ceiling ", agent.options().loss.entropy_ceiling,
        " applies to discrete actions; a Gaussian policy has no maximum entropy (use 1)");
  }

  const VTraceAgent& agent() const { return agent_; }

  /// Waits for batch_unrolls() unrolls and trains on them; nothing once the queue is closed and
  /// empty.
  std::optional<LearnerStepStats> step() {
    if (!unrolls_.pop_many(static_cast<std::size_t>(batch_.size()), batch_unrolls_))
      return std::nullopt;
    std::int32_t oldest = std::numeric_limits<std::int32_t>::max();
    for (const std::unique_ptr<Unroll>& u : batch_unrolls_)
      oldest = std::min(oldest, u->policy_versions.template data<std::int32_t>()[0]);
    lag_max_.store(static_cast<double>(this->steps() - oldest), std::memory_order_relaxed);
    LearnerStepStats stats = train_on(batch_unrolls_);
    batch_.observe(stats.metrics["policy_lag"]);
    return stats;
  }

  /// Unrolls the next step takes: batch_size, or more while the policy lag is over its target.
  std::int64_t batch_unrolls() const { return batch_.size(); }

  /// Read at every report (any thread): the unrolls a step takes, and the lag of the last step's
  /// oldest step (the mean is the step metric policy_lag).
  std::vector<Metric> gauges() const {
    return {
        {{"unrolls_per_step", Reduce::last, "batch"}, static_cast<double>(batch_.size())},
        {{"policy_lag_max", Reduce::last, "lag max"}, lag_max_.load(std::memory_order_relaxed)}};
  }

  /// Whether the backend computes V-trace and the loss on its device (the CUDA backend), so the
  /// network's outputs never leave it.
  static constexpr bool kLossOnDevice =
      requires(const Tensor& t, const VTraceOptions& v, const ActorCriticLossOptions& l) {
    B::vtrace_loss(t, t, t, t, t, t, 0.0f, 0.0f, v, l, t, t);
  };

  /// One update from these unrolls (all of the learner's UnrollSpec), in micro-batches over the
  /// learner's workers when set_workers asked for them.
  LearnerStepStats train_on(std::span<const std::unique_ptr<Unroll>> unrolls) {
    return this->finish_step(this->template gradients<Pass>(
        static_cast<std::int64_t>(unrolls.size()),
        [&](Pass& pass, std::int64_t first, std::int64_t count) {
          return gradients_of(pass, unrolls.subspan(static_cast<std::size_t>(first),
                                                    static_cast<std::size_t>(count)));
        }));
  }

 protected:
  // Every term of the loss is a mean over the transitions, so micro-batches combine exactly.
  bool splits_batches() const override { return true; }

  // A pass of this learner: the core's, with the box path's and the device loss's buffers.
  struct Pass final : LearnerPass<B> {
    using LearnerPass<B>::LearnerPass;
    // The device loss writes its gradients there.
    ScratchBuffer device_grad_logits_buffer{B::device}, device_grad_values_buffer{B::device};
    // The host path's gradients (a box policy's mean, or masked logits), built on the host and
    // copied to the device once.
    ScratchBuffer grad_policy, grad_log_std, grad_values;
    StagingBuffer device_grad_policy{B::device}, device_grad_log_std{B::device},
        device_grad_values{B::device};
    HostOutputs host_outputs{B::device};
  };
  std::unique_ptr<LearnerPass<B>> make_pass(NetworkSet<B>& networks) override {
    return std::make_unique<Pass>(networks, this->pass_context());
  }

 private:
  using Inputs = typename LearnerPass<B>::NetworkInputs;

  // The loss of these unrolls and its gradients in `pass`'s networks.
  typename Core::Gradients gradients_of(Pass& pass,
                                        std::span<const std::unique_ptr<Unroll>> unrolls) const {
    const VTraceAgentOptions& o = agent_.options();
    const auto in = pass.stack(unrolls);
    const std::int64_t length = this->spec().length, steps = length - 1,
                       batch = static_cast<std::int64_t>(unrolls.size()),
                       num_actions = this->spec().num_actions;
    const Transitions tr = pass.transitions(0, steps, o.max_abs_reward);
    const math::Branches branches = unroll_branches(this->spec());
    const std::vector<std::uint8_t> legal = legal_actions(pass.batch(), branches);
    if (this->spec().box_actions() || !legal.empty() || branches.count() > 1)
      return train_with_terms(pass, in, tr, legal, branches);
    if constexpr (kLossOnDevice) return train_on_device(pass, in, tr);
    const nn::NetworkOutputs& out =
        pass.host_outputs(pass.network().forward(in.observations, in.initial_state, in.resets));
    const VTraceInputs v = vtrace_inputs(tr, out.values.data<float>(), o.discount);
    const auto target_logits = out.logits.reshape({length * batch, num_actions})
                                   .template matrix<float>()
                                   .topRows(steps * batch);
    const auto behaviour_logits = pass.batch()
                                      .behaviour.reshape({length * batch, num_actions})
                                      .template matrix<float>()
                                      .topRows(steps * batch);
    const Eigen::ArrayXXf log_rhos = (action_log_probs(target_logits, tr.actions) -
                                      action_log_probs(behaviour_logits, tr.actions)) *
                                     tr.mask;
    const VTraceReturns targets =
        vtrace(log_rhos, v.discounts, v.rewards, v.values, v.bootstrap, o.vtrace);
    const ActorCriticLoss loss =
        actor_critic_loss(target_logits, tr.actions, v.values, targets, o.loss, &tr.mask);

    pass.backward_policy_value(loss.grad_logits, loss.grad_values);
    return result(loss, tr);
  }

  static constexpr MetricInfo kMetrics[] = {
      {"total_loss", Reduce::mean, "loss"}, {"policy_loss"}, {"baseline_loss"}, {"entropy_loss"},
      {"entropy", Reduce::mean, "entropy"},
  };

  // Box actions (a Gaussian policy) and masked or branched discrete ones (a categorical per
  // branch over its legal actions), on the host: the same V-trace targets and actor-critic loss
  // from the log-probabilities of the actions taken under the learner's policy and the recorded
  // behaviour policy (both masked alike), the gradients chained through the distribution.
  typename Core::Gradients train_with_terms(Pass& pass, const Inputs& in, const Transitions& tr,
                                            std::span<const std::uint8_t> legal,
                                            const math::Branches& branches) const {
    const VTraceAgentOptions& o = agent_.options();
    const bool box = this->spec().box_actions();
    const std::int64_t steps = this->spec().length - 1, batch = tr.mask.cols();
    const nn::NetworkOutputs& out =
        pass.host_outputs(pass.network().forward(in.observations, in.initial_state, in.resets));
    const VTraceInputs v = vtrace_inputs(tr, out.values.data<float>(), o.discount);
    const Tensor& policy_out = box ? out.mean : out.logits;
    const Tensor policy = policy_out.slice(0, steps),
                 log_std = box ? out.log_std.slice(0, steps) : Tensor();
    const Tensor actions = pass.batch().actions.slice(0, steps);
    const PolicyTerms target = policy_terms(policy, log_std, actions, legal, branches);
    const Eigen::ArrayXf behaviour = behaviour_log_probs(pass.batch(), steps, legal, branches);
    using TimeMajor = Eigen::Map<const Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic,
                                                    Eigen::RowMajor>>;  // frame t * B + b
    const Eigen::ArrayXXf log_probs = TimeMajor(target.log_probs.data(), steps, batch);
    const Eigen::ArrayXXf log_rhos =
        (log_probs - TimeMajor(behaviour.data(), steps, batch)) * tr.mask;
    const VTraceReturns targets =
        vtrace(log_rhos, v.discounts, v.rewards, v.values, v.bootstrap, o.vtrace);
    Eigen::ArrayXXf max_entropy;
    if (!box && o.loss.has_entropy_ceiling()) {
      const Eigen::VectorXf all =
          math::max_branch_entropy(legal, this->spec().length * batch, branches);
      max_entropy = TimeMajor(all.data(), steps, batch);
    }
    const ActorCriticTerms loss = actor_critic_loss_terms(
        log_probs, TimeMajor(target.entropy.data(), steps, batch), v.values, targets, o.loss,
        &tr.mask, max_entropy.size() > 0 ? &max_entropy : nullptr);

    // Gradients [L, B, ...]: the last step only bootstraps.
    const Tensor grad_policy = pass.grad_policy.view(policy_out.shape());
    const Tensor grad_log_std = box ? pass.grad_log_std.view(out.log_std.shape()) : Tensor();
    const Tensor grad_values = pass.grad_values.view(out.values.shape());
    grad_policy.fill_zero();
    if (box) grad_log_std.fill_zero();
    grad_values.fill_zero();
    const Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>
        g_lp = loss.grad_log_probs,
        g_entropy = loss.grad_entropy, g_values = loss.grad_values;
    policy_terms_backward(policy, log_std, actions,
                          Eigen::Map<const Eigen::ArrayXf>(g_lp.data(), g_lp.size()),
                          Eigen::Map<const Eigen::ArrayXf>(g_entropy.data(), g_entropy.size()),
                          grad_policy.slice(0, steps),
                          box ? grad_log_std.slice(0, steps) : Tensor(), legal, branches);
    std::memcpy(grad_values.data<float>(), g_values.data(),
                static_cast<std::size_t>(g_values.size()) * sizeof(float));
    nn::NetworkGrads grads{.values = pass.device_grad_values(grad_values)};
    if (box) {
      grads.mean = pass.device_grad_policy(grad_policy);
      grads.log_std = pass.device_grad_log_std(grad_log_std);
    } else {
      grads.logits = pass.device_grad_policy(grad_policy);
    }
    pass.network().backward(grads);
    return result(loss, tr);
  }

  // What a pass leaves besides the gradients, with the loss terms (computed on the host or the
  // device): every term is a mean over the transitions.
  template <class Terms>
  static typename Core::Gradients result(const Terms& terms, const Transitions& tr) {
    return {.values = {terms.total_loss, terms.policy_loss, terms.baseline_loss, terms.entropy_loss,
                       terms.mean_entropy},
            .value_weights = {},
            .weight = static_cast<double>(tr.count),
            .transitions = tr.count,
            .policy_lag = tr.policy_lag};
  }

  // The step with V-trace and the loss on the backend's device. A member template, so that the
  // library's explicit instantiation for the CPU backend leaves it out.
  template <int = 0>
  typename Core::Gradients train_on_device(Pass& pass, const Inputs& in,
                                           const Transitions& tr) const {
    const VTraceAgentOptions& o = agent_.options();
    const auto fields = pass.device_fields();
    const nn::NetworkOutputs& out =
        pass.network().forward(in.observations, in.initial_state, in.resets);
    const Tensor grad_logits = pass.device_grad_logits_buffer.view(out.logits.shape());
    const Tensor grad_values = pass.device_grad_values_buffer.view(out.values.shape());
    grad_logits.fill_zero();
    grad_values.fill_zero();
    const auto terms = B::vtrace_loss(out.logits, out.values, fields.behaviour, fields.actions,
                                      fields.rewards, fields.flags, o.discount, o.max_abs_reward,
                                      o.vtrace, o.loss, grad_logits, grad_values);
    pass.network().backward({.logits = grad_logits, .values = grad_values});
    return result(terms, tr);
  }

  const VTraceAgent agent_;  // a copy: the caller's agent may be a temporary
  UnrollQueue& unrolls_;
  std::vector<std::unique_ptr<Unroll>> batch_unrolls_;
  LagBoundedBatch batch_{agent_.options().batch_size, agent_.options().target_policy_lag,
                         agent_.options().max_batch_multiple};
  std::atomic<double> lag_max_{0.0};
};

// The V-trace runtime on the CPU backend is compiled once, in the library
// (src/agents/vtrace_learner.cpp): programs that train VTraceAgent on the CPU do not instantiate
// it again.
extern template class Learner<VTraceAgent, cpu::Backend>;

}  // namespace seedrl
