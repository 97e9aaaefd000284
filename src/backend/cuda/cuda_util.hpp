// Internals of the CUDA backend: status checks with file and line, RAII handles, and the
// per-thread context (stream, cuBLAS and cuDNN handles).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstdint>
#include <utility>

#include "seedrl/backend/cuda/runtime.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/core/thread_annotations.hpp"

namespace seedrl::cuda::detail {

[[noreturn]] void throw_cuda(cudaError_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas(cublasStatus_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_cudnn(cudnnStatus_t status, const char* call, const char* file, int line);

}  // namespace seedrl::cuda::detail

/// Evaluates a CUDA runtime call and throws seedrl::Error (call, message, file:line) on failure.
#define SEEDRL_CUDA_CHECK(call)                                                      \
  do {                                                                               \
    const cudaError_t seedrl_status_ = (call);                                       \
    if (seedrl_status_ != cudaSuccess)                                               \
      ::seedrl::cuda::detail::throw_cuda(seedrl_status_, #call, __FILE__, __LINE__); \
  } while (false)
#define SEEDRL_CUBLAS_CHECK(call)                                                      \
  do {                                                                                 \
    const cublasStatus_t seedrl_status_ = (call);                                      \
    if (seedrl_status_ != CUBLAS_STATUS_SUCCESS)                                       \
      ::seedrl::cuda::detail::throw_cublas(seedrl_status_, #call, __FILE__, __LINE__); \
  } while (false)
#define SEEDRL_CUDNN_CHECK(call)                                                      \
  do {                                                                                \
    const cudnnStatus_t seedrl_status_ = (call);                                      \
    if (seedrl_status_ != CUDNN_STATUS_SUCCESS)                                       \
      ::seedrl::cuda::detail::throw_cudnn(seedrl_status_, #call, __FILE__, __LINE__); \
  } while (false)

namespace seedrl::cuda::detail {

/// A move-only owner of a handle created by Create and released by Destroy.
template <class Handle, auto Destroy>
class Owned {
 public:
  Owned() = default;
  explicit Owned(Handle h) : handle_(h) {}
  ~Owned() {
    if (handle_) Destroy(handle_);  // status ignored: destructors must not throw
  }
  Owned(Owned&& other) noexcept : handle_(std::exchange(other.handle_, Handle{})) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      if (handle_) Destroy(handle_);
      handle_ = std::exchange(other.handle_, Handle{});
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != Handle{}; }

 private:
  Handle handle_{};
};

using CublasHandle = Owned<cublasHandle_t, cublasDestroy>;
using CudnnHandle = Owned<cudnnHandle_t, cudnnDestroy>;
using StreamHandle = Owned<cudaStream_t, cudaStreamDestroy>;
using EventHandle = Owned<cudaEvent_t, cudaEventDestroy>;
using TensorDescriptor = Owned<cudnnTensorDescriptor_t, cudnnDestroyTensorDescriptor>;
using FilterDescriptor = Owned<cudnnFilterDescriptor_t, cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor =
    Owned<cudnnConvolutionDescriptor_t, cudnnDestroyConvolutionDescriptor>;

TensorDescriptor make_tensor_descriptor();
FilterDescriptor make_filter_descriptor();
ConvolutionDescriptor make_convolution_descriptor();
EventHandle make_event(bool timing);

/// The calling thread's stream and library handles, created on first use on the device chosen
/// by set_device() at that time.
struct Context {
  Context() = default;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context();  // forgets the thread's stream before releasing it (see releasing_stream())
  int device = 0;
  StreamHandle stream;
  CublasHandle cublas;
  CudnnHandle cudnn;
  bool tf32 = false;  // the math mode cublas was last set to
};
Context& context();
/// The calling thread's stream if it has a live context, else null, without creating one: for
/// releasing memory, which may happen on any thread and during thread or process exit, after the
/// thread's context is gone.
cudaStream_t releasing_stream() noexcept;
inline cudaStream_t stream() {
  return context().stream.get();
}
/// The thread's cuBLAS handle, its math mode matching allow_tf32().
cublasHandle_t cublas();
cudnnHandle_t cudnn();
/// True while the calling thread's stream is being captured into a cuda::Graph: work that a
/// layer would skip when its inputs look unchanged (repacking weights of an unchanged version)
/// must be queued anyway, since the graph replays it after they change.
bool capturing() noexcept;
/// Called by the allocator for every device allocation: counted while capturing, since a graph
/// must not hold memory that is released after its capture.
void note_allocation() noexcept;
/// Counts one cudnnFind search (cuda::conv_measurements()).
void count_conv_measurement();
/// Held around each cudnnFind search: one at a time in the process, since concurrent searches
/// time each other's kernels and each allocate their trial workspaces (with many threads each
/// computing on its own network, every candidate of a search was seen to fail).
Mutex& conv_search_mutex();

/// Row-major C[M, N] = alpha op(A) op(B) + beta C with op(A) [M, K] and op(B) [K, N], the same
/// convention as the CPU backend's gemm: A is stored [M, K] (or [K, M] when trans_a).
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, const float* b, float beta, float* c);

/// Launch shape for n elements.
inline unsigned blocks_for(std::int64_t n, unsigned threads = 256) {
  const std::int64_t blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 65535 * 16 ? (blocks > 0 ? blocks : 1) : 65535 * 16);
}

}  // namespace seedrl::cuda::detail
