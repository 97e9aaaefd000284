// LearnerCore<Backend>: what every learner shares, so that a learner is its loss and its data
// path and nothing else.
//
//   learner (derived):  unrolls ──pass().stack()──▶ batch on the device ──▶ its network(s)
//                       forward ──▶ transitions() ──▶ its loss ──▶ backward (a LearnerPass)
//   core:               finish_step(): non-finite check ──▶ global-norm clip ──▶ optimizer step at
//                       the scheduled rate under SharedParameters::write() ──▶ version + 1
//                       (inference uses the new parameters at once) ──▶ step statistics
//
// The core owns the networks being trained, each with its optimizer, schedule and clipping, and
// their target networks (a NetworkSet, learner/network_set.hpp; the first network is the one
// inference reads), the shared parameters, the update counter, the count of skipped steps,
// checkpoints (parameters, optimizer state, counters, how the agent acts in evaluation, plus what a
// learner adds through save_state/load_state), the policy lag and the common metrics (grad_norm,
// learning_rate, policy_lag, transitions, skipped_steps).
//
// A step whose loss, priorities (a learner says so) or gradient norm is not finite changes no
// parameter: it is skipped and counted, and the run goes on.
//
// Micro-batches and learner workers (set_workers; learners whose loss is a mean over the items of
// their batch): a step's batch is split into micro-batches of whole unrolls or sequences whose
// gradients workers compute and sum in micro-batch order (learner/learner_workers.hpp).
//
// Thread-safety: one thread trains; inference reads the parameters concurrently under
// SharedParameters; steps(), skipped_steps() from any thread; save_checkpoint from a thread that
// does not step at the same time as it (the training session calls it between steps or after).
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/agent/acting.hpp"
#include "seedrl/agent/agent.hpp"
#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/experience/unroll.hpp"
#include "seedrl/io/checkpoint.hpp"
#include "seedrl/learner/learner.hpp"
#include "seedrl/learner/learner_metrics.hpp"
#include "seedrl/learner/learner_pass.hpp"
#include "seedrl/learner/learner_workers.hpp"
#include "seedrl/learner/network_set.hpp"
#include "seedrl/learner/pass_result.hpp"
#include "seedrl/learner/training_group.hpp"
#include "seedrl/shared/shared_parameters.hpp"
#include "seedrl/shared/staging.hpp"
#ifdef SEEDRL_CUDA_SESSIONS
#include "seedrl/backend/cuda/backend.hpp"
#endif
#include "seedrl/learner/transitions.hpp"
#include "seedrl/nn/gradient_clipping.hpp"
#include "seedrl/nn/network.hpp"
#include "seedrl/nn/optimizer.hpp"

namespace seedrl {

template <nn::Backend B>
class LearnerCore {
 public:
  virtual ~LearnerCore() = default;
  LearnerCore(const LearnerCore&) = delete;
  LearnerCore& operator=(const LearnerCore&) = delete;

  /// The network being trained whose parameters inference reads (the first of networks()).
  nn::Network<B>& network() { return networks_.trained(0).network; }
  SharedParameters& parameters() { return shared_; }
  /// That network's optimizer.
  nn::Optimizer& optimizer() { return *networks_.trained(0).optimizer; }
  /// Every network the learner trains, and the targets that follow them.
  NetworkSet<B>& networks() { return networks_; }
  /// Updates applied so far; may be read from any thread.
  std::int64_t steps() const { return steps_.load(); }
  /// Steps skipped because something was not finite; may be read from any thread.
  std::int64_t skipped_steps() const { return skipped_.total(); }

  /// The names of a step's metrics: the learner's own, then the common ones.
  std::vector<MetricInfo> metric_schema() const {
    std::vector<MetricInfo> schema(own_metrics_.begin(), own_metrics_.end());
    schema.insert(schema.end(), std::begin(kCommonMetrics), std::end(kCommonMetrics));
    schema.insert(schema.end(), network_metrics_.begin(), network_metrics_.end());
    return schema;
  }

