// RunLogdir: a training session's logdir (TrainingSessionOptions::logdir), the run's own while it
// lasts, and what a failing disk may and may not do to the run:
//
//   construction      takes <logdir>/seedrl.lock (io/logdir_lock.hpp): a second run on the same
//                     logdir is refused by name; what an interrupted write left there is removed
//   checkpoint(write) a checkpoint that cannot be written (a full disk, an I/O error) is said once
//                     (the file and the system's reason) and the run goes on: the next period
//                     tries again, and the older generations stay as they were. Only
//                     max_checkpoint_failures failures in a row end the run (an Error saying so)
//   describe()        what the run's lines say about it, e.g. that temporaries were removed
//
// The metrics files go on through their own faults (io/metrics_logger.hpp). With an empty logdir
// (or on a group member that is not rank 0) nothing is written and checkpoint() does nothing.
//
// Thread-safety: one thread (the one that runs the session) uses it.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "seedrl/core/error.hpp"
#include "seedrl/io/logdir_lock.hpp"

namespace seedrl {

/// The message of the exception in `error` ("an unknown exception" for one that is not a
/// std::exception).
inline std::string describe_exception(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an unknown exception";
  }
}

class RunLogdir {
 public:
  /// No logdir (yet): nothing is written.
  RunLogdir() = default;
  /// open(logdir, max_failures).
  RunLogdir(std::string logdir, int max_failures) { open(std::move(logdir), max_failures); }

  /// `logdir` empty: no files. Otherwise creates it (0700) and takes its lock; throws
  /// seedrl::Error naming the run that holds it. `max_failures` >= 1.
  void open(std::string logdir, int max_failures) {
    SEEDRL_REQUIRE(max_failures >= 1, "RunLogdir: max_failures must be >= 1, got ", max_failures);
    SEEDRL_REQUIRE(!lock_, "RunLogdir: ", logdir_, " is already open");
    max_failures_ = max_failures;
    if (!logdir.empty()) lock_.emplace(logdir);
    logdir_ = std::move(logdir);
  }

  bool active() const { return lock_.has_value(); }
  const std::string& path() const { return logdir_; }
  int failures_in_a_row() const { return failures_; }

  /// Lines for the run's start: what taking the lock cleaned up.
  std::optional<std::string> describe() const {
    if (!lock_ || lock_->removed_temporaries() == 0) return std::nullopt;
    return str_cat("removed ", lock_->removed_temporaries(),
                   " temporary file(s) of writes an earlier run of ", logdir_, " did not finish");
  }

  /// Writes a checkpoint with `write` (which throws on any fault, leaving the older generations as
  /// they were). True when it was written. A failure is said through `say` and returns false; the
  /// max_failures-th in a row throws seedrl::Error instead (the run ends with it).
  bool checkpoint(const std::function<void()>& write,
                  const std::function<void(std::string_view)>& say) {
    if (!active()) return true;
    try {
      write();
    } catch (...) {
      ++failures_;
      const std::string what = describe_exception(std::current_exception());
      SEEDRL_REQUIRE(failures_ < max_failures_, "the checkpoint failed ", failures_,
                     " times in a row (the limit, TrainingSessionOptions::max_checkpoint_failures,"
                     " --max-checkpoint-failures); the last time: ",
                     what, ". The older checkpoints in ", logdir_, " are as they were");
      say(str_cat("warning: the checkpoint was not written (", failures_, " of ", max_failures_,
                  " failures in a row allowed): ", what,
                  "; training goes on, the older checkpoints are as they were, and the next "
                  "checkpoint tries again"));
      return false;
    }
    if (failures_ > 0)
      say(str_cat("the checkpoint was written again after ", failures_, " failure",
                  failures_ == 1 ? "" : "s"));
    failures_ = 0;
    return true;
  }

 private:
  std::string logdir_;
  int max_failures_ = 1;
  std::optional<io::LogdirLock> lock_;
  int failures_ = 0;
};

}  // namespace seedrl
