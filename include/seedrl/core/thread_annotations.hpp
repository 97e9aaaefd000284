// Locks the compiler checks: clang's thread-safety attributes behind SEEDRL_ macros, and the
// annotated mutex, lock and condition variable that seedrl's classes use in place of the standard
// ones (libstdc++'s std::mutex carries no annotations).
//
// Under clang with -Wthread-safety (the CMake option SEEDRL_THREAD_SAFETY_ANALYSIS, on by default
// for clang builds; CI builds with it), touching a SEEDRL_GUARDED_BY member without its mutex, or
// calling a SEEDRL_REQUIRES function without holding what it requires, is a compile error. Other
// compilers see no attributes; the wrappers are inline and cost nothing over std::mutex.
//
// @code
//   class Counter {
//    public:
//     void add(int n) SEEDRL_EXCLUDES(mutex_) {
//       MutexLock lock(mutex_);
//       total_ += n;
//       changed_.notify_all();
//     }
//     void wait_for_positive() SEEDRL_EXCLUDES(mutex_) {
//       MutexLock lock(mutex_);
//       while (total_ <= 0) changed_.wait(lock);  // not a predicate lambda: see CondVar
//     }
//
//    private:
//     Mutex mutex_;
//     CondVar changed_;
//     int total_ SEEDRL_GUARDED_BY(mutex_) = 0;
//   };
// @endcode
//
// The attributes are described at https://clang.llvm.org/docs/ThreadSafetyAnalysis.html.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#if defined(__clang__)
#define SEEDRL_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define SEEDRL_THREAD_ANNOTATION(x)
#endif

/// A type whose objects are capabilities (mutexes): `x` names the kind in diagnostics.
#define SEEDRL_CAPABILITY(x) SEEDRL_THREAD_ANNOTATION(capability(x))
/// An RAII type that holds a capability from its construction to its destruction.
#define SEEDRL_SCOPED_CAPABILITY SEEDRL_THREAD_ANNOTATION(scoped_lockable)
/// A data member that may only be used while `x` is held (read: shared or exclusive; write:
/// exclusive).
#define SEEDRL_GUARDED_BY(x) SEEDRL_THREAD_ANNOTATION(guarded_by(x))
/// A pointer member whose pointee may only be used while `x` is held.
#define SEEDRL_PT_GUARDED_BY(x) SEEDRL_THREAD_ANNOTATION(pt_guarded_by(x))
/// The caller must hold these exclusively.
#define SEEDRL_REQUIRES(...) SEEDRL_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
/// The caller must hold these, at least shared.
#define SEEDRL_REQUIRES_SHARED(...) \
  SEEDRL_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
/// The function acquires these (no argument: the object itself) and returns holding them.
#define SEEDRL_ACQUIRE(...) SEEDRL_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define SEEDRL_ACQUIRE_SHARED(...) SEEDRL_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
/// Acquires the capability when it returns `result`.
#define SEEDRL_TRY_ACQUIRE(...) SEEDRL_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
/// The function releases these (no argument: the object itself, or a scoped capability's).
#define SEEDRL_RELEASE(...) SEEDRL_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define SEEDRL_RELEASE_SHARED(...) SEEDRL_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
/// The caller must not hold these (the function takes them itself).
#define SEEDRL_EXCLUDES(...) SEEDRL_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
/// The function returns a reference to this capability.
#define SEEDRL_RETURN_CAPABILITY(x) SEEDRL_THREAD_ANNOTATION(lock_returned(x))
/// Turns the analysis off for one function. Only where the analysis cannot express a sound
/// protocol, with a comment saying why.
#define SEEDRL_NO_THREAD_SAFETY_ANALYSIS SEEDRL_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace seedrl {

class MutexLock;
class CondVar;

/// std::mutex, annotated as a capability.
class SEEDRL_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() SEEDRL_ACQUIRE() { mutex_.lock(); }
  void unlock() SEEDRL_RELEASE() { mutex_.unlock(); }
  bool try_lock() SEEDRL_TRY_ACQUIRE(true) { return mutex_.try_lock(); }

 private:
  friend class MutexLock;
  std::mutex mutex_;
};

/// Holds a Mutex for its scope, like std::unique_lock: unlock() and lock() in between are
/// followed by the analysis, and CondVar waits on it.
class SEEDRL_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mutex) SEEDRL_ACQUIRE(mutex) : lock_(mutex.mutex_) {}
  ~MutexLock() SEEDRL_RELEASE() {}
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void lock() SEEDRL_ACQUIRE() { lock_.lock(); }
  void unlock() SEEDRL_RELEASE() { lock_.unlock(); }

 private:
  friend class CondVar;
  std::unique_lock<std::mutex> lock_;
};

/// std::condition_variable over a MutexLock. There are no predicate overloads on purpose: clang
/// analyses a lambda on its own, where the lock is not held, so a predicate that reads guarded
/// members does not compile. Loop in the caller instead:
///   while (!ready_) cv_.wait(lock);
///   while (!ready_) if (cv_.wait_until(lock, deadline) == std::cv_status::timeout) break;
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  /// Releases the lock while it waits; holds it again on return (possibly spuriously woken).
  void wait(MutexLock& lock) { cv_.wait(lock.lock_); }
  template <class Clock, class Duration>
  std::cv_status wait_until(MutexLock& lock,
                            const std::chrono::time_point<Clock, Duration>& deadline) {
    return cv_.wait_until(lock.lock_, deadline);
  }

  void notify_one() noexcept { cv_.notify_one(); }
  void notify_all() noexcept { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

/// The deadline a wait of `timeout` from now ends at, on the steady clock (rounded up, as
/// std::condition_variable::wait_for does).
template <class Rep, class Period>
std::chrono::steady_clock::time_point deadline_after(std::chrono::duration<Rep, Period> timeout) {
  return std::chrono::steady_clock::now() +
         std::chrono::ceil<std::chrono::steady_clock::duration>(timeout);
}

/// std::shared_mutex, annotated as a capability that can also be held shared (readers).
class SEEDRL_CAPABILITY("shared_mutex") SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void lock() SEEDRL_ACQUIRE() { mutex_.lock(); }
  void unlock() SEEDRL_RELEASE() { mutex_.unlock(); }
  void lock_shared() SEEDRL_ACQUIRE_SHARED() { mutex_.lock_shared(); }
  void unlock_shared() SEEDRL_RELEASE_SHARED() { mutex_.unlock_shared(); }

 private:
  std::shared_mutex mutex_;
};

}  // namespace seedrl