  /// Saves every network with its optimizer state, the targets, `counters` (learner_steps is taken
  /// from here) and the `extra` metadata (e.g. the action spec), with what the learner adds
  /// (save_state: R2D2's and SAC's replay), keeping `generations` checkpoints (io/checkpoint.hpp).
  /// The lock on the parameters is held only while their values (and the step count) are copied
  /// out: training goes on while the checkpoint is encoded and written.
  void save_checkpoint(const std::string& path, io::CheckpointCounters counters,
                       const io::Metadata& extra = {}, int generations = 1) {
    io::CheckpointSnapshot snapshot;
    {
      SharedParameters::ReadGuard guard(shared_);  // no update while the values are copied out
      counters.learner_steps = steps_;
      io::Metadata metadata = checkpoint_metadata();
      metadata.insert(extra.begin(), extra.end());
      metadata["acting"] = evaluation_acting_.to_text();  // for Policy (policy/policy.hpp)
      for (const auto& [key, value] : policy_metadata()) metadata[key] = value;
      snapshot = io::snapshot_checkpoint(networks_.checkpoint_parts(), counters, metadata);
    }
    io::write_checkpoint(path, snapshot, generations, save_state());
  }

  /// Restores a checkpoint written by save_checkpoint for the same agent, network and optimizer
  /// (anything else is refused by name, changing nothing), then the learner's own state from the
  /// replay that belongs to it (a missing or corrupt one refuses the checkpoint by name).
  io::CheckpointCounters load_checkpoint(const std::string& path) {
    const io::SafetensorsFile file = io::SafetensorsFile::read(path);
    const std::optional<std::string> state = io::read_replay_of(file);
    SharedParameters::WriteGuard guard(shared_);
    std::vector<io::CheckpointPart> parts = networks_.checkpoint_parts();
    const io::CheckpointCounters counters = io::load_checkpoint(file, parts, checkpoint_metadata());
    networks_.restore_missing_targets(parts);  // files written before seedrl saved targets
    steps_ = counters.learner_steps;
    shared_.publish(steps_);
    if (state) load_state(*state, path);
    return counters;
  }

  /// Makes this learner one of a data-parallel group (seedrl::mpi::LearnerGroup): every step's
  /// gradients go through `reducer` before they are clipped and applied. Null: alone (default).
  /// The reducer must outlive the learner's steps; set it before the first step. join_group()
  /// also makes the learners' state identical first.
  void set_gradient_reducer(GradientReducer* reducer) { reducer_ = reducer; }
  GradientReducer* gradient_reducer() const { return reducer_; }

  /// Joins `group` (collective: every member calls it, before its first step): the root's
  /// networks, optimizer states, targets and update count become every member's (under the write
  /// lock, so inference never sees a half-copied set), the learner re-derives what follows from
  /// them, and every later step's gradients go through the group.
  void join_group(TrainingGroup& group) {
    {
      SharedParameters::WriteGuard guard(shared_);
      networks_.broadcast(group);
      steps_ = group.broadcast_count(steps_);
      shared_.publish(steps_);
      parameters_replaced();
    }
    reducer_ = &group;
  }

  /// Splits every step's batch into `micro_batches` micro-batches (at most one per unroll) whose
  /// gradients `workers` threads compute (see the top). workers 1, micro_batches 1: one pass over
  /// the whole batch on the stepping thread (the default). Call before the first step; throws
  /// seedrl::Error naming the setting when the learner or the backend cannot do it.
  void set_workers(int workers, int micro_batches) {
    SEEDRL_REQUIRE(workers >= 1, "Learner<", agent_name_, ">: learner workers must be >= 1, got ",
                   workers);
    SEEDRL_REQUIRE(micro_batches >= 1, "Learner<", agent_name_,
                   ">: micro-batches must be >= 1, got ", micro_batches);
    SEEDRL_REQUIRE(workers == 1 || B::device == Device::cpu, "Learner<", agent_name_,
                   ">: learner workers > 1 need the CPU backend (one device computes a batch "
                   "as a whole), got ",
                   workers);
    SEEDRL_REQUIRE((workers == 1 && micro_batches == 1) || splits_batches(), "Learner<",
                   agent_name_, ">: this learner trains on whole batches; learner workers (",
                   workers, ") and micro-batches (", micro_batches, ") must be 1");
    // Each worker's pass computes on a replica of the networks that reads this learner's values.
    workers_.configure(workers, micro_batches, networks_, pass_maker());
  }
  int workers() const { return workers_.workers(); }
  int micro_batches() const { return workers_.micro_batches(); }

