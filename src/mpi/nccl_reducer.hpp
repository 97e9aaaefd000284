// The learner group's all-reduce of device buffers over NCCL (built where CMake finds NCCL next to
// the CUDA backend; private to seedrl::mpi). The communicator spans MPI_COMM_WORLD: rank 0's
// ncclUniqueId reaches the others through MPI, on the device current when the first device
// buffer is reduced (one GPU per rank: the host program picks it, e.g. by
// Session::local_rank()).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

namespace seedrl::mpi::detail {

class NcclReducer {
 public:
  /// Collective over MPI_COMM_WORLD: every rank constructs it at the same point.
  NcclReducer(int rank, int size);
  ~NcclReducer();
  NcclReducer(const NcclReducer&) = delete;
  NcclReducer& operator=(const NcclReducer&) = delete;

  /// Replaces `n` floats at `device_data` (on this rank's GPU) by the ranks' mean, NaN on every
  /// rank where `finite` is false on any. Waits for the calling thread's queued backend work
  /// first. Returns false when the reduction did not complete within `timeout` (the
  /// communicator is then aborted); throws seedrl::Error naming the call when NCCL or CUDA fail.
  bool all_reduce_mean(float* device_data, std::int64_t n, bool finite,
                       std::chrono::milliseconds timeout);

  /// "NCCL 2.28.9".
  static const char* version();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace seedrl::mpi::detail
