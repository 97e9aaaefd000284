// Learner<R2D2Agent, Backend>: the R2D2 learner of SEED RL.
//
//   unroll queue ──▶ priorities of the new sequences (online + target forward, no gradient)
//                ──▶ ReplayBuffer<Unroll> (prioritized, FIFO eviction)
//   when the buffer holds min_replay_size sequences and fewer than replay_ratio x inserted have
//   been sampled:
//     sample B sequences (importance weights w) ──▶ online net: burn-in steps (no gradient: the
//     LSTM state after them enters the trained window as a constant), then the T + 1 trained steps
//     ──▶ target net on all steps ──▶ n-step double-Q targets h(y) ──▶ loss
//     (1/B) sum_b w_b sum_t 0.5 delta_t^2 ──▶ backward ──▶ clip ──▶ optimizer step (published to
//     inference at once) ──▶ new priorities eta max|delta| + (1 - eta) mean|delta| to the buffer
//     ──▶ every target_update_period steps the target network becomes a copy of the online one.
//
// A sequence holds burn_in + T + 1 steps (UnrollSpec: length, overlap = burn_in + 1), its stored
// recurrent state is the one inference had before step 0. Step t of the trained window is the
// transition (x_t, a_t) -> (r_{t+1}, x_{t+1}). When x_t is the last observation of an episode the
// step is a boundary (no transition): masked out of the loss, and for the n-step windows of
// earlier steps it carries reward Q(x_t) and ends the window, so a truncated episode bootstraps
// from its true final observation and a terminated one (d = 1 one step earlier) does not.
//
// Thread-safety: one thread calls step(); inference reads the parameters concurrently;
// save_checkpoint may run on another thread (the replay buffer is thread-safe).
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "seedrl/algo/n_step_targets.hpp"
#include "seedrl/algo/sequence_priority.hpp"
#include "seedrl/algo/value_rescale.hpp"
#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/io/checkpoint.hpp"
#include "seedrl/io/metrics_logger.hpp"
#include "seedrl/nn/gradient_clipping.hpp"
#include "seedrl/nn/network.hpp"
#include "seedrl/nn/optimizer.hpp"
#include "seedrl/replay/replay_buffer.hpp"
#include "seedrl/runtime/bounded_queue.hpp"
#include "seedrl/runtime/learner.hpp"
#include "seedrl/runtime/r2d2_agent.hpp"
#include "seedrl/runtime/shared_parameters.hpp"
#include "seedrl/runtime/staging.hpp"
#include "seedrl/runtime/unroll.hpp"
#include "seedrl/runtime/unroll_codec.hpp"

namespace seedrl {

/// What the R2D2 loss computed for a batch of sequences.
struct R2D2LossResult {
  double loss = 0.0;          ///< (1/B) sum_b w_b sum_t 0.5 delta^2
  Eigen::ArrayXXf td_errors;  ///< delta [T, B] (0 at episode boundaries), in rescaled units
  Eigen::ArrayXf priorities;  ///< per sequence, > 0
  double mean_q = 0.0;        ///< mean online Q(x_t, a_t) over trained transitions (raw units)
  std::int64_t transitions = 0;
};

/// The replay state file saved next to a checkpoint when R2D2AgentOptions::checkpoint_replay.
inline std::string replay_state_path(const std::string& checkpoint) {
  return (std::filesystem::path(checkpoint).parent_path() / "replay.seedrl").string();
}

template <nn::Backend B>
class Learner<R2D2Agent, B> {
 public:
  using Replay = ReplayBuffer<Unroll>;
  /// Priorities are floored here: the buffer needs them > 0 and a sequence the network already
  /// fits exactly should still be seen now and then.
  static constexpr double kMinPriority = 1e-6;

  Learner(const R2D2Agent& agent, const UnrollSpec& spec,
          BoundedQueue<std::unique_ptr<Unroll>>& unrolls)
      : agent_(agent),
        spec_(spec),
        unrolls_(unrolls),
        network_(agent.network_config()),
        target_(agent.network_config()),
        optimizer_(nn::make_optimizer<B>(network_.parameters(), agent.options().optimizer)),
        shared_(network_.parameters()),
        replay_(agent.options().replay_capacity, agent.options().replay,
                agent.network_config().seed ^ 0x9e3779b97f4a7c15ULL) {
    SEEDRL_REQUIRE(spec.overlap >= 1 && spec.length - spec.overlap >= 1,
                   "Learner<R2D2Agent>: sequences of ", spec.length, " steps with overlap ",
                   spec.overlap, " leave no transition to train on");
    SEEDRL_REQUIRE(spec.state_size == agent.network_config().lstm_size,
                   "Learner<R2D2Agent>: sequence state size ", spec.state_size,
                   " differs from the network's LSTM size ", agent.network_config().lstm_size);
    SEEDRL_REQUIRE(spec.num_actions == agent.network_config().num_actions,
                   "Learner<R2D2Agent>: sequences have ", spec.num_actions,
                   " actions, the network ", agent.network_config().num_actions);
    target_.parameters().copy_values_from(network_.parameters());
  }