  /// What a learner tells Policy about its acting network beyond its description (SAC: the
  /// "policy" is a squashed Gaussian); saved with every checkpoint, not checked on load.
  virtual io::Metadata policy_metadata() const { return {}; }

  /// What a checkpoint must agree on to be loaded by this learner.
  io::Metadata checkpoint_metadata() const {
    io::Metadata metadata{{"agent", agent_name_},
                          {"network", nn::describe(networks_.trained(0).network.config())}};
    for (std::size_t i = 1; i < networks_.trained_count(); ++i)
      metadata["network/" + networks_.trained(i).options.name] =
          nn::describe(networks_.trained(i).network.config());
    return metadata;
  }

 protected:
  /// `own_metrics`: the names (with static storage) of the values the learner passes to
  /// finish_step, in that order. `evaluation_acting`: how the agent's evaluation actors act,
  /// recorded in checkpoints (a Policy made from one acts the same way).
  /// A learner of `networks` (the first one acts: its parameters are the ones inference reads).
  LearnerCore(std::string_view agent_name, const NetworkSetOptions& networks,
              const UnrollSpec& spec, std::span<const MetricInfo> own_metrics,
              ActingOptions evaluation_acting = {})
      : agent_name_(agent_name),
        evaluation_acting_(evaluation_acting),
        spec_(spec),
        own_metrics_(own_metrics.begin(), own_metrics.end()),
        networks_(networks),
        shared_(networks_.trained(0).network.parameters()) {
    const nn::NetworkOptions& acting = networks.trained.front().network;
    SEEDRL_REQUIRE(spec.observation.shape == acting.observation_shape, "Learner<", agent_name,
                   ">: observations ", spec.observation.to_string(),
                   " do not match the network's observation shape ", acting.observation_shape);
    SEEDRL_REQUIRE(spec.state_size == acting.lstm_size, "Learner<", agent_name,
                   ">: unroll state size ", spec.state_size,
                   " differs from the network's LSTM size ", acting.lstm_size);
    SEEDRL_REQUIRE(spec.num_actions == acting.num_actions, "Learner<", agent_name,
                   ">: unrolls have ", spec.num_actions, " actions, the network ",
                   acting.num_actions);
    SEEDRL_REQUIRE(spec.action_dims == acting.action_dims, "Learner<", agent_name,
                   ">: unrolls have box actions of ", spec.action_dims,
                   " dimensions, the network's Gaussian head ", acting.action_dims);
    if (spec.action_branches() > 0 || !acting.action_branches.empty())
      acting.require_branches_of(spec.action_spec, str_cat("Learner<", agent_name, ">"));
    // Every other trained network's gradient norm and learning rate, by name.
    for (std::size_t i = 1; i < networks_.trained_count(); ++i) {
      network_metric_names_.push_back("grad_norm/" + networks_.trained(i).options.name);
      network_metric_names_.push_back("learning_rate/" + networks_.trained(i).options.name);
    }
    for (std::size_t i = 0; i < network_metric_names_.size(); ++i)
      network_metrics_.push_back(
          {network_metric_names_[i], i % 2 == 0 ? Reduce::mean : Reduce::last});
  }
  /// A learner of one network made from the agent's options (named "online"), with `targets`.
  LearnerCore(std::string_view agent_name, const AgentOptions& options, const UnrollSpec& spec,
              std::span<const MetricInfo> own_metrics, ActingOptions evaluation_acting = {},
              std::vector<TargetNetworkOptions> targets = {})
      : LearnerCore(agent_name,
                    NetworkSetOptions{{{"online", options.network, options.optimizer,
                                        options.learning_rate, options.max_grad_norm}},
                                      std::move(targets)},
                    spec, own_metrics, evaluation_acting) {}

  const UnrollSpec& spec() const { return spec_; }
  std::string_view agent_name() const { return agent_name_; }

