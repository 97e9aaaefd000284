// LagBoundedBatch: how many unrolls a step of an on-policy learner takes, so that the policy lag
// stays bounded however many actors feed it.
//
// With N actor slots each filling unrolls of T steps and a learner that trains on B unrolls a
// step, every unroll is T steps of one slot, so the learner takes a step per B unrolls while each
// slot makes one: an unroll's first step was acted about N / B learner steps before it is trained
// on (N / 2B on average over its steps), whatever the actors' speed. At a fixed B the lag grows
// with the actors: CartPole with 2,048 slots at B = 8 trained on data 140 steps old and collapsed
// (entropy 0.03, return 13; 32 slots: lag 1.7, return 500). Taking more unrolls a step bounds it:
// the batch doubles (B, 2B, 4B, ... up to max_multiple B) once the mean lag of the steps since the
// last change is above `target`, and goes on doubling until it is at most a quarter of it; it
// halves again once the lag is under an eighth. Why these: at batch 8 CartPole learned at lags up
// to about 9 and failed or wavered from 17 up, while the MinAtar runs the examples publish train
// at lags of 6 - 7, which a target of 16 leaves alone; but a larger batch moves the policy
// further per update (its gradient is less noisy, the optimizer's step as long), so 2,048 slots
// at 128 unrolls a step (lag 8.7) still lost 2 seeds of 5, and at 256 (lag 4.9) none of 3.
// After a change the next decision waits until the data acted after it arrives (as many steps
// as the lag was), so that one change is seen before the next.
//
// Not thread-safe: the learner thread calls it; size() may be read elsewhere (an atomic).
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>

#include "seedrl/core/error.hpp"

namespace seedrl {

class LagBoundedBatch {
 public:
  /// `target` 0: always batch_size.
  LagBoundedBatch(std::int64_t batch_size, double target, std::int64_t max_multiple)
      : batch_size_(batch_size), target_(target), max_multiple_(max_multiple) {
    SEEDRL_REQUIRE(batch_size >= 1, "LagBoundedBatch: batch_size must be >= 1, got ", batch_size);
    SEEDRL_REQUIRE(target >= 0.0 && std::isfinite(target),
                   "LagBoundedBatch: the target policy lag must be >= 0, got ", target);
    SEEDRL_REQUIRE(max_multiple >= 1, "LagBoundedBatch: max_multiple must be >= 1, got ",
                   max_multiple);
  }

  /// Unrolls the next step takes: batch_size times a power of two.
  std::int64_t size() const { return batch_size_ * multiple_.load(std::memory_order_relaxed); }

  /// After a step that trained on data of mean policy lag `lag` (learner steps); returns whether
  /// size() changed.
  bool observe(double lag) {
    if (target_ <= 0.0 || !std::isfinite(lag)) return false;
    if (settle_ > 0) {
      --settle_;
      return false;
    }
    sum_ += lag;
    if (++count_ < kWindow) return false;
    const double mean = sum_ / static_cast<double>(count_);
    sum_ = 0.0;
    count_ = 0;
    const std::int64_t m = multiple_.load(std::memory_order_relaxed);
    std::int64_t next = m;
    growing_ = (mean > target_ || (growing_ && mean > target_ / 4.0)) && m < max_multiple_;
    if (growing_) next = std::min(2 * m, max_multiple_);
    if (mean < target_ / 8.0 && m > 1) next = m / 2;
    if (next == m) return false;
    multiple_.store(next, std::memory_order_relaxed);
    // The unrolls in flight were begun before the change: wait for those acted after it.
    settle_ = static_cast<std::int64_t>(std::ceil(mean)) + 1;
    return true;
  }

 private:
  static constexpr std::int64_t kWindow = 8;  // steps averaged per decision

  const std::int64_t batch_size_;
  const double target_;
  const std::int64_t max_multiple_;
  std::atomic<std::int64_t> multiple_{1};
  std::int64_t settle_ = 0, count_ = 0;
  bool growing_ = false;  // doubling until the lag is at most a quarter of the target
  double sum_ = 0.0;
};

}  // namespace seedrl
