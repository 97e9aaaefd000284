// What a training program needs around its run: stopping cleanly on signals, the learner group
// when an MPI launcher started it (mpirun -np N program ...: every rank its own actors, the
// gradients averaged, rank 0 reporting), and ending with an error.
//
// The learner group is seedrl::mpi's: a program that links seedrl::mpi (which defines
// SEEDRL_HAS_MPI for it) trains as a group under mpirun; one that does not refuses to start as
// several processes. Header-only, so that the choice is the program's, not the library's.
#pragma once

#include <atomic>
#include <csignal>
#include <cstdio>
#include <exception>
#include <memory>

#include "seedrl/core/error.hpp"
#include "seedrl/learner/training_group.hpp"

#ifdef SEEDRL_HAS_MPI
#include "seedrl/mpi/learner_group.hpp"
#endif

namespace seedrl::cli {

/// Makes SIGINT and SIGTERM set the returned flag (for TrainingSessionOptions::interrupt, or to
/// poll) instead of killing the program, so that it can stop cleanly and save what it has.
inline const std::atomic<bool>* stop_on_signals() {
  static std::atomic<bool> stop{false};
  auto set = [](int) { stop = true; };
  std::signal(SIGINT, set);
  std::signal(SIGTERM, set);
  return &stop;
}

/// The learner group this program is a member of when an MPI launcher started it (mpirun -np N;
/// MPI starts at the first call and ends at exit), else null: the program trains alone.
/// Throws when several processes were launched but the program was built without seedrl::mpi.
inline TrainingGroup* learner_group() {
#ifdef SEEDRL_HAS_MPI
  struct Mpi {
    mpi::Session session;
    mpi::LearnerGroup group{session};
  };
  static const std::unique_ptr<Mpi> mpi =
      launched_processes() > 0 ? std::make_unique<Mpi>() : nullptr;
  return mpi ? &mpi->group : nullptr;
#else
  SEEDRL_REQUIRE(
      launched_processes() <= 1, "started by an MPI launcher as ", launched_processes(),
      " processes, but the program was built without seedrl::mpi (link it; seedrl is built with "
      "it where MPI is installed, e.g. libopenmpi-dev)");
  return nullptr;
#endif
}

/// This process's rank in learner_group() (0 alone) and the group's size (1 alone).
#ifdef SEEDRL_HAS_MPI
inline int group_rank() {
  return learner_group() ? learner_group()->rank() : 0;
}
inline int group_size() {
  return learner_group() ? learner_group()->size() : 1;
}
#else
// Without MPI the group is always null (GCC 12 otherwise warns of a null `this` on the branch
// it cannot see is dead, which -Werror builds refuse).
inline int group_rank() {
  (void)learner_group();  // throws where a launcher started several processes
  return 0;
}
inline int group_size() {
  (void)learner_group();
  return 1;
}
#endif

/// The end of a program that failed: says why on stderr and returns the exit status. A member of
/// a learner group ends the whole group instead (the others would wait for it).
inline int end_with_error(const char* program, const std::exception& error) {
  std::fprintf(stderr, "%s: error: %s\n", program, error.what());
  std::fflush(stderr);
  try {
    if (group_size() > 1) learner_group()->abort(str_cat(program, ": ", error.what()));
  } catch (...) {  // no group to end (the error may be that there is none)
  }
  return 1;
}

}  // namespace seedrl::cli
