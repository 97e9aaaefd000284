// BoundedQueue<T>: a closeable, blocking multi-producer multi-consumer FIFO of fixed capacity.
// A full queue blocks producers: this is how the learner pushes back on inference and actors.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/core/thread_annotations.hpp"

namespace seedrl {

/// Thread-safe. After close(), push() refuses new items, and pop() drains what is left and then
/// returns nothing; every blocked call wakes up.
template <class T>
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity) {
    SEEDRL_REQUIRE(capacity > 0, "BoundedQueue: capacity must be positive");
  }

  /// Blocks while full. Returns false (and drops nothing from the queue) if it is closed.
  bool push(T item) SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    while (!closed_ && items_.size() >= capacity_) not_full_.wait(lock);
    if (closed_) return false;
    items_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }

  /// Blocks until an item is available; nothing when the queue is closed and empty.
  std::optional<T> pop() SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    while (!closed_ && items_.empty()) not_empty_.wait(lock);
    return take();
  }

  /// As pop(), but gives up after `timeout`.
  template <class Rep, class Period>
  std::optional<T> pop_for(std::chrono::duration<Rep, Period> timeout) SEEDRL_EXCLUDES(mutex_) {
    const auto deadline = deadline_after(timeout);
    MutexLock lock(mutex_);
    while (!closed_ && items_.empty()) {
      if (not_empty_.wait_until(lock, deadline) == std::cv_status::timeout) break;
    }
    return take();
  }

  /// Pops exactly `count` items (blocking for each), or returns false if the queue closes first
  /// (the items already taken are then left in `out`).
  bool pop_many(std::size_t count, std::vector<T>& out) SEEDRL_EXCLUDES(mutex_) {
    out.clear();
    while (out.size() < count) {
      std::optional<T> item = pop();
      if (!item) return false;
      out.push_back(std::move(*item));
    }
    return true;
  }

  /// Blocks until an item is available, then pops up to `max_count` items without waiting for
  /// more. Returns false when the queue is closed and empty (`out` is then empty).
  bool pop_available(std::size_t max_count, std::vector<T>& out) SEEDRL_EXCLUDES(mutex_) {
    out.clear();
    MutexLock lock(mutex_);
    while (!closed_ && items_.empty()) not_empty_.wait(lock);
    while (out.size() < max_count) {
      std::optional<T> item = take();
      if (!item) break;
      out.push_back(std::move(*item));
    }
    return !out.empty();
  }

  void close() SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    closed_ = true;
    not_full_.notify_all();
    not_empty_.notify_all();
  }

  bool closed() const SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return closed_;
  }
  std::size_t size() const SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return items_.size();
  }
  std::size_t capacity() const { return capacity_; }

 private:
  std::optional<T> take() SEEDRL_REQUIRES(mutex_) {
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }

  const std::size_t capacity_;
  mutable Mutex mutex_;
  CondVar not_full_, not_empty_;
  std::deque<T> items_ SEEDRL_GUARDED_BY(mutex_);
  bool closed_ SEEDRL_GUARDED_BY(mutex_) = false;
};

}  // namespace seedrl
