// Self-play's frozen opponents at the inference server (issue 37).
//
//   OpponentTable   which policy acts for each slot: the learner's (its steps train), the
//                   learner's without training (its latest self as an opponent), or opponent set
//                   k >= 1 (a snapshot's parameter values, kept here); shared by the actors, who
//                   assign a game's seats, the league, which puts and retires sets, and the server
//   OpponentActing  the server's networks for opponent sets: for the rows of a batch that opponent
//                   sets serve, one forward per set on its values and the agent's own action
//                   selection. Each set in use has a network of its own, loaded once: a batch
//                   holds several sets, and loading one network in turn for each copied the
//                   whole model (and repacked its weights) for every set of every batch.
//
// Opponent rows travel in the learner's batches and are answered with them; they never reach an
// unroll, the episode figures or the frame count. A set that is retired while games still use it
// stays until the last slot assigned to it moves on, so a game never changes opponent halfway.
//
// Thread-safety: OpponentTable's members from any thread. OpponentActing is the inference
// thread's (loads() from any thread).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "seedrl/agent/agent.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/core/step_flags.hpp"
#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/inference/batch_outcomes.hpp"
#include "seedrl/nn/network.hpp"
#include "seedrl/shared/staging.hpp"

namespace seedrl {

namespace policy_ids {
inline constexpr std::int32_t kLearner = 0;  ///< the learner's values; the slot's steps train
inline constexpr std::int32_t kLatest = -1;  ///< the learner's values; nothing is kept
}  // namespace policy_ids

class OpponentTable {
 public:
  explicit OpponentTable(std::int32_t max_slots)
      : max_slots_(max_slots),
        policies_(static_cast<std::size_t>(std::max(max_slots, 0)), policy_ids::kLearner) {
    SEEDRL_REQUIRE(max_slots > 0, "OpponentTable: max_slots must be positive, got ", max_slots);
  }

  std::int32_t max_slots() const { return max_slots_; }

  /// Adds opponent set `id` (>= 1) with the parameter values `values` (the table keeps the
  /// handle; nobody may write them afterwards).
  void put(std::int32_t id, Tensor values) SEEDRL_EXCLUDES(mutex_) {
    SEEDRL_REQUIRE(id >= 1, "OpponentTable: an opponent set's id must be >= 1, got ", id);
    SEEDRL_REQUIRE(values.defined(), "OpponentTable: opponent set ", id, " has no values");
    MutexLock lock(mutex_);
    SEEDRL_REQUIRE(!sets_.contains(id), "OpponentTable: opponent set ", id, " is already held");
    sets_.emplace(id, Set{std::move(values), 0, false});
  }

  /// Retires set `id`: it goes once no slot is assigned to it (at once when none is).
  void retire(std::int32_t id) SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    auto it = sets_.find(id);
    if (it == sets_.end()) return;
    it->second.retired = true;
    if (it->second.slots == 0) sets_.erase(it);
  }

