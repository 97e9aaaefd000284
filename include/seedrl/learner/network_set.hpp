// NetworkSet<Backend>: the networks a learner trains, each with its own optimizer, learning-rate
// schedule and gradient clipping, and the target networks that follow them.
//
//   trained[0]   the network inference reads (the agent's): its checkpoint tensors keep their own
//                names, so that Policy reads any learner's checkpoint
//   trained[i]   e.g. SAC's critics: "<name>/..." in checkpoints, grad_norm/<name> and
//                learning_rate/<name> in the metrics
//   targets      follow a trained network: a copy every copy_period updates (R2D2's "target"), or
//                Polyak averaging after every update, t = (1 - tau) t + tau s (SAC's critics)
//
// LearnerCore (learner/learner_core.hpp) owns one: every trained network with its optimizer state
// and every target goes into checkpoints, join_group and the gradient all-reduce. A learner
// worker's set is a replica (alias_values_of): its networks read the owner's values and have
// gradients of their own.
//
// Thread-safety: none; LearnerCore writes values only under SharedParameters' write lock.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/io/checkpoint.hpp"
#include "seedrl/learner/training_group.hpp"
#include "seedrl/nn/learning_rate.hpp"
#include "seedrl/nn/network.hpp"
#include "seedrl/nn/optimizer.hpp"

namespace seedrl {

/// A network a learner trains.
struct TrainedNetworkOptions {
  std::string name = "online";
  nn::NetworkOptions network;
  nn::OptimizerOptions optimizer;
  nn::LinearDecay learning_rate{0.00048, 0, 0.0};
  double max_grad_norm = 40.0;  ///< global-norm clipping of this network's gradients; 0: none
};

/// A network that follows a trained one (`source`): exactly one of copy_period and polyak_tau.
struct TargetNetworkOptions {
  std::string name;
  std::string source;
  std::int64_t copy_period = 0;  ///< > 0: a copy of the source after every this many updates
  double polyak_tau = 0.0;       ///< in (0, 1]: t = (1 - tau) t + tau s after every update
};

struct NetworkSetOptions {
  std::vector<TrainedNetworkOptions> trained;  ///< the first: the network inference reads
  std::vector<TargetNetworkOptions> targets;

  /// Throws seedrl::Error naming the first bad setting as `owner`.<field>.
  void validate(std::string_view owner) const {
    SEEDRL_REQUIRE(!trained.empty(), owner, ": a learner trains at least one network");
    std::vector<std::string_view> names;
    auto add_name = [&](const std::string& name, const char* what) {
      SEEDRL_REQUIRE(!name.empty() && name.find('/') == std::string::npos, owner, ": ", what,
                     " network name '", name, "' must be non-empty and without '/'");
      for (std::string_view seen : names)
        SEEDRL_REQUIRE(seen != name, owner, ": two networks are named '", name, "'");
      names.push_back(name);
    };
    for (const TrainedNetworkOptions& t : trained) {
      add_name(t.name, "trained");
      t.network.validate(str_cat(owner, ".", t.name, ".network"));
      t.learning_rate.validate(str_cat(owner, ".", t.name, ".learning_rate"));
      SEEDRL_REQUIRE(t.max_grad_norm >= 0.0 && std::isfinite(t.max_grad_norm), owner, ".", t.name,
                     ".max_grad_norm must be finite and >= 0, got ", t.max_grad_norm);
    }
    for (const TargetNetworkOptions& t : targets) {
      add_name(t.name, "target");
      bool found = false;
      for (const TrainedNetworkOptions& s : trained) found = found || s.name == t.source;
      SEEDRL_REQUIRE(found, owner, ".", t.name, ".source '", t.source,
                     "' is not a trained network");
      SEEDRL_REQUIRE(t.copy_period >= 0 && t.polyak_tau >= 0.0 && t.polyak_tau <= 1.0, owner, ".",
                     t.name, ": copy_period must be >= 0 and polyak_tau in [0, 1], got ",
                     t.copy_period, " and ", t.polyak_tau);
      SEEDRL_REQUIRE((t.copy_period > 0) != (t.polyak_tau > 0.0), owner, ".", t.name,
                     ": set exactly one of copy_period and polyak_tau, got ", t.copy_period,
                     " and ", t.polyak_tau);
    }
  }
};

template <nn::Backend B>
class NetworkSet {
 public:
  struct Trained {
    Trained(const TrainedNetworkOptions& o, bool with_optimizer)
        : options(o),
          network(o.network),
          optimizer(with_optimizer ? nn::make_optimizer<B>(network.parameters(), o.optimizer)
                                   : nullptr) {}
    const TrainedNetworkOptions options;
    nn::Network<B> network;
    std::unique_ptr<nn::Optimizer> optimizer;  ///< null in a replica
    /// Whether finish_step applies this network's gradients (a learner may pause one, e.g. a
    /// delayed actor update); every member of a group must agree.
    bool updating = true;
  };
  struct Target {
    Target(const TargetNetworkOptions& o, std::size_t source_index, const nn::NetworkOptions& c)
        : options(o), source(source_index), network(c) {}
    const TargetNetworkOptions options;
    const std::size_t source;  ///< index of the trained network it follows
    nn::Network<B> network;
  };