  /// The pass that computes on this learner's own networks, on the stepping thread (see
  /// learner/learner_pass.hpp); a learner casts it to its own pass type (make_pass).
  LearnerPass<B>& pass() { return workers_.pass(networks_, pass_maker()); }
  /// What a learner's make_pass gives every pass it makes.
  LearnerPassContext pass_context() const { return {&spec_, agent_name_, &steps_}; }
  /// A pass over `networks` (this learner's, a worker's replica, or a copy such as R2D2's
  /// inserter's): a learner whose loss needs buffers of its own returns its derived pass type.
  virtual std::unique_ptr<LearnerPass<B>> make_pass(NetworkSet<B>& networks) {
    return std::make_unique<LearnerPass<B>>(networks, pass_context());
  }

  /// The named trained networks start afresh, keeping everything else (NetworkSet::reinitialize,
  /// under the write lock: inference acts with the new values at once).
  void reinitialize_networks(std::span<const std::string_view> names, std::uint64_t generation) {
    SharedParameters::WriteGuard guard(shared_);
    for (std::string_view name : names) networks_.reinitialize(name, generation);
  }

  /// The end of every learner step, once the gradients are in network().parameters(): unless
  /// `finite` is false or a value or the gradient norm is not finite (then the step is skipped
  /// and counted), clip the gradients to max_grad_norm (0: only measure), take an optimizer step
  /// at the scheduled rate under the write lock, count it and publish the new version;
  /// `after_update()` runs under the same lock (e.g. a target-network copy). `values` are the
  /// learner's own metrics; `transitions` and `policy_lag` describe what it trained on.
  template <class AfterUpdate>
  LearnerStepStats finish_step(std::span<const double> values, std::int64_t transitions,
                               double policy_lag, bool finite, AfterUpdate after_update) {
    SEEDRL_REQUIRE(values.size() == own_metrics_.size(), "Learner<", agent_name_,
                   ">: ", values.size(), " metric values for ", own_metrics_.size(), " names");
    const bool own_verdict = finite;
    for (double v : values) finite = finite && std::isfinite(v);
    if (reducer_ != nullptr) {
      // The group's mean gradients; a step any member could not use is non-finite for all.
      reducer_->all_reduce_step(networks_.updating_gradients(), finite);
      finite = true;  // the gradient norms below decide, the same on every member
    }
    // Each network's gradients clipped to its own max_grad_norm (0: only measured); a step in
    // which any norm is not finite changes nothing.
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    const std::size_t count = networks_.trained_count();
    grad_norms_.assign(count, kNaN);
    std::size_t bad = count;
    for (std::size_t i = 0; i < count; ++i) {
      typename NetworkSet<B>::Trained& t = networks_.trained(i);
      if (!t.updating) continue;
      nn::ParameterStore& store = t.network.parameters();
      grad_norms_[i] = !finite ? kNaN
                       : t.options.max_grad_norm > 0.0
                           ? nn::clip_by_global_norm<B>(store, t.options.max_grad_norm)
                           : nn::global_grad_norm<B>(store);
      if (!std::isfinite(grad_norms_[i]) && bad == count) bad = i;
    }
    LearnerStepStats stats;
    stats.skipped = bad < count;
    if (stats.skipped) {
      stats.skip = skipped_.skipped(steps_, [&] {
        return diagnose_non_finite(networks_.trained(bad).network.parameters(), values,
                                   own_metrics_, own_verdict, grad_norms_[bad]);
      });
    } else {
      skipped_.applied();
      SharedParameters::WriteGuard guard(shared_);
      for (std::size_t i = 0; i < count; ++i) {
        typename NetworkSet<B>::Trained& t = networks_.trained(i);
        if (t.updating)
          t.optimizer->step(static_cast<float>(t.options.learning_rate.at(steps_)),
                            workers_.optimizer_split());
      }
      ++steps_;
      networks_.update_targets(steps_);
      shared_.publish(steps_);
      after_update();
    }
    stats.step = steps_;
    for (std::size_t i = 0; i < values.size(); ++i) stats.metrics.add(own_metrics_[i], values[i]);
    const auto rate = [&](std::size_t i) {
      return networks_.trained(i).options.learning_rate.at(steps_.load() - (stats.skipped ? 0 : 1));
    };
    const double common[] = {grad_norms_[0], rate(0), policy_lag, static_cast<double>(transitions),
                             static_cast<double>(skipped_.total())};
    for (std::size_t i = 0; i < std::size(kCommonMetrics); ++i)
      stats.metrics.add(kCommonMetrics[i], common[i]);
    for (std::size_t i = 1; i < count; ++i) {
      stats.metrics.add(network_metrics_[2 * (i - 1)], grad_norms_[i]);
      stats.metrics.add(network_metrics_[2 * (i - 1) + 1], rate(i));
    }
    return stats;
  }
  LearnerStepStats finish_step(std::span<const double> values, const Transitions& tr) {
    return finish_step(values, tr.count, tr.policy_lag, true, [] {});
  }

