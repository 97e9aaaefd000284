// Where a process's threads' time went, from Linux's /proc/self/task/*/{comm,schedstat}: each
// thread's time on a core and time runnable but waiting for one, and over a window, by group of
// threads (the runtime's threads by their names), the time they were blocked besides.
#pragma once

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

namespace seedrl::bench {

struct ThreadTime {
  std::string name;
  double on_core = 0.0, waiting_for_core = 0.0;  // seconds, since the thread started
};

inline std::map<int, ThreadTime> thread_times() {
  std::map<int, ThreadTime> out;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return out;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const std::string base = std::string("/proc/self/task/") + entry->d_name;
    ThreadTime t;
    std::ifstream comm(base + "/comm"), sched(base + "/schedstat");
    std::getline(comm, t.name);
    double on_ns = 0, wait_ns = 0;
    if (!(sched >> on_ns >> wait_ns)) continue;
    t.on_core = on_ns * 1e-9;
    t.waiting_for_core = wait_ns * 1e-9;
    out[std::atoi(entry->d_name)] = t;
  }
  closedir(dir);
  return out;
}

// seedrl-learner (and the learner workers seedrl-learner1...), seedrl-insert (R2D2's concurrent
// insertion), seedrl-infer and seedrl-actor by their names (their OpenMP workers inherit them);
// everything else (the session's own thread, the process's first thread) is "other".
inline std::string group_of(const std::string& name) {
  for (const char* known : {"seedrl-learner", "seedrl-insert", "seedrl-infer", "seedrl-actor"})
    if (name.starts_with(known)) return std::string(known).substr(7);
  return "other";
}

struct GroupTime {
  int threads = 0;
  double on_core = 0.0, waiting_for_core = 0.0, blocked = 0.0;
};

// Each group's time over the window between two snapshots of `seconds`.
inline std::map<std::string, GroupTime> window_times(const std::map<int, ThreadTime>& before,
                                                     const std::map<int, ThreadTime>& after,
                                                     double seconds) {
  std::map<std::string, GroupTime> groups;
  for (const auto& [tid, end] : after) {
    const auto start = before.find(tid);
    if (start == before.end()) continue;  // started within the window: too short to matter
    GroupTime& g = groups[group_of(end.name)];
    const double on = end.on_core - start->second.on_core;
    const double waiting = end.waiting_for_core - start->second.waiting_for_core;
    ++g.threads;
    g.on_core += on;
    g.waiting_for_core += waiting;
    g.blocked += std::max(0.0, seconds - on - waiting);
  }
  return groups;
}

}  // namespace seedrl::bench