  /// Builds the networks (targets start as copies of their sources). Without optimizers: a
  /// replica's or an evaluator's set.
  explicit NetworkSet(const NetworkSetOptions& options, bool with_optimizers = true)
      : options_(options) {
    options.validate("NetworkSet");
    for (const TrainedNetworkOptions& t : options.trained)
      trained_.push_back(std::make_unique<Trained>(t, with_optimizers));
    for (const TargetNetworkOptions& t : options.targets) {
      const std::size_t source = trained_index(t.source);
      targets_.push_back(std::make_unique<Target>(t, source, trained_[source]->options.network));
    }
    reset_targets();
  }

  /// What the set was made from (a replica is made from the same).
  const NetworkSetOptions& options() const { return options_; }
  std::size_t trained_count() const { return trained_.size(); }
  Trained& trained(std::size_t i) { return *trained_.at(i); }
  const Trained& trained(std::size_t i) const { return *trained_.at(i); }
  Trained& trained(std::string_view name) { return *trained_[trained_index(name)]; }
  std::size_t target_count() const { return targets_.size(); }
  Target& target(std::size_t i) { return *targets_.at(i); }
  const Target& target(std::size_t i) const { return *targets_.at(i); }

  /// The trained or target network named `name`; throws seedrl::Error naming it when none is.
  nn::Network<B>& network(std::string_view name) {
    for (auto& t : trained_)
      if (t->options.name == name) return t->network;
    for (auto& t : targets_)
      if (t->options.name == name) return t->network;
    fail("NetworkSet: no network named '", name, "' (", names(), ")");
  }

  /// Every network's name and values, trained then targets (for a group's checks).
  struct NamedValues {
    std::string_view name;
    Tensor values;
  };
  std::vector<NamedValues> values() const {
    std::vector<NamedValues> out;
    for (const auto& t : trained_)
      out.push_back({t->options.name, t->network.parameters().values()});
    for (const auto& t : targets_)
      out.push_back({t->options.name, t->network.parameters().values()});
    return out;
  }

  /// The gradients of the networks being updated (the ones finish_step applies).
  std::vector<Tensor> updating_gradients() const {
    std::vector<Tensor> out;
    for (const auto& t : trained_)
      if (t->updating) out.push_back(t->network.parameters().grads());
    return out;
  }

  /// After update number `steps` (1-based): copies and Polyak averages due now.
  void update_targets(std::int64_t steps) {
    for (auto& t : targets_) {
      nn::ParameterStore& source = trained_[t->source]->network.parameters();
      nn::ParameterStore& target = t->network.parameters();
      if (t->options.copy_period > 0) {
        if (steps % t->options.copy_period == 0) target.copy_values_from(source);
      } else {
        polyak(target, source, t->options.polyak_tau);
      }
    }
  }

  /// Every target becomes a copy of its source.
  void reset_targets() {
    for (auto& t : targets_)
      t->network.parameters().copy_values_from(trained_[t->source]->network.parameters());
  }

  /// The trained network `name` starts afresh (a reset: Nikishin et al. 2022, "The Primacy Bias in
  /// Deep Reinforcement Learning"): values drawn as by a new network of its options whose seed is
  /// mixed with `generation` (so every member of a group draws the same ones), its optimizer's
  /// state zeroed and its step count 0 (Adam's bias correction starts over), and its targets
  /// copies of it. The caller holds the write lock and bumps nothing else.
  void reinitialize(std::string_view name, std::uint64_t generation) {
    Trained& t = *trained_[trained_index(name)];
    nn::NetworkOptions fresh_options = t.options.network;
    fresh_options.seed = mix_seed(fresh_options.seed, generation);
    const nn::Network<B> fresh(fresh_options);
    t.network.parameters().copy_values_from(fresh.parameters());
    if (t.optimizer != nullptr) {
      for (const nn::OptimizerSlot& slot : t.optimizer->slots())
        slot.value.copy_from(
            Tensor::zeros(slot.value.shape(), slot.value.dtype(), slot.value.device()));
      t.optimizer->set_steps(0);
    }
    for (auto& target : targets_)
      if (trained_[target->source].get() == &t)
        target->network.parameters().copy_values_from(t.network.parameters());
  }
  /// The seed reinitialize(generation) gives a network of `seed` (generation 0: `seed`).
  static std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t generation) {
    return generation == 0 ? seed : seed ^ (0x9e3779b97f4a7c15ULL * generation);
  }