  nn::Network<B>& network() { return network_; }
  nn::Network<B>& target_network() { return target_; }
  SharedParameters& parameters() { return shared_; }
  nn::Optimizer& optimizer() { return *optimizer_; }
  Replay& replay() { return replay_; }
  const R2D2Agent& agent() const { return agent_; }
  /// Leading steps of a sequence that only warm up the LSTM state.
  std::int64_t burn_in() const { return spec_.overlap - 1; }
  /// Updates applied so far; may be read from any thread.
  std::int64_t steps() const { return steps_.load(); }
  /// Sequences inserted into and sampled from the replay by this learner (since construction).
  std::int64_t inserted() const { return inserted_.load(); }
  std::int64_t sampled() const { return sampled_.load(); }

  /// Moves sequences from the queue into the replay until one training step is due (enough
  /// sequences, replay ratio not exceeded), then trains on a sampled batch. Nothing once the
  /// queue is closed and drained.
  std::optional<LearnerStepStats> step() {
    while (!training_due()) {
      if (!unrolls_.pop_available(static_cast<std::size_t>(agent_.options().batch_size), incoming_))
        return std::nullopt;
      insert(incoming_);
    }
    return train_on_sample();
  }

  /// Computes the new sequences' priorities with the current networks and adds them to the
  /// replay.
  void insert(std::vector<std::unique_ptr<Unroll>>& sequences) {
    if (sequences.empty()) return;
    for (const auto& u : sequences)
      SEEDRL_REQUIRE(u != nullptr && matches(*u, spec_),
                     "Learner<R2D2Agent>: a sequence does not have the learner's layout");
    const Eigen::ArrayXf priorities = sequence_priorities_of(sequences);
    for (std::size_t j = 0; j < sequences.size(); ++j) {
      replay_.insert(
          std::move(*sequences[j]),
          std::max(static_cast<double>(priorities(static_cast<Eigen::Index>(j))), kMinPriority));
    }
    inserted_ += static_cast<std::int64_t>(sequences.size());
    sequences.clear();
  }

  /// Whether the backend computes the targets, priorities and loss on its device (the CUDA
  /// backend), so the Q-values never leave it.
  static constexpr bool kLossOnDevice = requires { typename B::R2D2LossConfig; };

  /// Priorities the loss would give these sequences now (no gradient, nothing changes).
  template <std::ranges::random_access_range Range>
  Eigen::ArrayXf sequence_priorities_of(const Range& sequences) {
    batch_.stack(sequences, spec_);
    return evaluate({}, false).priorities;
  }

  /// The loss of these sequences with importance weights (empty: all 1) and its gradients in the
  /// online network's parameter gradients; changes no parameter.
  template <std::ranges::random_access_range Range>
  R2D2LossResult loss_and_gradients(const Range& sequences, std::span<const float> weights = {}) {
    batch_.stack(sequences, spec_);
    return evaluate(weights, true);
  }

  /// One update from a prioritized sample of the replay (which must not be empty).
  LearnerStepStats train_on_sample() {
    const R2D2AgentOptions& o = agent_.options();
    const std::int64_t version_before = steps_;
    const Replay::Sample sample = replay_.sample(static_cast<std::size_t>(o.batch_size));
    const R2D2LossResult result = loss_and_gradients(sample.items, sample.weights);
    std::vector<double> priorities(sample.indices.size());
    for (std::size_t j = 0; j < priorities.size(); ++j)
      priorities[j] =
          std::max<double>(result.priorities(static_cast<Eigen::Index>(j)), kMinPriority);
    replay_.update_priorities(sample.indices, priorities);
    sampled_ += o.batch_size;

    LearnerStepStats stats = apply_update<B>(
        network_.parameters(), *optimizer_, shared_, steps_, o.max_grad_norm, o.learning_rate, [&] {
          if (steps_ % o.target_update_period == 0)
            target_.parameters().copy_values_from(network_.parameters());
        });
    stats.total_loss = result.loss;
    stats.transitions = result.transitions;
    mean_q_ = result.mean_q;
    double priority_sum = 0.0;
    for (double p : priorities) priority_sum += p;
    mean_priority_ = priority_sum / static_cast<double>(priorities.size());
    double lag = 0.0;
    const std::int64_t b = burn_in(), steps = spec_.length - spec_.overlap;
    const std::int64_t batch = o.batch_size;
    for (std::int64_t t = b; t < b + steps; ++t)
      for (std::int64_t j = 0; j < batch; ++j)
        lag += static_cast<double>(version_before -
                                   batch_.policy_versions.data<std::int32_t>()[t * batch + j]);
    stats.policy_lag = lag / static_cast<double>(steps * batch);
    return stats;
  }

