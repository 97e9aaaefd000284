// Learner<R2D2Agent, Backend>: the R2D2 learner of SEED RL: its loss and its data path on
// LearnerCore (learner/learner_core.hpp), which does the update, checkpoints and metrics.
//
//   unroll queue ──▶ priorities of the new sequences (online + target forward, no gradient; or,
//                    with actor_priorities, from the Q-values recorded while acting)
//                ──▶ ReplayTable<Unroll> (prioritized, FIFO eviction; replay/replay_table.hpp)
//   when its RateLimiter allows (min_replay_size sequences, replay_ratio not exceeded):
//     sample B sequences (importance weights w) ──▶ online net: burn-in steps (no gradient: the
//     LSTM state after them enters the trained window as a constant), then the T + 1 trained steps
//     ──▶ target net on all steps ──▶ r2d2_loss (algo/r2d2_loss.hpp) ──▶ backward
//     ──▶ LearnerCore::finish_step (every target_update_period steps the target network becomes a
//     copy of the online one, under the same lock) ──▶ new priorities to the buffer
//
// A sequence holds burn_in + T + 1 steps (UnrollSpec: length, overlap = burn_in + 1), its stored
// recurrent state is the one inference had before step 0. A sequence whose priority at insertion
// is not finite (its observations made the network's output NaN or infinite) is dropped and
// counted; a sampled step whose loss or priorities are not finite is skipped (its priorities
// stay as they were).
//
// With R2D2AgentOptions::concurrent_insertion (the default), step() starts a TableFeeder thread
// ("seedrl-insert", replay/table_feeder.hpp) at its first call: it pops new sequences, computes
// their priorities with a pass of its own over a copy of the networks (online and target,
// refreshed under the read lock before every batch, so at most one update old) and inserts them,
// never more than two batches ahead of what the replay ratio allows (the table's limiter waits);
// step() waits for the table and trains. An error in the feeder comes out of the next step().
// The destructor stops the feeder (closing the unroll queue if it is still open: the queue feeds
// this learner only).
//
// Thread-safety: one thread calls step(); inference reads the parameters concurrently;
// save_checkpoint may run on another thread (the replay buffer is thread-safe).
#pragma once

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "seedrl/agents/r2d2/agent.hpp"
#include "seedrl/agents/r2d2/sequence_loss.hpp"
#include "seedrl/algo/r2d2_loss.hpp"
#include "seedrl/core/binary_io.hpp"
#include "seedrl/core/float_mode.hpp"
#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/core/thread_name.hpp"
#include "seedrl/experience/unroll_codec.hpp"
#include "seedrl/learner/learner_core.hpp"
#include "seedrl/replay/replay_table.hpp"
#include "seedrl/replay/table_feeder.hpp"
#include "seedrl/shared/staging.hpp"

namespace seedrl {

template <nn::Backend B>
class Learner<R2D2Agent, B> final : public LearnerCore<B> {
  using Core = LearnerCore<B>;

 public:
  using Replay = ReplayTable<Unroll>;
  /// Priorities are floored here: the buffer needs them > 0 and a sequence the network already
  /// fits exactly should still be seen now and then.
  static constexpr double kMinPriority = 1e-6;

  Learner(const R2D2Agent& agent, const UnrollSpec& spec, UnrollQueue& unrolls)
      : Core(R2D2Agent::kName, agent.options(), spec, kMetrics, agent.evaluation_acting(),
             {{.name = "target",
               .source = "online",
               .copy_period = agent.options().target_update_period}}),
        agent_(agent),
        loss_(agent.options(), spec),
        unrolls_(unrolls),
        replay_(table_options(agent.options(), agent.network_config().seed)) {
    SEEDRL_REQUIRE(spec.overlap >= 1 && spec.length - spec.overlap >= 1,
                   "Learner<R2D2Agent>: sequences of ", spec.length, " steps with overlap ",
                   spec.overlap, " leave no transition to train on");
    SEEDRL_REQUIRE(!agent.options().actor_priorities || spec.store_behaviour,
                   "Learner<R2D2Agent>: actor_priorities needs sequences that record the acting "
                   "Q-values (an UnrollSpec from make_unroll_spec with this agent)");
  }

