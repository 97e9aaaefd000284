// RequestBatcher: SEED RL's dynamic batching of step requests, on a thread of its own.
//
//   submit(request) ──▶ queue ──▶ batcher thread: take up to max_batch frames once the batch is
//                                 full, or every connected training environment is waiting, or
//                                 the oldest request has waited `timeout` (seed_rl's batcher would
//                                 wait for a full batch forever) ──▶ process(batch) ──▶
//                                 on_complete(status) (each request its own outcome)
//
// Evaluation environments (connection.evaluation) ride along with the batch that is served but
// are never waited for: an evaluating actor slower than the training ones (in Python, say) would
// otherwise hold every batch until the timeout.
//
// InferenceServer runs its network in `process`; the transport benchmark plugs in a trivial
// policy to measure transport and batching alone. Thread-safe; `process` runs on the batcher
// thread only, and on_complete is called after it, outside the batcher's lock.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <span>
#include <thread>
#include <vector>

#include "seedrl/acting/inference_endpoint.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/core/thread_annotations.hpp"

namespace seedrl {

struct BatcherStats {
  std::int64_t batches = 0;
  std::int64_t frames = 0;
  std::int64_t timeouts = 0;  ///< batches served before they were full
  double mean_batch_size() const {
    return batches ? static_cast<double>(frames) / static_cast<double>(batches) : 0.0;
  }
};

class RequestBatcher {
 public:
  /// Processes a batch of requests holding `frames` environments in total; fills their actions.
  /// `outcomes` (one per request, ok on entry) answers each request: a failure that belongs to
  /// one request (an opponent set of its slots that cannot act, say) is set there and answers that
  /// request alone. A thrown exception answers the whole batch with Status::internal.
  using Process = std::function<void(std::span<StepRequest* const> batch, std::int64_t frames,
                                     std::span<Status> outcomes)>;

  RequestBatcher(std::int32_t max_batch, std::chrono::microseconds timeout, Process process)
      : max_batch_(max_batch), timeout_(timeout), process_(std::move(process)) {
    SEEDRL_REQUIRE(max_batch > 0, "RequestBatcher: max_batch must be positive, got ", max_batch);
    SEEDRL_REQUIRE(timeout.count() >= 0, "RequestBatcher: timeout must be >= 0");
  }
  ~RequestBatcher() { stop(Status::closed("stopped")); }
  RequestBatcher(const RequestBatcher&) = delete;
  RequestBatcher& operator=(const RequestBatcher&) = delete;

  /// `before_loop` runs first on the batcher thread (e.g. to set its compute threads).
  void start(std::function<void()> before_loop = {}) SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    SEEDRL_REQUIRE(!thread_.joinable() && !stopping_,
                   "RequestBatcher::start: already started or stopped");
    thread_ = std::thread([this, init = std::move(before_loop)] {
      if (init) init();
      loop();
    });
  }

  /// Answers every waiting request and every later submit() with `status`; joins the thread.
  void stop(const Status& status) SEEDRL_EXCLUDES(mutex_) {
    std::vector<StepRequest*> refused;
    {
      MutexLock lock(mutex_);
      if (!stopping_) stop_status_ = status;
      stopping_ = true;
    }
    work_.notify_all();
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
    Status answer;
    {
      MutexLock lock(mutex_);
      for (const Pending& p : pending_) refused.push_back(p.request);
      pending_.clear();
      pending_frames_ = 0;
      pending_training_frames_ = 0;
      answer = stop_status_;
    }
    for (StepRequest* r : refused) r->on_complete(answer);
  }

  /// Queues a request; once stopped, answers it at once with the stop status.
  void submit(StepRequest& request) SEEDRL_EXCLUDES(mutex_) {
    Status refused;
    bool queued = false;
    {
      MutexLock lock(mutex_);
      if (!stopping_) {
        queued = true;
        const bool was_empty = pending_.empty();
        pending_.push_back({&request, std::chrono::steady_clock::now()});
        pending_frames_ += request.connection.num_envs;
        if (!request.connection.evaluation) pending_training_frames_ += request.connection.num_envs;
        // Wake the batcher only when it has something new to do: it sleeps without a deadline
        // while nothing is pending, and otherwise until the oldest request's timeout, so only
        // the first request and the one that fills the batch need it (a wake-up per request
        // costs a context switch each, which showed in bench_transport).
        if (!batcher_sleeping_ || !(was_empty || full())) return;
      } else {
        refused = stop_status_;
      }
    }
    if (queued) {
      work_.notify_one();
      return;
    }
    request.on_complete(refused);
  }

