// seedrl::mpi: data-parallel learners over MPI (the optional component seedrl::mpi, built where
// CMake finds MPI; link seedrl::mpi and include this header: no MPI header is needed, and
// seedrl/seedrl.hpp does not include this one).
//
//   int main(int argc, char** argv) {
//     seedrl::mpi::Session mpi(&argc, &argv);     // MPI_Init_thread ... MPI_Finalize
//     seedrl::mpi::LearnerGroup group(mpi);
//     ... build the learner (each rank its own server, actors and learner) ...
//     group.join(learner);                        // rank 0's parameters everywhere, then
//                                                 // every step's gradients averaged
//   }
//
// Every learner step, LearnerCore::finish_step hands the flat gradient buffer (every parameter's
// gradient, one contiguous f32 tensor) to the group: one MPI_Allreduce (sum) of the whole buffer,
// divided by the number of ranks, so that every rank applies the same update to the same
// parameters. With equal batches per rank this is the update of one learner on the union of
// the batches whenever the loss is a mean over its batch with the same number of terms on every
// rank (V-trace and PPO average over their transitions; a rank with fewer valid transitions, e.g.
// more episode boundaries, counts as much as the others). A step that any rank cannot use (a
// non-finite loss) is made non-finite for all, and all skip it. Device buffers go through the
// host (an NCCL path is for GPU builds).
//
// Faults: a rank that dies makes the MPI launcher end the job (mpirun names the rank). A rank that
// hangs would leave the others waiting in the all-reduce forever; instead each all-reduce waits
// at most LearnerGroupOptions::timeout and then aborts the whole job (MPI_Abort) with a message
// naming this rank and step on stderr.
//
// Thread-safety: MPI is initialised for MPI_THREAD_SERIALIZED: one thread at a time may call into
// the group (the learner's thread, or the main thread between steps). Not for concurrent use.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "seedrl/core/tensor.hpp"
#include "seedrl/runtime/learner_core.hpp"

namespace seedrl::mpi {

/// MPI for this process. Initialises MPI (MPI_THREAD_SERIALIZED) unless it already is, and
/// finalises it on destruction if it initialised it. One per process, before any LearnerGroup.
/// Throws seedrl::Error when MPI cannot be initialised or gives less than serialized threading.
class Session {
 public:
  explicit Session(int* argc = nullptr, char*** argv = nullptr);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// "rank R of N on HOST", for messages.
  std::string describe() const;

 private:
  bool owns_ = false;
  int rank_ = 0, size_ = 1;
};

struct LearnerGroupOptions {
  /// Longest wait for one all-reduce; past it the job is aborted (a rank hangs or has stopped
  /// stepping). Generous: a learner step waits for its own data first.
  std::chrono::milliseconds timeout{300'000};

  /// Throws seedrl::Error naming a bad setting.
  void validate() const;
};

/// The learners of all ranks of MPI_COMM_WORLD as one data-parallel learner.
class LearnerGroup final : public GradientReducer {
 public:
  explicit LearnerGroup(const Session& mpi, LearnerGroupOptions options = {});
  ~LearnerGroup() override;

  int rank() const { return rank_; }
  int size() const { return size_; }

  /// The group's mean of `gradients` ([P] f32, host or device) in place: one all-reduce of the
  /// whole buffer. Where `finite` is false on any rank the result is NaN on every rank. Aborts the
  /// job when it does not complete within the timeout.
  void all_reduce(const Tensor& gradients, bool finite) override;
  /// Rank 0's `values` ([P] f32, host or device) on every rank, in place. Every rank must pass
  /// the same size; a mismatch is refused by name on every rank.
  void broadcast(const Tensor& values);
  /// The sum of `value` over the ranks (counters: frames, episodes).
  std::int64_t sum(std::int64_t value);
  /// Throws seedrl::Error on every rank, naming the ranks whose `values` differ from rank 0's
  /// (a 64-bit hash of the bytes is compared): the periodic check that the group has not
  /// diverged. `what` names the values in the message.
  void check_identical(const Tensor& values, const std::string& what);

  /// Joins `learner`: rank 0's parameters on every rank (under the learner's write lock, so
  /// inference never sees a half-copied set), then every one of its steps goes through
  /// all_reduce. Call before the learner's first step.
  template <nn::Backend B>
  void join(LearnerCore<B>& learner) {
    {
      SharedParameters::WriteGuard guard(learner.parameters());
      broadcast(learner.network().parameters().values());
      learner.network().parameters().bump_version();
    }
    learner.set_gradient_reducer(this);
  }

  /// Bytes each all_reduce moves (4 per gradient) and how many ran.
  std::int64_t reduced_bytes() const { return reduced_bytes_; }
  std::int64_t reductions() const { return reductions_; }

 private:
  LearnerGroupOptions options_;
  int rank_ = 0, size_ = 1;
  std::int64_t reduced_bytes_ = 0, reductions_ = 0;
  Tensor host_;  // staging for device buffers
};

}  // namespace seedrl::mpi