  /// What computing one batch's (or micro-batch's) gradients gives (learner/pass_result.hpp).
  using Gradients = PassResult;

  /// Whether the learner's loss is a mean over the items of its batch, so that micro-batches
  /// and workers can split it (set_workers).
  virtual bool splits_batches() const { return false; }

  /// The gradients of a batch of `count` items (unrolls, sequences) in the networks' gradients:
  /// `fn(pass, first, n)` computes those of items [first, first + n) with `pass` (a Pass: this
  /// learner's pass(), or a worker's over a replica of the networks) and returns the rest. One
  /// pass over the whole batch, or micro-batches over the workers (see the top).
  template <class Pass, class Fn>
  Gradients gradients(std::int64_t count, Fn fn) {
    pass();
    return workers_.template gradients<Pass>(networks_, count, fn);
  }

  template <class AfterUpdate>
  LearnerStepStats finish_step(const Gradients& g, AfterUpdate after_update) {
    return finish_step(g.values, g.transitions, g.policy_lag, g.finite, after_update);
  }
  LearnerStepStats finish_step(const Gradients& g) {
    return finish_step(g, [] {});
  }

  /// A learner's own checkpoint state (R2D2, SAC: the replay), saved beside the checkpoint; empty:
  /// none. Called without the parameters' lock, from the checkpointing thread.
  virtual std::string save_state() { return {}; }
  /// Restores save_state()'s bytes (of the checkpoint at `checkpoint`), or throws naming it and
  /// changing nothing. Called by load_checkpoint under the write lock, after parameters and
  /// optimizer state.
  virtual void load_state(std::string_view /*state*/, const std::string& /*checkpoint*/) {}
  /// Called by join_group under the write lock once the group's parameters are in place.
  virtual void parameters_replaced() {}

 private:
  static constexpr MetricInfo kCommonMetrics[] = {
      {"grad_norm"},   {"learning_rate", Reduce::last}, {"policy_lag", Reduce::mean, "lag"},
      {"transitions"}, {"skipped_steps", Reduce::last},
  };

  const std::string agent_name_;
  const ActingOptions evaluation_acting_;
  const UnrollSpec spec_;
  const std::vector<MetricInfo> own_metrics_;
  std::vector<std::string> network_metric_names_;  // grad_norm/<name>, learning_rate/<name>
  std::vector<MetricInfo> network_metrics_;        // views of the names above
  NetworkSet<B> networks_;
  SharedParameters shared_;
  std::vector<double> grad_norms_;      // of the last step, per trained network
  std::atomic<std::int64_t> steps_{0};  // read by reporting threads
  SkippedSteps skipped_;
  GradientReducer* reducer_ = nullptr;

  // The passes, and the micro-batches and workers (set_workers): after networks_, whose values
  // the workers' replicas read.
  LearnerWorkers<B> workers_;

  auto pass_maker() {
    return [this](NetworkSet<B>& networks) { return make_pass(networks); };
  }
};

// Compiled once, in the library (src/learner/learner_core.cpp).
extern template class LearnerCore<cpu::Backend>;
// On the CUDA backend, in seedrl::cuda (src/session/cuda_templates.cpp).
#ifdef SEEDRL_CUDA_SESSIONS
extern template class LearnerCore<cuda::Backend>;
#endif

}  // namespace seedrl