  /// Every network of this set reads the values of the same network of `owner` (same options):
  /// a learner worker's replica.
  void alias_values_of(NetworkSet& owner) {
    require_same_names(owner);
    for (std::size_t i = 0; i < trained_.size(); ++i)
      trained_[i]->network.parameters().alias_values(owner.trained_[i]->network.parameters());
    for (std::size_t i = 0; i < targets_.size(); ++i)
      targets_[i]->network.parameters().alias_values(owner.targets_[i]->network.parameters());
  }
  /// Every network of this set takes a copy of `other`'s values.
  void copy_values_from(const NetworkSet& other) {
    require_same_names(other);
    for (std::size_t i = 0; i < trained_.size(); ++i)
      trained_[i]->network.parameters().copy_values_from(other.trained_[i]->network.parameters());
    for (std::size_t i = 0; i < targets_.size(); ++i)
      targets_[i]->network.parameters().copy_values_from(other.targets_[i]->network.parameters());
  }

  /// The checkpoint parts (io/checkpoint.hpp): the trained networks with their optimizers (the
  /// first under its own names), then the targets, optional (a file without them re-derives them
  /// from their sources: see restore_missing_targets).
  std::vector<io::CheckpointPart> checkpoint_parts() {
    std::vector<io::CheckpointPart> parts;
    for (std::size_t i = 0; i < trained_.size(); ++i)
      parts.push_back({i == 0 ? std::string() : trained_[i]->options.name,
                       &trained_[i]->network.parameters(), trained_[i]->optimizer.get()});
    for (auto& t : targets_)
      parts.push_back({t->options.name, &t->network.parameters(), nullptr, true});
    return parts;
  }
  /// After a load of checkpoint_parts(): the targets the file did not hold become copies.
  void restore_missing_targets(std::span<const io::CheckpointPart> loaded) {
    for (std::size_t i = 0; i < targets_.size(); ++i)
      if (!loaded[trained_.size() + i].loaded)
        targets_[i]->network.parameters().copy_values_from(
            trained_[targets_[i]->source]->network.parameters());
  }

  /// The root's networks, optimizer states and optimizer step counts on every member of `group`.
  void broadcast(TrainingGroup& group) {
    for (auto& t : trained_) {
      group.broadcast(t->network.parameters().values());
      for (const nn::OptimizerSlot& slot : t->optimizer->slots()) group.broadcast(slot.value);
      t->optimizer->set_steps(group.broadcast_count(t->optimizer->steps()));
      t->network.parameters().bump_version();
    }
    for (auto& t : targets_) {
      group.broadcast(t->network.parameters().values());
      t->network.parameters().bump_version();
    }
  }

  /// "online, target" and so on, for messages.
  std::string names() const {
    std::string out;
    for (const auto& t : trained_) out += (out.empty() ? "" : ", ") + t->options.name;
    for (const auto& t : targets_) out += (out.empty() ? "" : ", ") + t->options.name;
    return out;
  }

 private:
  std::size_t trained_index(std::string_view name) const {
    for (std::size_t i = 0; i < trained_.size(); ++i)
      if (trained_[i]->options.name == name) return i;
    fail("NetworkSet: no trained network named '", name, "' (", names(), ")");
  }

  void require_same_names(const NetworkSet& other) const {
    SEEDRL_REQUIRE(names() == other.names(), "NetworkSet: networks ", names(), " and ",
                   other.names(), " differ");
  }

  // t = (1 - tau) t + tau s, element-wise on the backend's device.
  void polyak(nn::ParameterStore& target, const nn::ParameterStore& source, double tau) {
    const Tensor& t = target.values();
    const Tensor scaled = polyak_scratch_.view(t.shape());
    scaled.copy_from(source.values());
    B::scale(scaled, static_cast<float>(tau));
    B::scale(t, static_cast<float>(1.0 - tau));
    B::add_to(t, scaled);
    target.bump_version();
  }

  const NetworkSetOptions options_;
  std::vector<std::unique_ptr<Trained>> trained_;
  std::vector<std::unique_ptr<Target>> targets_;
  ScratchBuffer polyak_scratch_{B::device};
};

}  // namespace seedrl
