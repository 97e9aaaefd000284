// Data-parallel learners: what a learner and a TrainingSession need from a group of processes
// that train one set of parameters together. No MPI here: seedrl::mpi::LearnerGroup
// (mpi/learner_group.hpp) is the implementation over MPI; tests use in-process ones.
//
//   member 0          member 1   ...   member N-1      each: its own actors, inference, learner
//   learner step      learner step     learner step
//        └── GradientReducer::all_reduce: the mean gradient on every member ──┘
//            TrainingGroup::sum: counters and the stop vote (TrainingSession)
//
// Every member calls the collective operations (all_reduce, sum, broadcast, check_identical) in
// the same order; they return once every member has called them. One thread at a time per
// member may call them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>

#include "seedrl/core/tensor.hpp"

namespace seedrl {

/// How a learner's gradients become the group's. Called by LearnerCore::finish_step with every
/// parameter's gradient in one flat buffer (on the backend's device), before anything reads them;
/// afterwards the buffer must hold the same values on every member of the group (their mean), so
/// that every member takes the same update.
class GradientReducer {
 public:
  virtual ~GradientReducer() = default;
  /// Replaces `gradients` [P] f32 by the group's mean. `finite` is false where this learner
  /// found its step unusable (a non-finite loss): the reduced buffer must then be non-finite on
  /// every member, so that all skip the step together.
  virtual void all_reduce(const Tensor& gradients, bool finite) = 0;
  /// A learner step's gradients, one buffer per network it updates (NetworkSet), in the same
  /// order on every member; LearnerCore::finish_step calls this once per step. By default each
  /// buffer goes through all_reduce in turn.
  virtual void all_reduce_step(std::span<const Tensor> gradients, bool finite) {
    for (const Tensor& g : gradients) all_reduce(g, finite);
  }
};

/// A group of data-parallel learner processes (members 0 .. size() - 1; member 0 is the root:
/// its parameters are everyone's at the start, it writes checkpoints and metrics).
class TrainingGroup : public GradientReducer {
 public:
  virtual int rank() const = 0;
  virtual int size() const = 0;

  /// The sum over the members of each of `values`, in place (counters, votes; exact for
  /// integers below 2^53).
  virtual void sum(std::span<double> values) = 0;
  /// The root's `values` (f32, host or device) on every member, in place. Every member passes
  /// as many values; a mismatch is refused by name on every member.
  virtual void broadcast(const Tensor& values) = 0;
  /// The root's `bytes` on every member (any length).
  virtual void broadcast(std::string& bytes) = 0;
  /// Throws seedrl::Error on every member, naming the members whose `values` differ from the
  /// root's (a hash is compared): the periodic check that the group has not diverged. `what`
  /// names the values in the message.
  virtual void check_identical(const Tensor& values, const std::string& what) = 0;
  /// Ends the whole group because of an error on this member, which `why` describes (said on
  /// stderr with this member's rank). Does not return.
  [[noreturn]] virtual void abort(const std::string& why) = 0;

  /// The root's `value` on every member (a counter; exact below 2^53).
  std::int64_t broadcast_count(std::int64_t value) {
    double v = rank() == 0 ? static_cast<double>(value) : 0.0;
    sum(std::span<double>(&v, 1));
    return static_cast<std::int64_t>(v);
  }
};

/// How many processes an MPI launcher started this program as, from the variables launchers set
/// (Open MPI's mpirun, MPICH/Hydra and Slurm's PMI-2, MVAPICH, Slurm's srun --mpi=pmix); 0 when
/// none did. A program that trains under `mpirun -np N` without a group runs N independent
/// copies.
inline int launched_processes() {
  const auto count = [](const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr ? std::atoi(value) : 0;
  };
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE"})
    if (const int n = count(name); n > 0) return n;
  // srun --mpi=pmix sets no size of MPI's own: PMIx's rank says that a launcher started this
  // process, the job step's task count how many (a PMIx launcher of another kind: at least 1).
  if (std::getenv("PMIX_RANK") != nullptr) return std::max(1, count("SLURM_STEP_NUM_TASKS"));
  return 0;
}

}  // namespace seedrl
