#include "nccl_reducer.hpp"

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <limits>
#include <thread>

#include "seedrl/backend/cuda/runtime.hpp"
#include "seedrl/core/error.hpp"

namespace seedrl::mpi::detail {
namespace {

void check_nccl(ncclResult_t result, const char* call) {
  SEEDRL_REQUIRE(result == ncclSuccess, "seedrl::mpi: ", call,
                 " failed: ", ncclGetErrorString(result));
}

void check_cuda(cudaError_t result, const char* call) {
  SEEDRL_REQUIRE(result == cudaSuccess, "seedrl::mpi: ", call,
                 " failed: ", cudaGetErrorString(result));
}

}  // namespace

struct NcclReducer::State {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  bool aborted = false;
};

NcclReducer::NcclReducer(int rank, int size) : state_(std::make_unique<State>()) {
  ncclUniqueId id{};
  if (rank == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  SEEDRL_REQUIRE(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD) == MPI_SUCCESS,
                 "seedrl::mpi: MPI_Bcast of the NCCL id failed");
  // The device the backend uses on this thread.
  check_cuda(cudaSetDevice(cuda::current_device()), "cudaSetDevice");
  check_cuda(cudaStreamCreateWithFlags(&state_->stream, cudaStreamNonBlocking),
             "cudaStreamCreateWithFlags");
  check_nccl(ncclCommInitRank(&state_->comm, size, id, rank), "ncclCommInitRank");
}

NcclReducer::~NcclReducer() {
  if (state_->comm != nullptr && !state_->aborted) ncclCommDestroy(state_->comm);
  if (state_->stream != nullptr) cudaStreamDestroy(state_->stream);
}

bool NcclReducer::all_reduce_mean(float* device_data, std::int64_t n, bool finite,
                                  std::chrono::milliseconds timeout) {
  SEEDRL_REQUIRE(!state_->aborted, "seedrl::mpi: the NCCL communicator was aborted");
  cuda::synchronize();  // the gradients of this thread's backward are complete
  if (!finite && n > 0) {
    // A step this rank cannot use: NaN spreads through the mean to every rank.
    static const float nan = std::numeric_limits<float>::quiet_NaN();
    check_cuda(
        cudaMemcpyAsync(device_data, &nan, sizeof nan, cudaMemcpyHostToDevice, state_->stream),
        "cudaMemcpyAsync");
  }
  check_nccl(ncclAllReduce(device_data, device_data, static_cast<std::size_t>(n), ncclFloat,
                           ncclAvg, state_->comm, state_->stream),
             "ncclAllReduce of the gradients");
  // Polled, so that a rank that never joins ends the job instead of hanging it.
  const auto start = std::chrono::steady_clock::now();
  for (int polls = 0;; ++polls) {
    const cudaError_t status = cudaStreamQuery(state_->stream);
    if (status == cudaSuccess) return true;
    if (status != cudaErrorNotReady) check_cuda(status, "cudaStreamQuery");
    ncclResult_t async = ncclSuccess;
    check_nccl(ncclCommGetAsyncError(state_->comm, &async), "ncclCommGetAsyncError");
    check_nccl(async, "ncclAllReduce (asynchronous error)");
    if (std::chrono::steady_clock::now() - start > timeout) {
      ncclCommAbort(state_->comm);
      state_->aborted = true;
      return false;
    }
    if (polls > 100) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

const char* NcclReducer::version() {
  static const std::string text = [] {
    int code = 0;
    ncclGetVersion(&code);
    return str_cat("NCCL ", code / 10000, ".", code / 100 % 100, ".", code % 100);
  }();
  return text.c_str();
}

}  // namespace seedrl::mpi::detail
