// TableFeeder: a thread that feeds a ReplayTable from a source while the table's rate limiter lets
// items in (replay/replay_table.hpp), so that a learner only samples.
//
//   feeder thread:  while (table.wait_to_insert())      waits while inserts are far enough ahead
//                     if (!feed()) break;               one batch from the source into the table
//                   table.close()                       the source is drained, or feed() threw
//
// feed() is the owner's: it takes a batch from its source (waiting for it; false once the source
// is closed and drained), gives the items their priorities and inserts them. An exception from
// feed() ends the thread; rethrow_error() hands it to the owner (a learner calls it after every
// wait, so the error comes out of its next step). stop() ends the thread: it closes the table and
// calls `stop_source` to wake a feed() waiting for its source.
//
// Thread-safety: start(), stop(), rethrow_error() from the owner's thread; feed() runs on the
// feeder's thread only.
#pragma once

#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <utility>

#include "seedrl/core/float_mode.hpp"
#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/core/thread_name.hpp"

namespace seedrl {

template <class Table>
class TableFeeder {
 public:
  /// `setup` runs first on the feeder's thread (e.g. its compute library's thread count).
  TableFeeder(Table& table, std::function<bool()> feed, std::function<void()> stop_source,
              std::string thread_name, std::function<void()> setup = {})
      : table_(table),
        feed_(std::move(feed)),
        stop_source_(std::move(stop_source)),
        thread_name_(std::move(thread_name)),
        setup_(std::move(setup)) {}
  TableFeeder(const TableFeeder&) = delete;
  TableFeeder& operator=(const TableFeeder&) = delete;
  ~TableFeeder() { stop(); }

  /// Starts the thread (once; later calls do nothing). It computes in the calling thread's float
  /// mode (a session flushes denormals on its learner thread).
  void start() {
    if (thread_.joinable()) return;
    thread_ = std::thread([this, flush = flush_denormals_enabled()] {
      set_flush_denormals(flush);
      run();
    });
  }
  bool started() const { return thread_.joinable(); }

  void stop() {
    if (!thread_.joinable()) return;
    table_.close();
    if (stop_source_) stop_source_();
    thread_.join();
  }

  /// Rethrows what feed() threw, if it did.
  void rethrow_error() SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void run() SEEDRL_EXCLUDES(mutex_) {
    set_thread_name(thread_name_);
    try {
      if (setup_) setup_();
      while (table_.wait_to_insert())
        if (!feed_()) break;
    } catch (...) {
      MutexLock lock(mutex_);
      error_ = std::current_exception();
    }
    table_.close();  // the sampler stops waiting for what will not come
  }

  Table& table_;
  const std::function<bool()> feed_;
  const std::function<void()> stop_source_;
  const std::string thread_name_;
  const std::function<void()> setup_;
  Mutex mutex_;
  std::exception_ptr error_ SEEDRL_GUARDED_BY(mutex_);
  std::thread thread_;
};

}  // namespace seedrl
