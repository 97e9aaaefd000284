// Learner<PpoAgent, Backend>: PPO's data path and loss on LearnerCore (learner/learner_core.hpp),
// which does the update, checkpoints and metrics.
//
//   B unrolls of T+1 steps ──drop the stale (max_policy_lag)──▶ stack ──network──▶ V(x_t)
//     ──▶ GAE(lambda) advantages and value targets over the [T, B] transitions (boundaries carry
//         nothing, truncated episodes bootstrap; learner/transitions.hpp), the behaviour
//         policy's log-probabilities from what inference recorded
//         and, with proximal_policy (decoupled PPO), the current network's log-probabilities of
//         the actions (the proximal policy the ratio is clipped around) and the weights
//         min(pi_prox / mu, max_behaviour_weight)
//     ──▶ epochs x shuffled minibatches of transitions, one update each:
//         network ──▶ log pi(a|x), entropy, V ──▶ ppo_loss ──▶ gradients through the
//         distribution (Categorical or DiagGaussian) ──backward──▶ LearnerCore::finish_step
//
// Each step() is one minibatch update; a new batch is taken when the epochs of the last are done.
// The "old" values of the value clip are the network's at the start of the batch (the learner
// recomputes them; inference does not record values). Computed on the host (the network runs on
// the backend's device).
//
// Thread-safety: one thread calls step(); inference reads the parameters concurrently.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "seedrl/agents/ppo/agent.hpp"
#include "seedrl/algo/gae.hpp"
#include "seedrl/algo/ppo_loss.hpp"
#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/learner/learner_core.hpp"
#include "seedrl/learner/policy_terms.hpp"
#include "seedrl/learner/transitions.hpp"
#include "seedrl/shared/staging.hpp"

namespace seedrl {

/// What PPO trains on from one stacked batch, per transition. Arrays are indexed by the flat row
/// t * B + b of the [T, B] transitions; `rows` lists the rows that are transitions (boundaries
/// are not).
struct PpoTargets {
  std::vector<std::int64_t> rows;
  Eigen::ArrayXf advantages;     ///< GAE(lambda)
  Eigen::ArrayXf returns;        ///< advantages + old values
  Eigen::ArrayXf old_values;     ///< V(x_t) at the start of the batch
  Eigen::ArrayXf old_log_probs;  ///< log mu(a_t | x_t) of the behaviour policy
  /// What the ratio is taken against: the proximal policy's log-probabilities (decoupled PPO),
  /// or old_log_probs.
  Eigen::ArrayXf anchor_log_probs;
  Eigen::ArrayXf weights;  ///< min(pi_prox / mu, cap) (decoupled PPO); empty otherwise
  /// The steps' legal-action masks, u8 [L B, A] (legal_actions), or empty: both policies are
  /// the masked ones where they are given.
  std::vector<std::uint8_t> legal;
  /// The discrete actions' branches (empty: one branch; unused for a box).
  math::Branches branches;
};

/// `values`: the network's V over all T + 1 steps of `batch` (row t * B + b). The behaviour log-
/// probabilities come from the batch's recorded logits (discrete) or Gaussian mean and log std.
PpoTargets ppo_targets(const UnrollBatch& batch, const Transitions& tr, const float* values,
                       float discount, float lambda, const math::Branches& branches = {});

template <nn::Backend B>
class Learner<PpoAgent, B> final : public LearnerCore<B> {
  using Core = LearnerCore<B>;

 public:
  Learner(const PpoAgent& agent, const UnrollSpec& spec, UnrollQueue& unrolls)
      : Core(PpoAgent::kName, agent.options(), spec, kMetrics, PpoAgent::evaluation_acting()),
        agent_(agent),
        unrolls_(unrolls),
        rng_(agent.options().network.seed ^ 0x9e3779b97f4a7c15ull) {
    SEEDRL_REQUIRE(spec.store_behaviour,
                   "Learner<PpoAgent>: unrolls must store the behaviour policy");
    SEEDRL_REQUIRE(spec.overlap == 1,
                   "Learner<PpoAgent>: PPO unrolls have no burn-in (overlap 1), got overlap ",
                   spec.overlap);
    if (agent.options().synchronous) unrolls.acting().hold_after(agent.options().batch_size);
  }

  const PpoAgent& agent() const { return agent_; }
  /// Unrolls dropped for policy lag so far (any thread).
  std::int64_t dropped_unrolls() const { return dropped_.load(); }

  /// One minibatch update; takes (and waits for) a new batch when the last one's epochs are done.
  /// Nothing once the queue is closed and empty.
  std::optional<LearnerStepStats> step() {
    if (next_ >= order_.size()) {  // this epoch is done
      if (epochs_left_ > 1) {
        --epochs_left_;
        shuffle();
      } else if (!take_batch()) {
        return std::nullopt;
      }
    }
    return train_minibatch();
  }

