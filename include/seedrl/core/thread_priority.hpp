// Thread priority: a helper thread that must never delay the threads it shares a core with.
#pragma once

#if defined(__linux__)
#include <sched.h>
#endif

namespace seedrl {

/// Makes the calling thread run only on a core that has nothing else to do (Linux SCHED_IDLE:
/// any other runnable thread preempts it at once). For helpers that use the cycles inference and
/// the actors leave free (the learner's workers) without ever taking a core from them. Returns
/// false, changing nothing, where the platform has no such class or refuses it.
inline bool set_background_priority() noexcept {
#if defined(__linux__) && defined(SCHED_IDLE)
  sched_param param{};
  param.sched_priority = 0;
  return sched_setscheduler(0, SCHED_IDLE, &param) == 0;  // 0: the calling thread
#else
  return false;
#endif
}

}  // namespace seedrl
