// LogdirLock: a run's claim on its logdir, so that two runs never write one directory's
// checkpoints and metrics at once (each would move the other's generations and interleave the
// other's rows). It holds an exclusive lock (flock) on <logdir>/seedrl.lock for its lifetime;
// the file says who holds it. The operating system releases the lock when the process ends, so a
// crashed run leaves nothing that stops the next one.
//
//   io::LogdirLock lock(options.logdir);  // throws when another run holds it
//
// Taking the lock also removes what writes interrupted by a crash left in the logdir (the
// temporary files of core/atomic_file.hpp): no other run can be writing them.
#pragma once

#include <string>

namespace seedrl::io {

class LogdirLock {
 public:
  /// Creates `logdir` (0700) when it does not exist and takes its lock. Throws seedrl::Error
  /// naming the logdir and the holder (its process id, host and start time) when another run,
  /// in this process or another, holds it.
  explicit LogdirLock(const std::string& logdir);
  ~LogdirLock();
  LogdirLock(const LogdirLock&) = delete;
  LogdirLock& operator=(const LogdirLock&) = delete;

  const std::string& path() const { return path_; }
  /// Temporary files of interrupted writes removed when the lock was taken.
  int removed_temporaries() const { return removed_; }

 private:
  std::string path_;
  int fd_ = -1;
  int removed_ = 0;
};

}  // namespace seedrl::io