  /// Whether set `id` is held and not retired (a game may start against it).
  bool available(std::int32_t id) const SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    auto it = sets_.find(id);
    return it != sets_.end() && !it->second.retired;
  }
  /// Sets held, retired ones included.
  std::size_t size() const SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return sets_.size();
  }

  /// From the slot's next step on, `policy` acts for `slot`: policy_ids::kLearner,
  /// policy_ids::kLatest or a held, unretired set. Returns false (and changes nothing) for a set
  /// that is not available, so that the caller draws another opponent.
  bool assign(std::int32_t slot, std::int32_t policy) SEEDRL_EXCLUDES(mutex_) {
    SEEDRL_REQUIRE(slot >= 0 && slot < max_slots(), "OpponentTable: slot ", slot,
                   " is outside [0, ", max_slots(), ")");
    SEEDRL_REQUIRE(policy >= policy_ids::kLatest, "OpponentTable: no policy ", policy);
    MutexLock lock(mutex_);
    if (policy >= 1) {
      auto it = sets_.find(policy);
      if (it == sets_.end() || it->second.retired) return false;
      ++it->second.slots;
    }
    release(policies_[static_cast<std::size_t>(slot)]);
    policies_[static_cast<std::size_t>(slot)] = policy;
    return true;
  }

  /// The policy of each of `slots`, and the values of the sets among them (inference thread).
  void lookup(std::span<const std::int32_t> slots, std::vector<std::int32_t>& policies,
              std::map<std::int32_t, Tensor>& values) const SEEDRL_EXCLUDES(mutex_) {
    policies.resize(slots.size());
    values.clear();
    MutexLock lock(mutex_);
    for (std::size_t i = 0; i < slots.size(); ++i) {
      const std::int32_t p = policies_[static_cast<std::size_t>(slots[i])];
      policies[i] = p;
      if (p >= 1 && !values.contains(p)) values.emplace(p, sets_.at(p).values);
    }
  }

 private:
  struct Set {
    Tensor values;
    std::int64_t slots = 0;  // slots assigned to it
    bool retired = false;
  };

  void release(std::int32_t policy) SEEDRL_REQUIRES(mutex_) {
    if (policy < 1) return;
    auto it = sets_.find(policy);
    if (--it->second.slots == 0 && it->second.retired) sets_.erase(it);
  }

  const std::int32_t max_slots_;
  mutable Mutex mutex_;
  std::vector<std::int32_t> policies_ SEEDRL_GUARDED_BY(mutex_);
  std::map<std::int32_t, Set> sets_ SEEDRL_GUARDED_BY(mutex_);
};

/// The inference thread's networks for opponent sets (feed-forward networks, discrete actions).
template <Agent A, nn::Backend B>
class OpponentActing {
 public:
  /// A set's network is set aside once the set has been in none of this many batches in a row
  /// (its games are over: the league retired it, or no game draws it now). Networks set aside
  /// serve the next sets (building one initialises values only to overwrite them: an orthogonal
  /// initialisation's QR took 6% of a self-play run's CPU); at most kSpare are kept.
  static constexpr std::uint64_t kIdleBatches = 1024;
  static constexpr std::size_t kSpare = 4;

  explicit OpponentActing(const A& agent) : config_(agent.network_config()) {
    SEEDRL_REQUIRE(agent.network_config().lstm_size == 0,
                   "InferenceServer: opponent sets need a feed-forward network (lstm_size 0), "
                   "got lstm_size ",
                   agent.network_config().lstm_size);
  }