  /// Replay size and what the last step saw, for the run's metrics.
  std::vector<io::Scalar> metrics() const {
    return {{"replay_size", static_cast<double>(replay_.size())},
            {"replay_inserted", static_cast<double>(inserted_.load())},
            {"replay_sampled", static_cast<double>(sampled_.load())},
            {"mean_q", mean_q_.load()},
            {"mean_priority", mean_priority_.load()}};
  }
  /// Appended to the progress line.
  std::string progress_suffix() const {
    std::ostringstream s;
    s << " | replay " << replay_.size() << " | q " << mean_q_.load();
    return s.str();
  }

  /// Saves parameters, optimizer state and `counters`; with checkpoint_replay also the replay
  /// contents (replay_state_path(path)).
  void save_checkpoint(const std::string& path, io::CheckpointCounters counters) {
    counters.learner_steps = steps_;
    {
      auto guard = shared_.read();  // no update while the values are copied out
      io::save_checkpoint(path, network_.parameters(), optimizer_.get(), counters,
                          checkpoint_metadata());
    }
    if (agent_.options().checkpoint_replay) replay_.save_file(replay_state_path(path), true);
  }

  /// Restores a checkpoint written by save_checkpoint for the same network and optimizer; the
  /// target network restarts as a copy of the online one. With checkpoint_replay and a replay
  /// state next to the checkpoint, the replay contents come back too.
  io::CheckpointCounters load_checkpoint(const std::string& path) {
    auto guard = shared_.write();
    const io::CheckpointCounters counters =
        io::load_checkpoint(path, network_.parameters(), optimizer_.get(), checkpoint_metadata());
    target_.parameters().copy_values_from(network_.parameters());
    steps_ = counters.learner_steps;
    shared_.publish(steps_);
    const std::string replay_path = replay_state_path(path);
    if (agent_.options().checkpoint_replay && std::filesystem::exists(replay_path)) {
      const std::string data = read_file(replay_path);
      Replay loaded(replay_.capacity(), replay_.options());
      loaded.load(data, replay_path);
      SEEDRL_REQUIRE(loaded.all_items([&](const Unroll& u) { return matches(u, spec_); }),
                     replay_path, ": holds sequences of another layout than this learner's");
      replay_.load(data, replay_path);
    }
    return counters;
  }

  /// What a checkpoint must agree on to be loaded by this learner.
  io::Metadata checkpoint_metadata() const {
    return {{"agent", "r2d2"}, {"network", nn::describe(agent_.network_config())}};
  }

 private:
  bool training_due() const {
    const R2D2AgentOptions& o = agent_.options();
    return replay_.size() >= o.min_replay_size &&
           static_cast<double>(sampled_ + o.batch_size) <=
               o.replay_ratio * static_cast<double>(inserted_);
  }

