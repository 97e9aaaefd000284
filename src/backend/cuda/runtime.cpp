// The CUDA backend's runtime: status checks, per-thread contexts and streams, cuBLAS and cuDNN
// handles, devices and events. Device memory (the caching allocator and the DeviceRuntime) is
// device_memory.cpp's.
#include <algorithm>
#include <atomic>
#include <sstream>

#include "cuda_util.hpp"
#include "seedrl/core/storage.hpp"
#include "seedrl/core/thread_annotations.hpp"

namespace seedrl::cuda {
namespace detail {

void throw_cuda(cudaError_t status, const char* call, const char* file, int line) {
  cudaGetLastError();  // clear a sticky-free error so the next call does not see it again
  fail("CUDA error ", cudaGetErrorName(status), " (", cudaGetErrorString(status), ") in ", call,
       " at ", file, ":", line);
}

void throw_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  fail("cuBLAS error ", cublasGetStatusName(status), " (", cublasGetStatusString(status), ") in ",
       call, " at ", file, ":", line);
}

void throw_cudnn(cudnnStatus_t status, const char* call, const char* file, int line) {
  char message[512] = {};
  cudnnGetLastErrorString(message, sizeof(message));
  fail("cuDNN error ", cudnnGetErrorString(status), " in ", call, " at ", file, ":", line,
       message[0] != '\0' ? ": " : "", message);
}

TensorDescriptor make_tensor_descriptor() {
  cudnnTensorDescriptor_t d = nullptr;
  SEEDRL_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d));
  return TensorDescriptor(d);
}
FilterDescriptor make_filter_descriptor() {
  cudnnFilterDescriptor_t d = nullptr;
  SEEDRL_CUDNN_CHECK(cudnnCreateFilterDescriptor(&d));
  return FilterDescriptor(d);
}
ConvolutionDescriptor make_convolution_descriptor() {
  cudnnConvolutionDescriptor_t d = nullptr;
  SEEDRL_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&d));
  return ConvolutionDescriptor(d);
}
EventHandle make_event(bool timing) {
  cudaEvent_t e = nullptr;
  SEEDRL_CUDA_CHECK(
      cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
  return EventHandle(e);
}

namespace {
std::atomic<int> g_device{0};
std::atomic<bool> g_tf32{false};
std::atomic<int> g_conv_measure_after{8};
std::atomic<std::int64_t> g_conv_measurements{0};
}  // namespace

namespace {
// The stream of the calling thread's live context (trivially destructible, so it stays readable
// while thread-local objects are destroyed).
thread_local cudaStream_t t_stream = nullptr;
}  // namespace

Context::~Context() {
  t_stream = nullptr;
}

cudaStream_t releasing_stream() noexcept {
  return t_stream;
}

Context& context() {
  thread_local Context ctx;
  if (!ctx.stream) {
    ctx.device = g_device.load();
    SEEDRL_CUDA_CHECK(cudaSetDevice(ctx.device));
    cudaStream_t s = nullptr;
    SEEDRL_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    StreamHandle stream_handle(s);
    cublasHandle_t blas = nullptr;
    SEEDRL_CUBLAS_CHECK(cublasCreate(&blas));
    CublasHandle blas_handle(blas);
    SEEDRL_CUBLAS_CHECK(cublasSetStream(blas, s));
    SEEDRL_CUBLAS_CHECK(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH));
    cudnnHandle_t dnn = nullptr;
    SEEDRL_CUDNN_CHECK(cudnnCreate(&dnn));
    CudnnHandle dnn_handle(dnn);
    SEEDRL_CUDNN_CHECK(cudnnSetStream(dnn, s));
    ctx.cublas = std::move(blas_handle);
    ctx.cudnn = std::move(dnn_handle);
    ctx.stream = std::move(stream_handle);  // last: a context is complete when it has a stream
    t_stream = s;
  }
  return ctx;
}

cublasHandle_t cublas() {
  Context& ctx = context();
  const bool tf32 = g_tf32.load(std::memory_order_relaxed);
  if (tf32 != ctx.tf32) {
    SEEDRL_CUBLAS_CHECK(cublasSetMathMode(ctx.cublas.get(),
                                          tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
    ctx.tf32 = tf32;
  }
  return ctx.cublas.get();
}

cudnnHandle_t cudnn() {
  return context().cudnn.get();
}

void count_conv_measurement() {
  g_conv_measurements.fetch_add(1, std::memory_order_relaxed);
}

Mutex& conv_search_mutex() {
  static auto* mutex = new Mutex();  // never destroyed: searches may run during exit
  return *mutex;
}

void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, const float* b, float beta, float* c) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
  SEEDRL_CUBLAS_CHECK(
      cublasSgemm(cublas(), trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                  trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                  static_cast<int>(k), &alpha, b, static_cast<int>(trans_b ? k : n), a,
                  static_cast<int>(trans_a ? m : k), &beta, c, static_cast<int>(n)));
}

}  // namespace detail

