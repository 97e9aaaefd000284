// A disk that fails on purpose, through core/atomic_file.hpp's write-fault hook: while a
// WriteFaults lives and is on, every create, write, flush ("sync") and rename of a file whose path
// holds `match` (or only the `operation` named) fails with `error` (ENOSPC: the disk is full), as
// seedrl's writers would see it.
//
//   test::WriteFaults disk("/logdir/");   // full from here...
//   disk.set(false);                      // ...until now
//
// One at a time (the hook is process-wide); safe to toggle from the test's thread while seedrl's
// threads write.
#pragma once

#include <atomic>
#include <cerrno>
#include <mutex>
#include <string>
#include <string_view>

#include "seedrl/core/atomic_file.hpp"

namespace seedrl::test {

class WriteFaults {
 public:
  explicit WriteFaults(std::string match, std::string operation = {}, int error = ENOSPC,
                       bool on = true) {
    {
      std::lock_guard lock(state().mutex);
      state().match = std::move(match);
      state().operation = std::move(operation);
      state().error = error;
    }
    state().on = on;
    state().injected = 0;
    set_write_fault_hook(&hook);
  }
  ~WriteFaults() { set_write_fault_hook(nullptr); }
  WriteFaults(const WriteFaults&) = delete;
  WriteFaults& operator=(const WriteFaults&) = delete;

  void set(bool on) { state().on = on; }
  /// Operations failed so far.
  int injected() const { return state().injected; }

 private:
  struct State {
    std::mutex mutex;
    std::string match, operation;
    int error = ENOSPC;
    std::atomic<bool> on{false};
    std::atomic<int> injected{0};
  };
  static State& state() {
    static State s;
    return s;
  }
  static int hook(const std::string& path, std::string_view operation) {
    State& s = state();
    if (!s.on) return 0;
    std::lock_guard lock(s.mutex);
    if (path.find(s.match) == std::string::npos) return 0;
    if (!s.operation.empty() && s.operation != operation) return 0;
    ++s.injected;
    return s.error;
  }
};

}  // namespace seedrl::test