  // The loss of batch_ (see the top of the file); with `gradients` also backward.
  R2D2LossResult evaluate(std::span<const float> weights, bool gradients) {
    const R2D2AgentOptions& o = agent_.options();
    const std::int64_t length = spec_.length, burn = burn_in(), window = length - burn,
                       steps = window - 1, batch = batch_.flags.dim(1);
    const std::int64_t actions = spec_.num_actions;
    SEEDRL_REQUIRE(weights.empty() || static_cast<std::int64_t>(weights.size()) == batch,
                   "Learner<R2D2Agent>: ", weights.size(), " importance weights for ", batch,
                   " sequences");
    const std::uint8_t* flags = batch_.flags.data<std::uint8_t>();
    const Tensor resets = reset_buffer_.view({length, batch}, DType::u8);
    for (std::int64_t i = 0; i < length * batch; ++i)
      resets.data<std::uint8_t>()[i] = is_first(flags[i]) ? 1 : 0;

    const auto [target_out, online_out] = forward_networks(resets);
    if constexpr (kLossOnDevice)
      return evaluate_on_device(*target_out, *online_out, weights, gradients);
    // On the host: the Q-values come back from the backend's device (no copy on the CPU).
    const auto q_target = host_target_(*target_out)
                              .q.slice(burn, length)
                              .reshape({window * batch, actions})
                              .template matrix<float>();
    const auto q_online =
        host_online_(*online_out).q.reshape({window * batch, actions}).template matrix<float>();

    // Bootstrap value of the state at window step t: h^-1(Q_target(x_t, argmax Q_online(x_t))).
    const Eigen::ArrayXf bootstrap = rescaled_inverse(double_q_values(q_online, q_target));
    Eigen::ArrayXXf rewards(steps, batch), dones(steps, batch), q_next(steps, batch),
        mask(steps, batch), q_taken(steps, batch);
    Eigen::ArrayXXi taken(steps, batch);
    const float* reward_data = batch_.rewards.data<float>();
    const std::int32_t* action_data = batch_.actions.data<std::int32_t>();
    for (std::int64_t j = 0; j < batch; ++j) {
      for (std::int64_t t = 0; t < steps; ++t) {
        const std::int64_t i = (burn + t) * batch + j;  // row in the [L, B] arrays
        const std::int64_t w = t * batch + j;           // row in the window's outputs
        taken(t, j) = action_data[i];
        SEEDRL_REQUIRE(taken(t, j) >= 0 && taken(t, j) < actions,
                       "Learner<R2D2Agent>: stored action ", taken(t, j), " out of range");
        q_taken(t, j) = q_online(w, taken(t, j));
        q_next(t, j) = bootstrap(w + batch);
        if (is_last(flags[i])) {  // boundary: no transition, ends earlier windows with Q(x_t)
          rewards(t, j) = bootstrap(w);
          dones(t, j) = 1.0f;
          mask(t, j) = 0.0f;
          continue;
        }
        const float r = reward_data[i + batch];
        rewards(t, j) =
            o.max_abs_reward > 0.0f ? std::clamp(r, -o.max_abs_reward, o.max_abs_reward) : r;
        dones(t, j) = (flags[i + batch] & step_flags::kTerminated) ? 1.0f : 0.0f;
        mask(t, j) = 1.0f;
      }
    }
    Eigen::ArrayXXf targets = n_step_targets(rewards, dones, q_next, o.n_step, o.discount);
    if (o.value_rescaling) targets = value_rescale(targets, o.value_rescale_epsilon);

    R2D2LossResult result;
    result.td_errors = (q_taken - targets) * mask;
    result.priorities = sequence_priorities(result.td_errors, o.priority_eta);
    result.transitions = static_cast<std::int64_t>(mask.sum());
    const Eigen::ArrayXXf raw_q = rescaled_inverse(q_taken);
    result.mean_q = result.transitions > 0 ? (raw_q * mask).sum() / result.transitions : 0.0;
    double loss = 0.0;
    for (std::int64_t j = 0; j < batch; ++j) {
      const double w = weights.empty() ? 1.0 : weights[static_cast<std::size_t>(j)];
      loss += w * 0.5 * result.td_errors.col(j).square().cast<double>().sum();
    }
    result.loss = loss / static_cast<double>(batch);
    if (!gradients) return result;

    // d loss / d Q(x_t, a_t) = w_b delta_t / B; nothing for the last (bootstrap-only) step.
    const Tensor grad_q = grad_q_buffer_.view({window, batch, actions});
    grad_q.fill_zero();
    float* g = grad_q.data<float>();
    for (std::int64_t j = 0; j < batch; ++j) {
      const float w = weights.empty() ? 1.0f : weights[static_cast<std::size_t>(j)];
      for (std::int64_t t = 0; t < steps; ++t)
        g[(t * batch + j) * actions + taken(t, j)] =
            w * result.td_errors(t, j) / static_cast<float>(batch);
    }
    network_.backward({.q = device_grad_q_(grad_q)});
    return result;
  }

