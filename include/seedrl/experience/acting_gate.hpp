// ActingGate: lets the consumer of the unrolls pause their producers. A synchronous on-policy
// learner (PpoAgentOptions::synchronous) sets hold_after(batch): the gate counts the unrolls
// queued and not yet taken (UnrollQueue's push and pops report them), and the push that makes a
// whole batch holds it, in the producer's own thread, so inference waits before its next batch.
// The learner, done training, calls release() to ask for the next batch; the gate opens unless a
// whole batch is queued already. So every batch is acted by the parameters the last one left: no
// policy lag beyond the batch's own updates, as in synchronous PPO, at the cost of actors idle
// while the learner works. (A learner that held the gate itself once it had its batch would hold
// it too late when slow to wake, and one that opened it whenever it asked would let the next
// batch be acted during its training whenever one was queued early: both seen under load.)
// Nobody holds it otherwise, and wait() is then one atomic load.
#pragma once

#include <atomic>

#include "seedrl/core/thread_annotations.hpp"

namespace seedrl {

/// Thread-safe. close() opens it for good and wakes every waiter (the run is ending).
class ActingGate {
 public:
  /// From now on, `unrolls` queued hold the gate (0: never).
  void hold_after(long long unrolls) SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    hold_after_ = unrolls;
    counting_.store(unrolls > 0, std::memory_order_relaxed);
  }
  /// The producer queued an unroll (UnrollQueue::push); the one that makes a batch holds the gate.
  void pushed() SEEDRL_EXCLUDES(mutex_) {
    if (!counting_.load(std::memory_order_relaxed)) return;
    MutexLock lock(mutex_);
    if (++queued_ >= hold_after_ && !closed_) held_.store(true, std::memory_order_release);
  }
  /// The consumer took `count` unrolls (UnrollQueue's pops).
  void taken(long long count) SEEDRL_EXCLUDES(mutex_) {
    if (!counting_.load(std::memory_order_relaxed)) return;
    MutexLock lock(mutex_);
    queued_ = queued_ > count ? queued_ - count : 0;
  }
  /// Opens the gate, unless hold_after's batch is queued already (the consumer takes that first).
  void release() SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    if (hold_after_ > 0 && queued_ >= hold_after_) return;
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
  long long hold_after_ SEEDRL_GUARDED_BY(mutex_) = 0;
  long long queued_ SEEDRL_GUARDED_BY(mutex_) = 0;  // pushed and not yet taken (hold_after_ > 0)
  std::atomic<bool> counting_{false};               // hold_after_ > 0, read without the lock
};

}  // namespace seedrl
