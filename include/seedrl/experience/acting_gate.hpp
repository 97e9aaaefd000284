// ActingGate: lets the consumer of the unrolls pause their producers. A synchronous on-policy
// learner (PpoAgentOptions::synchronous) holds it while it trains on a batch, and inference waits
// at it before each forward, so that every batch is acted by the parameters the last one left:
// no policy lag beyond the batch's own updates, as in synchronous PPO, at the cost of actors idle
// while the learner works. Nobody holds it otherwise, and wait() is then one atomic load.
#pragma once

#include <atomic>

#include "seedrl/core/thread_annotations.hpp"

namespace seedrl {

/// Thread-safe. close() opens it for good and wakes every waiter (the run is ending).
class ActingGate {
 public:
  /// Producers wait from now until release() or close().
  void hold() SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    if (!closed_) held_.store(true, std::memory_order_release);
  }
  void release() SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    held_.store(false, std::memory_order_release);
    opened_.notify_all();
  }
  void close() SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    closed_ = true;
    held_.store(false, std::memory_order_release);
    opened_.notify_all();
  }
  bool held() const { return held_.load(std::memory_order_acquire); }

  /// Returns at once unless held; then when released or closed. Counts the waits that blocked.
  void wait() SEEDRL_EXCLUDES(mutex_) {
    if (!held()) return;
    MutexLock lock(mutex_);
    if (!held_.load(std::memory_order_relaxed)) return;
    ++waits_;
    while (held_.load(std::memory_order_relaxed)) opened_.wait(lock);
  }
  /// How often wait() blocked (a test's and a metric's view of the gate).
  long long waits() const SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return waits_;
  }

 private:
  mutable Mutex mutex_;
  CondVar opened_;
  std::atomic<bool> held_{false};
  bool closed_ SEEDRL_GUARDED_BY(mutex_) = false;
  long long waits_ SEEDRL_GUARDED_BY(mutex_) = 0;
};

}  // namespace seedrl