  ~Learner() override {
    if (feeder_) feeder_->stop();
  }

  nn::Network<B>& target_network() { return this->networks().network("target"); }
  Replay& replay() { return replay_; }
  const R2D2Agent& agent() const { return agent_; }
  /// Leading steps of a sequence that only warm up the LSTM state.
  std::int64_t burn_in() const { return this->spec().overlap - 1; }
  /// Sequences inserted into and sampled from the replay by this learner (since construction).
  std::int64_t inserted() const { return replay_.inserted(); }
  std::int64_t sampled() const { return replay_.sampled(); }
  /// Sequences not inserted because their priority was not finite.
  std::int64_t dropped() const { return dropped_.load(); }

  /// Moves sequences from the queue into the replay until one training step is due (enough
  /// sequences, replay ratio not exceeded), then trains on a sampled batch. Nothing once the
  /// queue is closed and drained.
  /// With concurrent_insertion the inserter thread does the first part (see the top).
  std::optional<LearnerStepStats> step() {
    const std::int64_t batch = agent_.options().batch_size;
    if (!agent_.options().concurrent_insertion) {
      while (!replay_.can_sample(batch)) {
        if (!unrolls_.pop_available(static_cast<std::size_t>(batch), incoming_))
          return std::nullopt;
        insert(incoming_);
      }
      return train_on_sample();
    }
    start_inserter();
    const bool due = replay_.wait_to_sample(batch);
    feeder_->rethrow_error();
    if (!due) return std::nullopt;  // the queue is closed and drained
    return train_on_sample();
  }

  /// Computes the new sequences' priorities with the current networks and adds them to the
  /// replay (those with a non-finite priority are dropped and counted).
  void insert(std::vector<std::unique_ptr<Unroll>>& sequences) {
    insert_with(own_pass(), sequences);
  }

 protected:
  using Pass = R2D2Pass<B>;

  std::unique_ptr<LearnerPass<B>> make_pass(NetworkSet<B>& networks) override {
    return std::make_unique<Pass>(networks, this->pass_context());
  }

 private:
  Pass& own_pass() { return static_cast<Pass&>(this->pass()); }

  // insert() with the priorities `evaluator` (this learner's pass, or the inserter's) computes.
  void insert_with(Pass& evaluator, std::vector<std::unique_ptr<Unroll>>& sequences) {
    if (sequences.empty()) return;
    for (const auto& u : sequences)
      SEEDRL_REQUIRE(u != nullptr && matches(*u, this->spec()),
                     "Learner<R2D2Agent>: a sequence does not have the learner's layout");
    const Eigen::ArrayXf priorities = agent_.options().actor_priorities
                                          ? actor_priorities_of(evaluator, sequences)
                                          : sequence_priorities_of(evaluator, sequences);
    for (std::size_t j = 0; j < sequences.size(); ++j) {
      const double priority = priorities(static_cast<Eigen::Index>(j));
      if (!std::isfinite(priority)) {
        ++dropped_;
        continue;
      }
      replay_.insert(std::move(*sequences[j]), std::max(priority, kMinPriority));
    }
    sequences.clear();
  }

  // The inserter's networks take this learner's values before every batch (under the read
  // lock: the online values are written and the target copied only under the write lock), so
  // the priorities are those of parameters at most one update old.
  void refresh_evaluator() {
    SharedParameters::ReadGuard guard(this->parameters());
    evaluator_networks_->copy_values_from(this->networks());
  }

  // The replay: its sampler, and its limiter's two rules (see replay/rate_limiter.hpp): sample
  // once min_replay_size sequences are in and replay_ratio allows; the inserter stops two batches
  // past what the next sample needs, so that the two never wait for each other.
  static ReplayTableOptions table_options(const R2D2AgentOptions& o, std::uint64_t seed) {
    ReplayTableOptions t;
    t.capacity = o.replay_capacity;
    t.replay = o.replay;
    t.limiter = {o.replay_ratio, o.min_replay_size, o.batch_size, 2 * o.batch_size};
    t.seed = seed ^ 0x9e3779b97f4a7c15ULL;
    return t;
  }

