// SharedParameters: the learner's parameters, read in place by inference.
//
//   learner: forward/backward (reads) ... optimizer step under a WriteGuard ... publish(version)
//   inference: forward under a ReadGuard, tags every step with version()
//
// Inference networks alias the learner's value buffer (ParameterStore::alias_values), so no
// parameters are copied anywhere; the lock makes sure a forward never sees a half-applied
// optimizer step. Writers have priority: a waiting writer stops new readers, so a busy inference
// thread cannot starve the learner.
//
// The guards are declared, not returned from a factory: clang's thread-safety analysis (before
// clang 16) follows a scoped lock only from its constructor, and publish() requires the write
// lock.
#pragma once

#include <atomic>
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

  /// Parameter version: the number of updates published (the learner step).
  std::int64_t version() const { return version_.load(std::memory_order_acquire); }
  /// Sets the version, inside a WriteGuard.
  void publish(std::int64_t version) SEEDRL_REQUIRES(mutex_) {
    version_.store(version, std::memory_order_release);
  }

 private:
  // Readers wait at the gate while a writer waits, then share mutex_.
  void lock_shared() SEEDRL_ACQUIRE_SHARED(mutex_) SEEDRL_EXCLUDES(gate_mutex_) {
    {
      MutexLock gate(gate_mutex_);
      while (waiting_writers_ != 0) no_writers_.wait(gate);
    }
    mutex_.lock_shared();
  }
  void unlock_shared() SEEDRL_RELEASE_SHARED(mutex_) { mutex_.unlock_shared(); }
  void lock() SEEDRL_ACQUIRE(mutex_) SEEDRL_EXCLUDES(gate_mutex_) {
    {
      MutexLock gate(gate_mutex_);
      ++waiting_writers_;
    }
    mutex_.lock();
  }
  void unlock() SEEDRL_RELEASE(mutex_) SEEDRL_EXCLUDES(gate_mutex_) {
    mutex_.unlock();
    MutexLock gate(gate_mutex_);
    --waiting_writers_;
    no_writers_.notify_all();
  }

  nn::ParameterStore& store_;
  // Guards the values in store_ (which inference networks alias): the analysis cannot see them.
  SharedMutex mutex_;
  Mutex gate_mutex_;
  CondVar no_writers_;
  int waiting_writers_ SEEDRL_GUARDED_BY(gate_mutex_) = 0;
  std::atomic<std::int64_t> version_{0};
};

}  // namespace seedrl
