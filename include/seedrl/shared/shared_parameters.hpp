// SharedParameters: the learner's parameters, read in place by inference.
//
//   learner: forward/backward (reads) ... optimizer step under a WriteGuard ... publish(version)
//   inference: copies the values under a ReadGuard when they moved (CPU), or runs its forward
//              under one on the values in place (GPU); tags every step with version()
//
// On the CPU an inference network keeps its own copy, refreshed with one memcpy per learner step:
// a forward that read the learner's buffer in place made the two cores fight over the same cache
// lines at every optimizer step. On a GPU inference aliases the learner's value buffer
// (ParameterStore::alias_values). Either way the lock makes sure inference never sees a
// half-applied optimizer step. Writers have priority: a waiting writer stops new readers, so a busy
// inference thread cannot starve the learner.
//
// The time spent waiting for the lock is counted (lock_waits()): where a pipeline's time goes.
//
// The guards are declared, not returned from a factory: clang's thread-safety analysis (before
// clang 16) follows a scoped lock only from its constructor, and publish() requires the write
// lock.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/nn/parameter.hpp"

namespace seedrl {

class SharedParameters {
 public:
  explicit SharedParameters(nn::ParameterStore& store) : store_(store) {}
  SharedParameters(const SharedParameters&) = delete;
  SharedParameters& operator=(const SharedParameters&) = delete;

  nn::ParameterStore& store() { return store_; }

  /// Shared access for the guard's scope:
  ///   SharedParameters::ReadGuard guard(parameters);
  class SEEDRL_SCOPED_CAPABILITY ReadGuard {
   public:
    explicit ReadGuard(SharedParameters& p) SEEDRL_ACQUIRE_SHARED(p.mutex_) : parameters_(p) {
      parameters_.lock_shared();
    }
    ~ReadGuard() SEEDRL_RELEASE() { parameters_.unlock_shared(); }
    ReadGuard(const ReadGuard&) = delete;
    ReadGuard& operator=(const ReadGuard&) = delete;

   private:
    SharedParameters& parameters_;
  };
  /// Exclusive access for the guard's scope; call publish() inside to advance the version.
  class SEEDRL_SCOPED_CAPABILITY WriteGuard {
   public:
    explicit WriteGuard(SharedParameters& p) SEEDRL_ACQUIRE(p.mutex_) : parameters_(p) {
      parameters_.lock();
    }
    ~WriteGuard() SEEDRL_RELEASE() { parameters_.unlock(); }
    WriteGuard(const WriteGuard&) = delete;
    WriteGuard& operator=(const WriteGuard&) = delete;

   private:
    SharedParameters& parameters_;
  };

  /// Time spent waiting to acquire the lock, since construction (any thread may read it).
  struct LockWaits {
    double reader_seconds = 0.0, writer_seconds = 0.0;
    std::int64_t reads = 0, writes = 0;
  };
  LockWaits lock_waits() const {
    return {static_cast<double>(reader_wait_ns_.load(std::memory_order_relaxed)) * 1e-9,
            static_cast<double>(writer_wait_ns_.load(std::memory_order_relaxed)) * 1e-9,
            reads_.load(std::memory_order_relaxed), writes_.load(std::memory_order_relaxed)};
  }

  /// Parameter version: the number of updates published (the learner step).
  std::int64_t version() const { return version_.load(std::memory_order_acquire); }
  /// Sets the version, inside a WriteGuard.
  void publish(std::int64_t version) SEEDRL_REQUIRES(mutex_) {
    version_.store(version, std::memory_order_release);
  }

 private:
  // Readers wait at the gate while a writer waits, then share mutex_.
  void lock_shared() SEEDRL_ACQUIRE_SHARED(mutex_) SEEDRL_EXCLUDES(gate_mutex_) {
    const auto start = Clock::now();
    {
      MutexLock gate(gate_mutex_);
      while (waiting_writers_ != 0) no_writers_.wait(gate);
    }
    mutex_.lock_shared();
    reader_wait_ns_.fetch_add(nanoseconds_since(start), std::memory_order_relaxed);
    reads_.fetch_add(1, std::memory_order_relaxed);
  }
  void unlock_shared() SEEDRL_RELEASE_SHARED(mutex_) { mutex_.unlock_shared(); }
  void lock() SEEDRL_ACQUIRE(mutex_) SEEDRL_EXCLUDES(gate_mutex_) {
    const auto start = Clock::now();
    {
      MutexLock gate(gate_mutex_);
      ++waiting_writers_;
    }
    mutex_.lock();
    writer_wait_ns_.fetch_add(nanoseconds_since(start), std::memory_order_relaxed);
    writes_.fetch_add(1, std::memory_order_relaxed);
  }
  void unlock() SEEDRL_RELEASE(mutex_) SEEDRL_EXCLUDES(gate_mutex_) {
    mutex_.unlock();
    MutexLock gate(gate_mutex_);
    --waiting_writers_;
    no_writers_.notify_all();
  }

  using Clock = std::chrono::steady_clock;
  static std::int64_t nanoseconds_since(Clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  }

  nn::ParameterStore& store_;
  std::atomic<std::int64_t> reader_wait_ns_{0}, writer_wait_ns_{0}, reads_{0}, writes_{0};
  // Guards the values in store_ (which inference networks alias): the analysis cannot see them.
  SharedMutex mutex_;
  Mutex gate_mutex_;
  CondVar no_writers_;
  int waiting_writers_ SEEDRL_GUARDED_BY(gate_mutex_) = 0;
  std::atomic<std::int64_t> version_{0};
};

}  // namespace seedrl