  /// Trains the whole of PPO's work on these unrolls (all epochs and minibatches), as step()
  /// would on a batch of them; returns the last update's statistics (none when every unroll was
  /// dropped for lag or held no transition).
  std::optional<LearnerStepStats> train_on(std::span<const std::unique_ptr<Unroll>> unrolls) {
    std::vector<std::unique_ptr<Unroll>> copies;
    for (const auto& u : unrolls) copies.push_back(std::make_unique<Unroll>(*u));
    if (!prepare(std::move(copies))) return std::nullopt;
    std::optional<LearnerStepStats> last;
    while (true) {
      if (next_ >= order_.size()) {
        if (epochs_left_ <= 1) break;
        --epochs_left_;
        shuffle();
      }
      last = train_minibatch();
    }
    order_.clear();
    next_ = 0;
    epochs_left_ = 0;
    return last;
  }

 private:
  static constexpr MetricInfo kMetrics[] = {
      {"total_loss", Reduce::mean, "loss"},
      {"policy_loss"},
      {"value_loss"},
      {"entropy", Reduce::mean, "entropy"},
      {"approx_kl", Reduce::mean, "kl"},
      {"clip_fraction"},
      {"behaviour_weight"},
      {"dropped_unrolls", Reduce::last},
  };

  // Pops batch_size unrolls and prepares them; false once the queue is closed and empty.
  // Synchronous (PpoAgentOptions::synchronous): the push that completes a batch holds the actors
  // (the constructor's hold_after); asking for the next lets them act, unless it is queued.
  bool take_batch() {
    const bool synchronous = agent_.options().synchronous;
    while (true) {
      std::vector<std::unique_ptr<Unroll>> popped;
      if (synchronous) unrolls_.acting().release();
      if (!unrolls_.pop_many(static_cast<std::size_t>(agent_.options().batch_size), popped))
        return false;
      if (prepare(std::move(popped))) return true;
    }
  }

  // Drops stale unrolls, computes the targets of the rest and shuffles; false when nothing is
  // left to train on.
  bool prepare(std::vector<std::unique_ptr<Unroll>> unrolls) {
    const PpoAgentOptions& o = agent_.options();
    kept_.clear();
    const std::int64_t now = this->steps();
    for (auto& u : unrolls) {
      const std::int32_t* versions = u->policy_versions.template data<std::int32_t>();
      const std::int32_t oldest =
          *std::min_element(versions, versions + u->policy_versions.numel());
      if (o.max_policy_lag > 0 && now - oldest > o.max_policy_lag) {
        ++dropped_;
        continue;
      }
      kept_.push_back(std::move(u));
    }
    order_.clear();
    next_ = 0;
    if (kept_.empty()) return false;
    const auto in = this->pass().stack(kept_);
    const std::int64_t steps = this->spec().length - 1;
    transitions_ = this->pass().transitions(0, steps, o.max_abs_reward);
    if (transitions_.count == 0) return false;
    const nn::NetworkOutputs& out =
        host_outputs_(this->network().forward(in.observations, in.initial_state, in.resets));
    targets_ = ppo_targets(this->pass().batch(), transitions_, out.values.template data<float>(),
                           o.discount, o.lambda, branches());
    if (o.proximal_policy) {
      const bool box = this->spec().box_actions();
      const Eigen::Index n = targets_.old_log_probs.size();
      targets_.anchor_log_probs =
          policy_terms(box ? out.mean : out.logits, out.log_std, this->pass().batch().actions,
                       targets_.legal, targets_.branches)
              .log_probs.head(n);
      targets_.weights =
          (targets_.anchor_log_probs - targets_.old_log_probs).exp().min(o.max_behaviour_weight);
    } else {
      targets_.anchor_log_probs = targets_.old_log_probs;
      targets_.weights.resize(0);
    }
    order_ = targets_.rows;
    epochs_left_ = o.epochs;
    shuffle();
    return true;
  }

  // The action branches where there are several (empty otherwise: one, or a box).
  math::Branches branches() const {
    return this->spec().action_branches() > 0 ? unroll_branches(this->spec()) : math::Branches();
  }

  void shuffle() {
    std::shuffle(order_.begin(), order_.end(), rng_);
    next_ = 0;
  }