int device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

bool available() noexcept {
  return device_count() > 0;
}

std::string unavailable_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  cudaGetLastError();
  if (status != cudaSuccess) return cudaGetErrorString(status);
  return count > 0 ? "" : "no CUDA device";
}

void set_device(int index) {
  const int count = device_count();
  SEEDRL_REQUIRE(index >= 0 && index < count, "cuda::set_device: device ", index,
                 " does not exist (", count, " CUDA devices)");
  detail::g_device.store(index);
}

int current_device() {
  return detail::g_device.load();
}

DeviceInfo device_info(int index) {
  if (index < 0) index = current_device();
  const int count = device_count();
  SEEDRL_REQUIRE(index >= 0 && index < count, "cuda::device_info: device ", index,
                 " does not exist (", count, " CUDA devices: ", unavailable_reason(), ")");
  cudaDeviceProp prop{};
  SEEDRL_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  DeviceInfo info;
  info.index = index;
  info.name = prop.name;
  info.compute_major = prop.major;
  info.compute_minor = prop.minor;
  info.total_memory = prop.totalGlobalMem;
  info.multiprocessors = prop.multiProcessorCount;
  SEEDRL_CUDA_CHECK(cudaDriverGetVersion(&info.driver_version));
  SEEDRL_CUDA_CHECK(cudaRuntimeGetVersion(&info.runtime_version));
  info.cudnn_version = cudnnGetVersion();
  SEEDRL_CUBLAS_CHECK(cublasGetVersion(detail::cublas(), &info.cublas_version));
  return info;
}

std::string DeviceInfo::describe() const {
  auto version = [](int v) {
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
  };
  std::ostringstream s;
  s << name << " (sm_" << compute_major << compute_minor << ", " << multiprocessors << " SMs, "
    << static_cast<double>(total_memory) / (1024.0 * 1024.0 * 1024.0) << " GiB; driver "
    << version(driver_version) << ", runtime " << version(runtime_version) << ", cuDNN "
    << cudnn_version / 10000 << "." << cudnn_version % 10000 / 100 << "." << cudnn_version % 100
    << ", cuBLAS " << cublas_version << ")";
  return s.str();
}

void synchronize() {
  SEEDRL_CUDA_CHECK(cudaStreamSynchronize(detail::stream()));
}

void set_allow_tf32(bool allow) {
  detail::g_tf32.store(allow);
}
bool allow_tf32() {
  return detail::g_tf32.load();
}

void set_conv_measure_after(int uses) {
  if (uses < 0) {
    fail("cuda::set_conv_measure_after: uses must be >= 0 (0: never measure), got ", uses);
  }
  detail::g_conv_measure_after.store(uses);
}
int conv_measure_after() {
  return detail::g_conv_measure_after.load();
}
std::int64_t conv_measurements() {
  return detail::g_conv_measurements.load();
}

struct Event::Impl {
  detail::EventHandle event = detail::make_event(true);
  bool recorded = false;
};

Event::Event() : impl_(std::make_unique<Impl>()) {}
Event::~Event() = default;
Event::Event(Event&&) noexcept = default;
Event& Event::operator=(Event&&) noexcept = default;

void Event::record() {
  SEEDRL_CUDA_CHECK(cudaEventRecord(impl_->event.get(), detail::stream()));
  impl_->recorded = true;
}
void Event::synchronize() const {
  SEEDRL_REQUIRE(impl_->recorded, "cuda::Event::synchronize: event never recorded");
  SEEDRL_CUDA_CHECK(cudaEventSynchronize(impl_->event.get()));
}
double Event::elapsed_ms(const Event& start) const {
  SEEDRL_REQUIRE(impl_->recorded && start.impl_->recorded,
                 "cuda::Event::elapsed_ms: both events must be recorded");
  synchronize();
  float ms = 0.0f;
  SEEDRL_CUDA_CHECK(cudaEventElapsedTime(&ms, start.impl_->event.get(), impl_->event.get()));
  return ms;
}

}  // namespace seedrl::cuda