  // The batch on the backend's device (no copy on the CPU); the target network over the whole
  // sequence (burn-in included: it only warms the state up); the online network's burn-in
  // without gradient, then the trained window from its final state. Returns both networks'
  // outputs (views of their buffers, on the device).
  std::pair<const nn::NetworkOutputs*, const nn::NetworkOutputs*> forward_networks(
      const Tensor& resets) {
    const std::int64_t length = spec_.length, burn = burn_in();
    const Tensor observations = device_observations_(batch_.observations);
    const nn::LstmState initial_state = device_state_(batch_.initial_state);
    const nn::NetworkOutputs& target = target_.forward(observations, initial_state, resets);
    nn::LstmState state = initial_state;
    if (burn > 0) {
      const nn::NetworkOutputs& warm =
          network_.forward(observations.slice(0, burn), initial_state, resets.slice(0, burn));
      if (warm.final_state.defined()) {
        state = {burn_state_h_.view(warm.final_state.h.shape()),
                 burn_state_c_.view(warm.final_state.c.shape())};
        state.h.copy_from(warm.final_state.h);
        state.c.copy_from(warm.final_state.c);
      }
    }
    const nn::NetworkOutputs& online =
        network_.forward(observations.slice(burn, length), state, resets.slice(burn, length));
    return {&target, &online};
  }

  // evaluate() with the targets, TD errors, priorities and gradient computed on the device;
  // only the TD errors and priorities (a few hundred floats) come back.
  R2D2LossResult evaluate_on_device(const nn::NetworkOutputs& target,
                                    const nn::NetworkOutputs& online,
                                    std::span<const float> weights, bool gradients) {
    const R2D2AgentOptions& o = agent_.options();
    const std::int64_t length = spec_.length, burn = burn_in(), window = length - burn,
                       steps = window - 1, batch = batch_.flags.dim(1), actions = spec_.num_actions;
    const std::int32_t* action_data = batch_.actions.data<std::int32_t>();
    for (std::int64_t i = 0; i < batch_.actions.numel(); ++i) {  // the kernels index with them
      SEEDRL_REQUIRE(action_data[i] >= 0 && action_data[i] < actions,
                     "Learner<R2D2Agent>: stored action ", action_data[i], " out of range");
    }
    const Tensor device_weights =
        weights.empty() ? Tensor()
                        : device_weights_(Tensor::from_blob(const_cast<float*>(weights.data()),
                                                            {batch}, DType::f32));
    const Tensor grad_q = gradients ? device_grad_buffer_q_.view(online.q.shape()) : Tensor();
    const Tensor td = device_td_buffer_.view({steps, batch});
    const Tensor priorities = device_priority_buffer_.view({batch});
    typename B::R2D2LossConfig config;
    config.burn_in = burn;
    config.n_step = o.n_step;
    config.discount = o.discount;
    config.max_abs_reward = o.max_abs_reward;
    config.value_rescaling = o.value_rescaling;
    config.value_rescale_epsilon = o.value_rescale_epsilon;
    config.priority_eta = o.priority_eta;
    const auto terms =
        B::r2d2_loss(online.q, target.q.slice(burn, length), device_actions_(batch_.actions),
                     device_rewards_(batch_.rewards), device_flags_(batch_.flags), device_weights,
                     config, grad_q, td, priorities);
    R2D2LossResult result;
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
    if (gradients) network_.backward({.q = grad_q});
    return result;
  }

  template <class Derived>
  typename Derived::PlainObject rescaled_inverse(const Eigen::ArrayBase<Derived>& x) const {
    const R2D2AgentOptions& o = agent_.options();
    return o.value_rescaling ? inverse_value_rescale(x, o.value_rescale_epsilon)
                             : typename Derived::PlainObject(x);
  }

  const R2D2Agent agent_;  // a copy: the caller's agent may be a temporary
  UnrollSpec spec_;
  BoundedQueue<std::unique_ptr<Unroll>>& unrolls_;
  nn::Network<B> network_, target_;
  std::unique_ptr<nn::Optimizer> optimizer_;
  SharedParameters shared_;
  Replay replay_;
  std::atomic<std::int64_t> steps_{0}, inserted_{0}, sampled_{0};
  std::atomic<double> mean_q_{0.0}, mean_priority_{0.0};
  std::vector<std::unique_ptr<Unroll>> incoming_;
  UnrollBatch batch_;
  ScratchBuffer reset_buffer_, grad_q_buffer_, burn_state_h_{B::device}, burn_state_c_{B::device};
  StagingBuffer device_observations_{B::device}, device_grad_q_{B::device};
  // The device loss path: the sequences' other fields, and its outputs on the device.
  StagingBuffer device_actions_{B::device}, device_rewards_{B::device}, device_flags_{B::device},
      device_weights_{B::device};
  ScratchBuffer device_grad_buffer_q_{B::device}, device_td_buffer_{B::device},
      device_priority_buffer_{B::device};
  StateStaging device_state_{B::device};
  HostOutputs host_target_{B::device}, host_online_{B::device};
};

}  // namespace seedrl
