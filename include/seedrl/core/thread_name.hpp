// Names for seedrl's threads, so that top -H, perf, gdb and /proc/<pid>/task/*/comm say what
// each one is: "seedrl-learner", "seedrl-infer", "seedrl-actor", "seedrl-io".
#pragma once

#include <string>
#include <string_view>

#if defined(__linux__)
#include <pthread.h>
#endif

namespace seedrl {

/// Names the calling thread (Linux keeps the first 15 bytes; elsewhere it does nothing).
inline void set_thread_name(std::string_view name) {
#if defined(__linux__)
  const std::string truncated(name.substr(0, 15));
  pthread_setname_np(pthread_self(), truncated.c_str());
#else
  (void)name;
#endif
}

}  // namespace seedrl