  // One update on the next minibatch of order_.
  LearnerStepStats train_minibatch() {
    const PpoAgentOptions& o = agent_.options();
    const std::size_t first = next_;
    const std::size_t count =
        std::min(order_.size() - first, static_cast<std::size_t>(o.minibatch_size));
    next_ += count;
    const auto m = static_cast<std::int64_t>(count);
    const UnrollSpec& spec = this->spec();
    const UnrollBatch& batch = this->pass().batch();

    // Gather the minibatch's observations [1, M, obs...] and actions on the host.
    const Tensor observations =
        observations_.view(spec.observation.shape.prepend({1, m}), spec.observation.dtype);
    const Tensor actions = actions_.view(spec.action_shape().prepend({m}), spec.action_dtype());
    const std::size_t obs_bytes = observations.bytes() / count,
                      action_bytes = actions.bytes() / count;
    const auto* all_obs = static_cast<const char*>(batch.observations.raw_data());
    const auto* all_actions = static_cast<const char*>(batch.actions.raw_data());
    for (std::size_t i = 0; i < count; ++i) {
      const auto row = static_cast<std::size_t>(order_[first + i]);
      std::memcpy(static_cast<char*>(observations.raw_data()) + i * obs_bytes,
                  all_obs + row * obs_bytes, obs_bytes);
      std::memcpy(static_cast<char*>(actions.raw_data()) + i * action_bytes,
                  all_actions + row * action_bytes, action_bytes);
    }
    // The minibatch's legal-action masks, where the steps carry them.
    const std::size_t width =
        targets_.legal.empty() ? 0 : targets_.legal.size() / batch.flags.numel();
    legal_.resize(count * width);
    for (std::size_t i = 0; i < count && width > 0; ++i)
      std::memcpy(legal_.data() + i * width,
                  targets_.legal.data() + static_cast<std::size_t>(order_[first + i]) * width,
                  width);
    const bool weighted = targets_.weights.size() > 0;
    Eigen::ArrayXf advantages(m), returns(m), old_values(m), anchor_log_probs(m),
        weights(weighted ? m : 0);
    for (std::int64_t i = 0; i < m; ++i) {
      const std::int64_t row = order_[first + static_cast<std::size_t>(i)];
      advantages(i) = targets_.advantages(row);
      returns(i) = targets_.returns(row);
      old_values(i) = targets_.old_values(row);
      anchor_log_probs(i) = targets_.anchor_log_probs(row);
      if (weighted) weights(i) = targets_.weights(row);
    }

    const nn::NetworkOutputs& out =
        host_outputs_(this->network().forward(device_observations_(observations)));
    const bool box = spec.box_actions();
    const Tensor& policy_out = box ? out.mean : out.logits;
    const PolicyTerms policy =
        policy_terms(policy_out, out.log_std, actions, legal_, targets_.branches);
    const Eigen::Map<const Eigen::ArrayXf> values(out.values.template data<float>(), m);
    const PpoLoss loss = ppo_loss(policy.log_probs, anchor_log_probs, advantages, values,
                                  old_values, returns, policy.entropy, o.loss, weights);

    // Gradients on the host, then one copy each to the device.
    const Tensor grad_policy = grad_policy_.view(policy_out.shape());
    const Tensor grad_log_std = box ? grad_log_std_.view(out.log_std.shape()) : Tensor();
    const Tensor grad_values = grad_values_.view(out.values.shape());
    policy_terms_backward(policy_out, out.log_std, actions, loss.grad_log_probs, loss.grad_entropy,
                          grad_policy, grad_log_std, legal_, targets_.branches);
    grad_values.flat<float>() = loss.grad_values;
    nn::NetworkGrads grads;
    (box ? grads.mean : grads.logits) = device_grad_policy_(grad_policy);
    if (box) grads.log_std = device_grad_log_std_(grad_log_std);
    grads.values = device_grad_values_(grad_values);
    this->network().backward(grads);

    double lag = 0.0;
    for (std::int64_t i = 0; i < m; ++i) {
      const std::int64_t row = order_[first + static_cast<std::size_t>(i)];
      lag += static_cast<double>(this->steps() -
                                 batch.policy_versions.template data<std::int32_t>()[row]);
    }
    const double metrics[] = {loss.total,
                              loss.policy,
                              loss.value,
                              loss.entropy,
                              loss.approx_kl,
                              loss.clip_fraction,
                              weighted ? static_cast<double>(weights.mean()) : 1.0,
                              static_cast<double>(dropped_.load())};
    return this->finish_step(metrics, m, lag / static_cast<double>(m), true, [] {});
  }

  const PpoAgent agent_;  // a copy: the caller's agent may be a temporary
  UnrollQueue& unrolls_;
  Rng rng_;  // minibatch shuffles
  std::atomic<std::int64_t> dropped_{0};

  // The batch being trained on: its unrolls, transitions, targets, the shuffled transition order,
  // the next position in it and the epochs left (this one included).
  std::vector<std::unique_ptr<Unroll>> kept_;
  Transitions transitions_;
  PpoTargets targets_;
  std::vector<std::uint8_t> legal_;  // the minibatch's legal-action masks (empty: none)
  std::vector<std::int64_t> order_;
  std::size_t next_ = 0;
  std::int64_t epochs_left_ = 0;

  ScratchBuffer observations_, actions_, grad_policy_, grad_log_std_, grad_values_;
  StagingBuffer device_observations_{B::device}, device_grad_policy_{B::device},
      device_grad_log_std_{B::device}, device_grad_values_{B::device};
  HostOutputs host_outputs_{B::device};
};

// The PPO runtime on the CPU backend is compiled once, in the library
// (src/agents/ppo_learner.cpp).
extern template class Learner<PpoAgent, cpu::Backend>;

}  // namespace seedrl