  void start_inserter() {
    if (feeder_) return;
    // The inserter's own networks (copies, refreshed before every batch) and pass.
    evaluator_networks_ = std::make_unique<NetworkSet<B>>(this->networks().options(), false);
    evaluator_ =
        std::unique_ptr<Pass>(static_cast<Pass*>(make_pass(*evaluator_networks_).release()));
    feeder_ = std::make_unique<TableFeeder<Replay>>(
        replay_, [this] { return feed(); }, [this] { unrolls_.close(); }, "seedrl-insert",
        [] {
          if constexpr (requires { B::set_num_threads(1); }) B::set_num_threads(1);
        });
    feeder_->start();
  }

  // The feeder's batch: new sequences from the queue, their priorities, into the replay.
  bool feed() {
    if (!unrolls_.pop_available(static_cast<std::size_t>(agent_.options().batch_size), feeding_))
      return false;                                               // closed and drained
    if (!agent_.options().actor_priorities) refresh_evaluator();  // else no network runs
    insert_with(*evaluator_, feeding_);
    return true;
  }

 public:
  /// Whether the backend computes the targets, priorities and loss on its device (the CUDA
  /// backend), so the Q-values never leave it.
  static constexpr bool kLossOnDevice = R2D2SequenceLoss<B>::kLossOnDevice;

  /// Priorities the loss would give these sequences now (no gradient, nothing changes).
  template <std::ranges::random_access_range Range>
  Eigen::ArrayXf sequence_priorities_of(const Range& sequences) {
    return sequence_priorities_of(own_pass(), sequences);
  }

  /// The priorities of these sequences from the Q-values recorded while acting
  /// (R2D2AgentOptions::actor_priorities): the R2D2 loss's, with the recorded Q as both the
  /// online and the target network's over the trained window. No network runs.
  template <std::ranges::random_access_range Range>
  Eigen::ArrayXf actor_priorities_of(const Range& sequences) {
    return actor_priorities_of(own_pass(), sequences);
  }
  /// The loss of these sequences with importance weights (empty: all 1) and its gradients in the
  /// online network's parameter gradients; changes no parameter.
  template <std::ranges::random_access_range Range>
  R2D2Loss loss_and_gradients(const Range& sequences, std::span<const float> weights = {}) {
    return loss_and_gradients(own_pass(), sequences, weights);
  }

  /// One update from a prioritized sample of the replay (which must not be empty), in
  /// micro-batches of sequences over the learner's workers when set_workers asked for them.
  LearnerStepStats train_on_sample() {
    const R2D2AgentOptions& o = agent_.options();
    const Replay::Sample sample = replay_.sample(o.batch_size);
    const auto count = static_cast<std::int64_t>(sample.items.size());
    sample_priorities_.resize(sample.items.size());
    const typename Core::Gradients result =
        this->template gradients<Pass>(count, [&](Pass& pass, std::int64_t first, std::int64_t n) {
          const auto begin = static_cast<std::size_t>(first), size = static_cast<std::size_t>(n);
          const std::span<const float> weights =
              sample.weights.empty() ? std::span<const float>()
                                     : std::span<const float>(sample.weights).subspan(begin, size);
          const R2D2Loss r = loss_and_gradients(
              pass,
              std::span<const std::shared_ptr<const Unroll>>(sample.items).subspan(begin, size),
              weights);
          for (std::size_t j = 0; j < size; ++j)
            sample_priorities_[begin + j] = r.priorities(static_cast<Eigen::Index>(j));
          // The loss and the mean priority are means over sequences, the mean Q over transitions.
          const auto sequences = static_cast<double>(n);
          return typename Core::Gradients{
              .values = {r.loss, r.mean_q, r.priorities.mean()},
              .value_weights = {sequences, static_cast<double>(r.transitions), sequences},
              .weight = sequences,
              .transitions = r.transitions,
              .policy_lag = pass.policy_lag,
              .finite = r.priorities.allFinite()};
        });
    // Every target_update_period updates the target network becomes a copy of the online one
    // (the core's NetworkSet does it under the same lock).
    const LearnerStepStats stats = this->finish_step(result);
    if (!stats.skipped) {
      std::vector<double> priorities(sample.indices.size());
      for (std::size_t j = 0; j < priorities.size(); ++j)
        priorities[j] = std::max<double>(sample_priorities_[j], kMinPriority);
      replay_.update_priorities(sample.indices, priorities);
    }
    return stats;
  }