  /// For the rows i of the batch with policies[i] >= 1 that do not wait (`flags[i]`): actions
  /// (K per row, into `actions`) of the set's values on `observations` ([1, N, obs...], on the
  /// host), honouring the rows of `context.action_mask`. A waiting row's action is left as it is.
  /// A set that cannot act (values that do not fit the network) fails the requests of its rows
  /// in `outcomes`; the other sets act.
  void act(const A& agent, std::span<const std::int32_t> policies,
           std::span<const std::uint8_t> flags, const std::map<std::int32_t, Tensor>& values,
           const Tensor& observations, std::span<const std::int32_t> slots,
           const ActingContext& context, std::span<std::int32_t> actions, Rng& rng,
           BatchOutcomes& outcomes) {
    const auto k = static_cast<std::size_t>(std::max<std::int64_t>(context.branches.count(), 1));
    const Tensor frames = observations[0];
    const std::int64_t row_bytes = frames.bytes() / std::max<std::int64_t>(frames.dim(0), 1);
    const auto mask_width = context.action_mask.size() / std::max<std::size_t>(policies.size(), 1);
    for (const auto& [id, set_values] : values) {
      rows_.clear();
      for (std::size_t i = 0; i < policies.size(); ++i)
        if (policies[i] == id && !is_waiting(flags[i])) rows_.push_back(i);
      if (rows_.empty()) continue;  // every row of the set waits
      const auto m = static_cast<std::int64_t>(rows_.size());
      const Tensor batch =
          observation_buffer_.view(frames.shape().drop_front().prepend({1, m}), frames.dtype());
      masks_.resize(rows_.size() * mask_width);
      sub_slots_.resize(rows_.size());
      for (std::size_t j = 0; j < rows_.size(); ++j) {
        const auto row = static_cast<std::int64_t>(rows_[j]);
        std::memcpy(batch[0].row_data(static_cast<std::int64_t>(j)), frames.row_data(row),
                    static_cast<std::size_t>(row_bytes));
        std::copy_n(
            context.action_mask.begin() + static_cast<std::ptrdiff_t>(rows_[j] * mask_width),
            mask_width, masks_.begin() + static_cast<std::ptrdiff_t>(j * mask_width));
        sub_slots_[j] = slots[rows_[j]];
      }
      nn::Network<B>* loaded = nullptr;
      try {
        loaded = &load(id, set_values);
      } catch (const std::exception& e) {
        outcomes.fail_rows(rows_, Status::internal(e.what()));
        continue;
      }
      nn::Network<B>& network = *loaded;
      const Tensor resets = reset_buffer_.view({1, m}, DType::u8);
      resets.fill_zero();
      const nn::NetworkOutputs& outputs =
          host_outputs_(network.forward(device_observations_(batch), {}, resets));
      evaluation_.assign(rows_.size(), 0);
      sub_actions_.resize(rows_.size() * k);
      select_actions(agent, outputs, sub_slots_, evaluation_, sub_actions_, rng,
                     ActingContext{masks_, context.branches});
      for (std::size_t j = 0; j < rows_.size(); ++j)
        std::copy_n(sub_actions_.begin() + static_cast<std::ptrdiff_t>(j * k), k,
                    actions.begin() + static_cast<std::ptrdiff_t>(rows_[j] * k));
    }
    ++batches_;
    for (auto it = networks_.begin(); it != networks_.end();) {
      if (batches_ - it->second.seen <= kIdleBatches) {
        ++it;
        continue;
      }
      if (spare_.size() < kSpare) spare_.push_back(std::move(it->second.network));
      it = networks_.erase(it);
    }
  }

  /// Times a set's values were copied into a network: once per set while it stays in use (any
  /// thread).
  std::int64_t loads() const { return loads_.load(std::memory_order_relaxed); }
  /// Networks built (the rest of the loads reused one set aside; any thread).
  std::int64_t networks_built() const { return built_.load(std::memory_order_relaxed); }

 private:
  struct Loaded {
    std::unique_ptr<nn::Network<B>> network;
    const void* from = nullptr;  // the values it holds
    std::uint64_t seen = 0;      // the last batch that used it
  };

  // Set `id`'s network, its values loaded unless they already are.
  nn::Network<B>& load(std::int32_t id, const Tensor& values) {
    Loaded& l = networks_[id];
    l.seen = batches_;
    if (!l.network && !spare_.empty()) {
      l.network = std::move(spare_.back());
      spare_.pop_back();
    }
    if (!l.network) {
      l.network = std::make_unique<nn::Network<B>>(config_);
      built_.fetch_add(1, std::memory_order_relaxed);
    }
    nn::ParameterStore& parameters = l.network->parameters();
    if (values.raw_data() != l.from) {
      SEEDRL_REQUIRE(values.numel() == parameters.flat_size(), "InferenceServer: opponent set ", id,
                     " holds ", values.numel(), " values, the network has ",
                     parameters.flat_size());
      parameters.values().copy_from(values);
      parameters.bump_version();
      l.from = values.raw_data();
      loads_.fetch_add(1, std::memory_order_relaxed);
    }
    return *l.network;
  }

  nn::NetworkOptions config_;
  std::map<std::int32_t, Loaded> networks_;
  std::vector<std::unique_ptr<nn::Network<B>>> spare_;
  std::uint64_t batches_ = 0;
  std::atomic<std::int64_t> loads_{0}, built_{0};
  std::vector<std::size_t> rows_;
  std::vector<std::uint8_t> masks_, evaluation_;
  std::vector<std::int32_t> sub_slots_, sub_actions_;
  ScratchBuffer observation_buffer_ = ScratchBuffer::pinned(B::device),
                reset_buffer_ = ScratchBuffer::pinned(B::device);
  StagingBuffer device_observations_{B::device};
  HostOutputs host_outputs_{B::device};
};

}  // namespace seedrl
