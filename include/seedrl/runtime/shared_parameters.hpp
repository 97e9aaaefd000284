// SharedParameters: the learner's parameters, read in place by inference.
//
//   learner: forward/backward (reads) ... optimizer step under write() ... version + 1
//   inference: forward under read(), tags every step with version()
//
// Inference networks alias the learner's value buffer (ParameterStore::alias_values), so no
// parameters are copied anywhere; the lock makes sure a forward never sees a half-applied
// optimizer step. Writers have priority: a waiting writer stops new readers, so a busy inference
// thread cannot starve the learner.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <shared_mutex>

#include "seedrl/nn/parameter.hpp"

namespace seedrl {

class SharedParameters {
 public:
  explicit SharedParameters(nn::ParameterStore& store) : store_(store) {}
  SharedParameters(const SharedParameters&) = delete;
  SharedParameters& operator=(const SharedParameters&) = delete;

  nn::ParameterStore& store() { return store_; }

  /// Shared access for the duration of the returned guard.
  class ReadGuard {
   public:
    explicit ReadGuard(SharedParameters& p) : lock_(p.acquire_shared()) {}

   private:
    std::shared_lock<std::shared_mutex> lock_;
  };
  /// Exclusive access; call publish() inside to advance the version.
  class WriteGuard {
   public:
    explicit WriteGuard(SharedParameters& p) : parameters_(p), lock_(p.acquire_exclusive()) {}
    ~WriteGuard() {
      lock_.unlock();
      parameters_.release_exclusive();
    }
    WriteGuard(const WriteGuard&) = delete;
    WriteGuard& operator=(const WriteGuard&) = delete;

   private:
    SharedParameters& parameters_;
    std::unique_lock<std::shared_mutex> lock_;
  };

  ReadGuard read() { return ReadGuard(*this); }
  WriteGuard write() { return WriteGuard(*this); }

  /// Parameter version: the number of updates published (the learner step).
  std::int64_t version() const { return version_.load(std::memory_order_acquire); }
  /// Sets the version; call while holding write().
  void publish(std::int64_t version) { version_.store(version, std::memory_order_release); }

 private:
  std::shared_lock<std::shared_mutex> acquire_shared() {
    {
      std::unique_lock gate(gate_mutex_);
      no_writers_.wait(gate, [&] { return waiting_writers_ == 0; });
    }
    return std::shared_lock<std::shared_mutex>(mutex_);
  }
  std::unique_lock<std::shared_mutex> acquire_exclusive() {
    {
      std::lock_guard gate(gate_mutex_);
      ++waiting_writers_;
    }
    return std::unique_lock<std::shared_mutex>(mutex_);
  }
  void release_exclusive() {
    std::lock_guard gate(gate_mutex_);
    --waiting_writers_;
    no_writers_.notify_all();
  }

  nn::ParameterStore& store_;
  std::shared_mutex mutex_;
  std::mutex gate_mutex_;
  std::condition_variable no_writers_;
  int waiting_writers_ = 0;
  std::atomic<std::int64_t> version_{0};
};

}  // namespace seedrl
