// MicroBatchSum<Backend>: a batch's gradients computed in micro-batches by a team of workers and
// summed, weighted, in micro-batch order: the whole batch's mean, whichever worker did which, and
// the same bits for any thread count (docs/runtime.md, "Learner workers and micro-batches").
//
//   micro-batch i ──pass(worker, first, n)──▶ the gradients of every network in the worker's set
//   then, per network: grads = sum_i weight_i grads_i / sum_i weight_i
//
// LearnerCore (learner/learner_core.hpp) owns one; it keeps the buffers between steps.
// Not thread-safe: one thread calls run() (the team's workers run the parts).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/learner/pass_result.hpp"
#include "seedrl/learner/worker_team.hpp"
#include "seedrl/nn/backend.hpp"

namespace seedrl {

template <nn::Backend B>
class MicroBatchSum {
 public:
  // Backends with a host-memory weighted sum (the CPU backend) combine micro-batches in place.
  static constexpr bool kFused =
      requires(float* out, std::span<const float* const> parts, std::span<const float> weights) {
    B::weighted_sum(out, parts, weights, 1.0f, std::int64_t{0}, std::int64_t{0});
  };

  /// The gradients of `count` items in `parts` micro-batches over `workers` workers (`team` runs
  /// them; null: all on this thread). `pass(worker, first, n)` computes the gradients of items
  /// [first, first + n) in worker `worker`'s networks and returns the rest; `grads(worker, k)` is
  /// worker `worker`'s gradient buffer of network k (0 .. networks - 1), and `summed[k]` says
  /// whether network k's gradients are wanted. On return worker 0's buffers hold the sums.
  template <class Grads, class Pass>
  PassResult run(std::int64_t count, std::int64_t parts, int workers, WorkerTeam* team,
                 std::span<const char> summed, Grads grads, Pass pass) {
    const std::size_t nets = summed.size(), n_parts = static_cast<std::size_t>(parts);
    while (buffers_.size() < n_parts * nets) buffers_.emplace_back(B::device);
    auto buffer = [&](std::size_t i, std::size_t k) {
      return buffers_[i * nets + k].view(grads(0, k).shape());
    };
    results_.resize(n_parts);
    sums_.resize(n_parts * nets);
    // CPU: a micro-batch's gradients stay in its worker's own buffers, and are copied out only
    // when that worker starts another micro-batch (pending: its last one, per worker).
    owner_.assign(n_parts, 0);
    copied_.assign(n_parts, 0);
    pending_.assign(static_cast<std::size_t>(workers), -1);
    auto part = [&](std::int64_t index, int worker) {
      const auto i = static_cast<std::size_t>(index);
      const std::int64_t first = index * count / parts, last = (index + 1) * count / parts;
      if constexpr (kFused) {
        std::int64_t& pending = pending_[static_cast<std::size_t>(worker)];
        if (pending >= 0) {
          for (std::size_t k = 0; k < nets; ++k)
            if (summed[k]) buffer(static_cast<std::size_t>(pending), k).copy_from(grads(worker, k));
          copied_[static_cast<std::size_t>(pending)] = 1;
        }
        results_[i] = pass(worker, first, last - first);
        owner_[i] = worker;
        pending = index;
      } else {
        results_[i] = pass(worker, first, last - first);
        for (std::size_t k = 0; k < nets; ++k) {
          if (!summed[k]) continue;
          const Tensor sum = buffer(i, k);
          sum.copy_from(grads(worker, k));
          B::scale(sum, static_cast<float>(results_[i].weight));
          sums_[i * nets + k] = sum;
        }
      }
    };
    if (team) {
      team->run(parts, part);
    } else {
      for (std::int64_t i = 0; i < parts; ++i) part(i, 0);
    }
    // Sum in micro-batch order, weighted: the whole batch's mean.
    PassResult total = PassResult::combine(results_);
    const float scale = total.weight > 0.0 ? static_cast<float>(1.0 / total.weight) : 1.0f;
    for (std::size_t k = 0; k < nets; ++k) {
      if (!summed[k]) continue;
      const Tensor& out = grads(0, k);
      if constexpr (kFused) {
        sources_.resize(n_parts);
        weights_.resize(n_parts);
        for (std::size_t i = 0; i < n_parts; ++i) {
          sources_[i] = copied_[i] ? buffer(i, k).template data<float>()
                                   : grads(owner_[i], k).template data<float>();
          weights_[i] = static_cast<float>(results_[i].weight);
        }
        // Element-wise, so the workers share it by blocks (fixed, whole vectors: the same bits
        // for any thread count); `out` may be one of the sources.
        constexpr std::int64_t kBlock = 8192;
        const std::int64_t n = out.numel();
        float* destination = out.template data<float>();
        auto sum_block = [&](std::int64_t b, int /*worker*/) {
          B::weighted_sum(destination, sources_, weights_, scale, b * kBlock,
                          std::min(n, (b + 1) * kBlock));
        };
        const std::int64_t blocks = (n + kBlock - 1) / kBlock;
        if (team) {
          team->run(blocks, sum_block);
        } else {
          for (std::int64_t b = 0; b < blocks; ++b) sum_block(b, 0);
        }
      } else {
        out.copy_from(sums_[k]);
        for (std::size_t i = 1; i < n_parts; ++i) B::add_to(out, sums_[i * nets + k]);
        if (total.weight > 0.0) B::scale(out, scale);
      }
    }
    return total;
  }

 private:
  std::vector<ScratchBuffer> buffers_;  // per micro-batch and network
  std::vector<PassResult> results_;     // per micro-batch, kept between steps
  std::vector<Tensor> sums_;            // GPU: each micro-batch's weighted copy, per network
  std::vector<int> owner_;              // CPU: the worker that computed it
  std::vector<char> copied_;            // CPU: moved out of the worker's buffers
  std::vector<std::int64_t> pending_;   // CPU: per worker, its last micro-batch
  std::vector<const float*> sources_;   // CPU: where each one's gradients are
  std::vector<float> weights_;
};

}  // namespace seedrl
