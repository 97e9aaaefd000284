// WorkerTeam: runs a job of independent, numbered tasks on the calling thread and a fixed set of
// helper threads, each task going to whichever thread is free next.
//
//   run(count, task):  caller ──▶ wakes the helpers ──▶ every thread claims the next index
//                      (one atomic counter) and runs task(index, worker) until none is left
//                      ──▶ the caller waits until all `count` tasks have finished
//
// The caller is worker 0 and takes part, so a team of one thread is a plain loop. Dynamic claiming
// is the point: a helper that shares its core with other work (inference, actors) simply takes
// fewer tasks, and no thread waits on a helper that has not woken up yet (a helper that wakes after
// the last task was claimed finds nothing to do; the caller waits for tasks, not for threads).
//
// Polling (`poll`, off by default): a thread that sleeps on a condition variable takes tens to
// hundreds of microseconds to run again once woken on a virtual machine (the idle vCPU is halted),
// which on the learner's millisecond steps cost as much as the second thread gained. With `poll` >
// 0 an idle helper polls for the next job for that long before it sleeps, and the caller polls for
// the other threads' last tasks as long (yielding its core between polls) before it sleeps. Meant
// for helpers at background priority (core/thread_priority.hpp), whose polling only uses cycles
// no other thread wants.
//
// Errors: every task runs even when one throws; run() rethrows the first exception once the job is
// over. Float mode: helpers take the caller's denormal mode (core/float_mode.hpp) at every job.
//
// Thread-safety: run() from one thread at a time; the destructor joins the helpers (not while run()
// is in progress).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/core/float_mode.hpp"
#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/core/thread_name.hpp"

namespace seedrl {

class WorkerTeam {
 public:
  /// One task: its index in [0, count) and the worker running it, in [0, threads()).
  using Task = std::function<void(std::int64_t index, int worker)>;

  /// A team of `threads` (>= 1): the caller of run() and threads - 1 helpers named
  /// "<name><worker>" (at most 15 characters are kept), each calling `on_start` once first (e.g.
  /// to size its compute-library thread team).
  /// `threads` in all (the caller and threads - 1 helpers named name1, name2, ...); `on_start`
  /// runs first on every helper; `poll`: see the top.
  explicit WorkerTeam(int threads, std::string name = "seedrl-worker",
                      std::function<void()> on_start = {},
                      std::chrono::microseconds poll = std::chrono::microseconds{0})
      : poll_(poll) {
    SEEDRL_REQUIRE(threads >= 1, "WorkerTeam: threads must be >= 1, got ", threads);
    SEEDRL_REQUIRE(poll.count() >= 0, "WorkerTeam: poll must be >= 0 microseconds, got ",
                   poll.count());
    helpers_.reserve(static_cast<std::size_t>(threads - 1));
    for (int worker = 1; worker < threads; ++worker)
      helpers_.emplace_back([this, worker, name, on_start] {
        set_thread_name(name + std::to_string(worker));
        if (on_start) on_start();
        serve(worker);
      });
  }

  ~WorkerTeam() {
    {
      MutexLock lock(mutex_);
      stopping_ = true;
      stopping_flag_.store(true);
      wake_.notify_all();
    }
    for (std::thread& helper : helpers_) helper.join();
  }

  WorkerTeam(const WorkerTeam&) = delete;
  WorkerTeam& operator=(const WorkerTeam&) = delete;

  int threads() const { return static_cast<int>(helpers_.size()) + 1; }

  /// Runs task(i, worker) once for every i in [0, count) and returns when all have finished,
  /// rethrowing the first exception a task threw.
  void run(std::int64_t count, const Task& task) SEEDRL_EXCLUDES(mutex_) {
    if (count <= 0) return;
    auto job = std::make_shared<Job>(&task, count);
    if (!helpers_.empty()) {
      MutexLock lock(mutex_);
      job_ = job;
      flush_denormals_ = flush_denormals_enabled();
      ++generation_;
      posted_.store(generation_, std::memory_order_release);
      wake_.notify_all();
    }
    work(*job, 0);
    if (poll_.count() > 0) {
      const auto until = std::chrono::steady_clock::now() + poll_;
      while (job->finished.load(std::memory_order_acquire) < count &&
             std::chrono::steady_clock::now() < until) {
        for (int i = 0; i < 64; ++i) pause();
        std::this_thread::yield();  // a helper that shares this core runs now
      }
    }
    std::exception_ptr error;
    {
      MutexLock lock(mutex_);
      while (job->finished.load() < count) done_.wait(lock);
      job_.reset();
      // Taken out of the job: a helper may drop the job's last reference after run() returned, and
      // the exception must not die there while the caller still reads it (the exception's count is
      // atomic, but in libstdc++, which ThreadSanitizer does not see).
      error = std::move(job->error);  // leaves the job's pointer null
    }
    if (error) std::rethrow_exception(error);
  }

 private:
  struct Job {
    Job(const Task* t, std::int64_t n) : task(t), count(n) {}
    const Task* task;  // valid while run() waits; only read by a thread that claimed an index
    const std::int64_t count;
    std::atomic<std::int64_t> next{0};
    std::atomic<std::int64_t> finished{0};  // written under the team's mutex_
    std::exception_ptr error;               // guarded by the team's mutex_
  };

  // Claims and runs tasks of `job` until none is left. A claimed index is below count, so run() is
  // still waiting for it and the task is alive.
  void work(Job& job, int worker) SEEDRL_EXCLUDES(mutex_) {
    for (std::int64_t i = job.next.fetch_add(1); i < job.count; i = job.next.fetch_add(1)) {
      std::exception_ptr error;
      try {
        (*job.task)(i, worker);
      } catch (...) {
        error = std::current_exception();
      }
      MutexLock lock(mutex_);
      if (error && !job.error) job.error = error;
      error = nullptr;  // under the lock: after the count below, run() may return and rethrow it
      if (job.finished.fetch_add(1, std::memory_order_acq_rel) + 1 == job.count) done_.notify_all();
    }
  }

  void serve(int worker) SEEDRL_EXCLUDES(mutex_) {
    std::uint64_t seen = 0;
    while (true) {
      std::shared_ptr<Job> job;  // keeps a job alive for a helper that wakes after it ended
      bool flush = false;
      if (poll_.count() > 0) {
        const auto until = std::chrono::steady_clock::now() + poll_;
        while (posted_.load(std::memory_order_acquire) == seen && !stopping_flag_.load() &&
               std::chrono::steady_clock::now() < until) {
          for (int i = 0; i < 64; ++i) pause();
        }
      }
      {
        MutexLock lock(mutex_);
        while (generation_ == seen && !stopping_) wake_.wait(lock);
        if (stopping_) return;
        seen = generation_;
        job = job_;
        flush = flush_denormals_;
      }
      if (!job) continue;
      set_flush_denormals(flush);
      work(*job, worker);
    }
  }

  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }

  const std::chrono::microseconds poll_;
  std::atomic<std::uint64_t> posted_{0};    // generation_, for polling helpers
  std::atomic<bool> stopping_flag_{false};  // stopping_, for polling helpers
  Mutex mutex_;
  CondVar wake_, done_;
  std::shared_ptr<Job> job_ SEEDRL_GUARDED_BY(mutex_);
  std::uint64_t generation_ SEEDRL_GUARDED_BY(mutex_) = 0;
  bool flush_denormals_ SEEDRL_GUARDED_BY(mutex_) = false;
  bool stopping_ SEEDRL_GUARDED_BY(mutex_) = false;
  std::vector<std::thread> helpers_;
};

}  // namespace seedrl