  /// Training environments that can send requests: when all of them wait, a batch is served at
  /// once (with any evaluation requests waiting beside them). 0: any request is served at once.
  void set_connected_frames(std::int64_t frames) SEEDRL_EXCLUDES(mutex_) {
    {
      MutexLock lock(mutex_);
      connected_frames_ = frames;
    }
    work_.notify_one();
  }

  std::int32_t max_batch() const { return max_batch_; }
  BatcherStats stats() const SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return stats_;
  }

 private:
  struct Pending {
    StepRequest* request;
    std::chrono::steady_clock::time_point arrival;
  };

  /// Called with requests pending.
  bool full() const SEEDRL_REQUIRES(mutex_) {
    return pending_frames_ >= max_batch_ || pending_training_frames_ >= connected_frames_;
  }

  bool ready(std::chrono::steady_clock::time_point now) const SEEDRL_REQUIRES(mutex_) {
    if (pending_.empty()) return false;
    return full() || now >= pending_.front().arrival + timeout_;
  }

  void loop() SEEDRL_EXCLUDES(mutex_) {
    std::vector<StepRequest*> batch;
    std::vector<Status> outcomes;
    while (true) {
      std::int64_t frames = 0, training_frames = 0;
      {
        MutexLock lock(mutex_);
        // A batch that has started usually fills within microseconds: yield the core to the
        // actors that fill it rather than sleep and be woken (see kSpin).
        if (!pending_.empty() && !stopping_ && !full()) {
          const auto until = std::min(std::chrono::steady_clock::now() + kSpin,
                                      pending_.front().arrival + timeout_);
          while (!stopping_ && !full() && std::chrono::steady_clock::now() < until) {
            lock.unlock();
            std::this_thread::yield();
            lock.lock();
          }
        }
        while (!stopping_ && !ready(std::chrono::steady_clock::now())) {
          batcher_sleeping_ = true;
          if (pending_.empty()) {
            work_.wait(lock);
          } else {
            work_.wait_until(lock, pending_.front().arrival + timeout_);
          }
          batcher_sleeping_ = false;
        }
        if (stopping_) return;
        batch.clear();
        while (!pending_.empty() &&
               (batch.empty() ||
                frames + pending_.front().request->connection.num_envs <= max_batch_)) {
          const Connection& c = pending_.front().request->connection;
          frames += c.num_envs;
          if (!c.evaluation) training_frames += c.num_envs;
          batch.push_back(pending_.front().request);
          pending_.pop_front();
        }
        pending_frames_ -= frames;
        pending_training_frames_ -= training_frames;
        ++stats_.batches;
        stats_.frames += frames;
        if (frames < max_batch_) ++stats_.timeouts;
      }
      outcomes.assign(batch.size(), Status::ok());
      try {
        process_(batch, frames, outcomes);
      } catch (const std::exception& e) {  // a broken invariant: tell the actors, keep serving
        outcomes.assign(batch.size(), Status::internal(e.what()));
      }
      for (std::size_t i = 0; i < batch.size(); ++i) batch[i]->on_complete(outcomes[i]);
    }
  }

  static constexpr std::chrono::microseconds kSpin{50};

  const std::int32_t max_batch_;
  const std::chrono::microseconds timeout_;
  Process process_;
  mutable Mutex mutex_;
  CondVar work_;
  std::deque<Pending> pending_ SEEDRL_GUARDED_BY(mutex_);
  std::int64_t pending_frames_ SEEDRL_GUARDED_BY(mutex_) = 0;
  std::int64_t pending_training_frames_ SEEDRL_GUARDED_BY(mutex_) = 0;
  std::int64_t connected_frames_ SEEDRL_GUARDED_BY(mutex_) = 0;
  bool stopping_ SEEDRL_GUARDED_BY(mutex_) = false;
  /// In work_.wait*: submit() decides whether to wake it.
  bool batcher_sleeping_ SEEDRL_GUARDED_BY(mutex_) = false;
  Status stop_status_ SEEDRL_GUARDED_BY(mutex_);
  // Not guarded: start() writes it under mutex_ and only before stopping_; stop() sets stopping_
  // under mutex_ first and then joins outside the lock, which the finishing batcher thread takes.
  std::thread thread_;
  BatcherStats stats_ SEEDRL_GUARDED_BY(mutex_);
};

}  // namespace seedrl
