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
// A whole TrainingSession (or train_locally) runs as a group with TrainingSessionOptions::group
// = &group: the session joins its learner, sums the group's frames and episodes, stops every
// rank at the same step and lets rank 0 alone write files (session/training_session.hpp).
//
// Every learner step, LearnerCore::finish_step hands the flat gradient buffer (every parameter's
// gradient, one contiguous f32 tensor) to the group: one MPI_Allreduce (sum) of the whole buffer,
// divided by the number of ranks, so that every rank applies the same update to the same
// parameters. With equal batches per rank this is the update of one learner on the union of
// the batches whenever the loss is a mean over its batch with the same number of terms on every
// rank (V-trace and PPO average over their transitions; a rank with fewer valid transitions, e.g.
// more episode boundaries, counts as much as the others). A step that any rank cannot use (a
// non-finite loss) is made non-finite for all, and all skip it. Device buffers (the CUDA backend)
// are averaged by NCCL on the GPUs where seedrl::mpi was built with NCCL (found next to CUDA),
// otherwise through the host.
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
#include <string_view>

#include "seedrl/core/tensor.hpp"
#include "seedrl/learner/learner_core.hpp"
#include "seedrl/learner/training_group.hpp"

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
  /// This rank among the ranks on its machine (0 .. local_size() - 1): which GPU it should use
  /// where a machine has one per rank (seedrl::cuda::set_device(local_rank() % device_count())).
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  /// "rank R of N on HOST", for messages.
  std::string describe() const;

 private:
  bool owns_ = false;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
};

struct LearnerGroupOptions {
  /// Longest wait for one all-reduce; past it the job is aborted (a rank hangs or has stopped
  /// stepping). Generous: a learner step waits for its own data first.
  std::chrono::milliseconds timeout{300'000};
  /// Gradients on a GPU are averaged by NCCL on the device where seedrl::mpi was built with
  /// NCCL (LearnerGroup::nccl_version()); false, or without NCCL: through host memory and MPI.
  bool nccl = true;

  /// Throws seedrl::Error naming a bad setting.
  void validate(std::string_view owner = "LearnerGroupOptions") const;
};

namespace detail {
class NcclReducer;
}

/// The learners of all ranks of MPI_COMM_WORLD as one data-parallel learner (a TrainingGroup:
/// pass it as TrainingSessionOptions::group to train a whole session as a group). Every
/// collective operation waits at most LearnerGroupOptions::timeout and then aborts the job.
class LearnerGroup final : public TrainingGroup {
 public:
  explicit LearnerGroup(const Session& mpi, LearnerGroupOptions options = {});
  ~LearnerGroup() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  /// The group's mean of `gradients` ([P] f32, host or device) in place: one all-reduce of the
  /// whole buffer. Where `finite` is false on any rank the result is NaN on every rank.
  void all_reduce(const Tensor& gradients, bool finite) override;
  void sum(std::span<double> values) override;
  /// The sum of `value` over the ranks (a counter).
  std::int64_t sum(std::int64_t value);
  /// Rank 0's `values` ([P] f32, host or device) on every rank, in place. Every rank must pass
  /// the same size; a mismatch is refused by name on every rank.
  void broadcast(const Tensor& values) override;
  void broadcast(std::string& bytes) override;
  /// Throws seedrl::Error on every rank, naming the ranks whose `values` differ from rank 0's
  /// (a 64-bit hash of the bytes is compared).
  void check_identical(const Tensor& values, const std::string& what) override;
  /// Says "seedrl::mpi: rank R of N: <why>; aborting the learner group" on stderr and ends every
  /// rank (MPI_Abort).
  [[noreturn]] void abort(const std::string& why) override;

  /// Joins `learner` to the group (LearnerCore::join_group): rank 0's parameters, optimizer
  /// state and step count on every rank, then every one of its steps goes through all_reduce.
  /// Call on every rank before the learner's first step.
  template <nn::Backend B>
  void join(LearnerCore<B>& learner) {
    learner.join_group(*this);
  }

  /// The NCCL seedrl::mpi was built with ("NCCL 2.28.9"), or null where it was built without.
  static const char* nccl_version();
  /// Whether the last all_reduce went through NCCL on the device.
  bool last_reduction_on_device() const { return last_on_device_; }

  /// Bytes each all_reduce moves (4 per gradient) and how many ran.
  std::int64_t reduced_bytes() const { return reduced_bytes_; }
  std::int64_t reductions() const { return reductions_; }

 private:
  // Waits for a non-blocking collective, polling, at most options_.timeout; past it, says which
  // collective (`what`) did not complete and aborts the job.
  void complete(void* request, const char* what);
  // `values` on the host: itself, or a copy of a device tensor in host_.
  const Tensor& on_host(const Tensor& values, int n);
  // Says that `what` did not complete within the timeout and aborts the job.
  [[noreturn]] void timed_out(const char* what) const;

  LearnerGroupOptions options_;
  int rank_ = 0, size_ = 1;
  std::int64_t reduced_bytes_ = 0, reductions_ = 0;
  bool last_on_device_ = false;
  Tensor host_;                                // staging for device buffers without NCCL
  std::unique_ptr<detail::NcclReducer> nccl_;  // created at the first device reduction
};

}  // namespace seedrl::mpi
