// LearnerWorkers<Backend>: a learner's passes, and its micro-batches and workers (set_workers in
// learner/learner_core.hpp). Pass 0 computes on the learner's own networks on the stepping thread;
// with W workers, passes 1 .. W-1 compute on replicas of the networks that read the learner's
// values, on a WorkerTeam's threads. A batch of M micro-batches has its gradients summed, weighted,
// in micro-batch order (learner/micro_batch_sum.hpp): the same bits for any thread count. The team
// also splits the optimizer's element-wise update (optimizer_split()).
//
// Thread-safety: the stepping thread's; the team's threads only run what gradients() gives them.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "seedrl/core/tensor.hpp"
#include "seedrl/core/thread_priority.hpp"
#include "seedrl/learner/learner_pass.hpp"
#include "seedrl/learner/micro_batch_sum.hpp"
#include "seedrl/learner/network_set.hpp"
#include "seedrl/learner/pass_result.hpp"
#include "seedrl/learner/worker_team.hpp"
#include "seedrl/nn/optimizer.hpp"

namespace seedrl {

template <nn::Backend B>
class LearnerWorkers {
 public:
  /// Pass 0, over `own` (the learner's networks), made by `make(own)` on first use.
  template <class MakePass>
  LearnerPass<B>& pass(NetworkSet<B>& own, MakePass&& make) {
    if (passes_.empty()) passes_.push_back(make(own));
    return *passes_.front();
  }

  /// `workers` passes (the learner's and one per replica of `own`, each made by `make`) and
  /// `micro_batches` parts per batch. Settings are the learner's to check.
  template <class MakePass>
  void configure(int workers, int micro_batches, NetworkSet<B>& own, MakePass&& make) {
    pass(own, make);
    passes_.resize(1);
    replica_sets_.clear();
    for (int w = 1; w < workers; ++w) {
      auto replica = std::make_unique<NetworkSet<B>>(own.options(), false);
      replica->alias_values_of(own);
      passes_.push_back(make(*replica));
      replica_sets_.push_back(std::move(replica));
    }
    team_.reset();
    if (workers > 1)
      team_ = std::make_unique<WorkerTeam>(
          workers, "seedrl-learner",
          [] {
            if constexpr (requires { B::set_num_threads(1); }) B::set_num_threads(1);
            // The helpers take only what inference and the actors leave free: at normal priority
            // they delayed inference and the pipeline lost more than it gained
            // (docs/performance.md).
            set_background_priority();
          },
          kWorkerPoll);
    // The optimizer's element-wise update in blocks of whole vectors, shared by the workers.
    optimizer_split_ = nullptr;
    if (team_) {
      optimizer_split_ = [this](std::int64_t n, const nn::Optimizer::Range& range) {
        constexpr std::int64_t kBlock = 16384;
        team_->run((n + kBlock - 1) / kBlock, [&](std::int64_t b, int /*worker*/) {
          range(b * kBlock, std::min(n, (b + 1) * kBlock));
        });
      };
    }
    micro_batches_ = micro_batches;
  }

  int workers() const { return static_cast<int>(replica_sets_.size()) + 1; }
  int micro_batches() const { return micro_batches_; }
  /// The optimizer's update split over the workers (empty: one thread).
  const nn::Optimizer::Splitter& optimizer_split() const { return optimizer_split_; }

  /// The gradients of a batch of `count` items in `own`'s gradients: `fn(pass, first, n)`
  /// computes those of items [first, first + n) with `pass` (a Pass: pass 0, or a worker's) and
  /// returns the rest. One pass over the whole batch, or the micro-batches over the workers.
  /// Pass 0 must exist (pass()).
  template <class Pass, class Fn>
  PassResult gradients(NetworkSet<B>& own, std::int64_t count, Fn fn) {
    auto pass_of = [&](int worker) -> Pass& {
      return static_cast<Pass&>(*passes_[static_cast<std::size_t>(worker)]);
    };
    const std::int64_t parts = std::min<std::int64_t>(micro_batches_, count);
    if (parts <= 1) return fn(pass_of(0), std::int64_t{0}, count);
    summed_.resize(own.trained_count());
    for (std::size_t k = 0; k < summed_.size(); ++k) summed_[k] = own.trained(k).updating;
    return micro_batch_sum_.run(
        count, parts, workers(), team_.get(), summed_,
        [&](int worker, std::size_t k) -> const Tensor& {
          return pass_of(worker).networks().trained(k).network.parameters().grads();
        },
        [&](int worker, std::int64_t first, std::int64_t n) {
          return fn(pass_of(worker), first, n);
        });
  }

 private:
  // How long idle workers poll before they sleep (WorkerTeam): a step's parts follow each other
  // within microseconds; waking a sleeping thread cost more than a micro-batch gained
  // (docs/performance.md, learner workers).
  static constexpr std::chrono::microseconds kWorkerPoll{2000};

  int micro_batches_ = 1;
  std::vector<std::unique_ptr<NetworkSet<B>>> replica_sets_;  // workers 1.. (before passes_)
  std::unique_ptr<WorkerTeam> team_;
  nn::Optimizer::Splitter optimizer_split_;  // over team_, when there is one
  MicroBatchSum<B> micro_batch_sum_;
  std::vector<char> summed_;  // per trained network: whether its gradients are summed
  // Pass 0 on the learner's networks (the stepping thread), then one per worker over
  // replica_sets_: last, so that the passes go before the replicas they compute on.
  std::vector<std::unique_ptr<LearnerPass<B>>> passes_;
};

}  // namespace seedrl