  /// The replay, read at every report (thread-safe).
  std::vector<Metric> gauges() const {
    const Replay::Counters c = replay_.counters();
    return {{{"replay_size", Reduce::last, "replay"}, static_cast<double>(c.size)},
            {{"replay_inserted", Reduce::last}, static_cast<double>(c.inserted)},
            {{"replay_sampled", Reduce::last}, static_cast<double>(c.sampled)},
            {{"dropped_sequences", Reduce::last}, static_cast<double>(dropped())}};
  }

 protected:
  // A sampled batch's sequences are independent and its loss a mean over them.
  bool splits_batches() const override { return true; }

  /// With checkpoint_replay, the replay contents.
  std::string save_state() override {
    return agent_.options().checkpoint_replay ? replay_.save(true) : std::string();
  }

  /// With checkpoint_replay and a replay that belongs to the checkpoint, the replay contents come
  /// back too (the target network is in the checkpoint, or a copy of the online one for files
  /// written before seedrl saved targets).
  void load_state(std::string_view state, const std::string& path) override {
    if (!agent_.options().checkpoint_replay) return;
    load_replay_state(
        replay_, state, path, [&](const Unroll& u) { return matches(u, this->spec()); },
        "sequences");
  }

 private:
  static constexpr MetricInfo kMetrics[] = {
      {"loss", Reduce::mean, "loss"},
      {"mean_q", Reduce::mean, "q"},
      {"mean_priority"},
  };

  template <std::ranges::random_access_range Range>
  Eigen::ArrayXf sequence_priorities_of(Pass& pass, const Range& sequences) const {
    return loss_.sequence_priorities(pass, sequences);
  }
  template <std::ranges::random_access_range Range>
  Eigen::ArrayXf actor_priorities_of(Pass& pass, const Range& sequences) const {
    return loss_.actor_priorities(pass, sequences);
  }
  template <std::ranges::random_access_range Range>
  R2D2Loss loss_and_gradients(Pass& pass, const Range& sequences,
                              std::span<const float> weights) const {
    return loss_.loss_and_gradients(pass, sequences, weights);
  }

  const R2D2Agent agent_;  // a copy: the caller's agent may be a temporary
  const R2D2SequenceLoss<B> loss_;
  UnrollQueue& unrolls_;
  Replay replay_;
  std::atomic<std::int64_t> dropped_{0};
  std::vector<float> sample_priorities_;  // the sampled batch's new priorities, in order
  std::vector<std::unique_ptr<Unroll>> incoming_;

  // Concurrent insertion (see the top): the feeder thread, its copy of the networks and its pass.
  std::unique_ptr<NetworkSet<B>> evaluator_networks_;
  std::unique_ptr<Pass> evaluator_;
  std::vector<std::unique_ptr<Unroll>> feeding_;  // the feeder thread's batch
  std::unique_ptr<TableFeeder<Replay>> feeder_;   // last: stopped before the members it uses go
};

// The R2D2 runtime on the CPU backend is compiled once, in the library
// (src/agents/r2d2_learner.cpp): programs that train R2D2Agent on the CPU do not instantiate it
// again.
extern template class ReplayBuffer<Unroll>;
extern template class ReplayTable<Unroll>;
extern template class Learner<R2D2Agent, cpu::Backend>;

}  // namespace seedrl
