// The CUDA backend's device memory: the caching allocator (runtime.hpp gives its policy) and the
// DeviceRuntime that lets Storage and Tensor live on the GPU (copies on the calling thread's
// stream, page-locked host memory).
#include <algorithm>
#include <map>
#include <unordered_map>

#include "cuda_util.hpp"
#include "seedrl/core/storage.hpp"
#include "seedrl/core/thread_annotations.hpp"

namespace seedrl::cuda {
namespace detail {

namespace {

/// Device memory with reuse. See runtime.hpp for the policy.
class CachingAllocator {
 public:
  void* allocate(std::size_t bytes) SEEDRL_EXCLUDES(mutex_) {
    const std::size_t size = round_up(bytes);
    note_allocation();
    MutexLock lock(mutex_);
    // Best fit among blocks no more than twice the size whose release has completed.
    for (auto it = free_.lower_bound(size); it != free_.end() && it->first <= 2 * size; ++it) {
      Block& block = blocks_.at(it->second);
      const cudaError_t ready = cudaEventQuery(block.released.get());
      if (ready == cudaErrorNotReady) continue;
      if (ready != cudaSuccess) cudaGetLastError();  // treat as complete; clear the error
      void* ptr = it->second;
      free_.erase(it);
      block.in_use = true;
      stats_.cached_bytes -= block.size;
      note_in_use(block.size);
      ++stats_.cache_hits;
      return ptr;
    }
    void* ptr = nullptr;
    cudaError_t status = cudaMalloc(&ptr, size);
    if (status == cudaErrorMemoryAllocation && !free_.empty()) {
      cudaGetLastError();
      release_cached();
      status = cudaMalloc(&ptr, size);
    }
    if (status != cudaSuccess) {
      cudaGetLastError();
      fail("CUDA allocator: cannot allocate ", bytes, " bytes (", cudaGetErrorString(status),
           "); in use ", stats_.in_use_bytes, " bytes, cached ", stats_.cached_bytes, " bytes");
    }
    blocks_.emplace(ptr, Block{size, make_event(false), true});
    ++stats_.device_allocations;
    note_in_use(size);
    return ptr;
  }

  void deallocate(void* ptr) noexcept SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    auto it = blocks_.find(ptr);
    if (it == blocks_.end()) return;  // not ours: nothing sensible to do in a noexcept path
    Block& block = it->second;
    // Reusable once the work queued so far on the releasing thread's stream is done.
    // A thread without a live context (one that never computed on the GPU, or one being torn
    // down) has no queued work of its own; waiting for the device covers other threads' work.
    const cudaStream_t s = releasing_stream();
    if (s == nullptr) cudaDeviceSynchronize();
    if (cudaEventRecord(block.released.get(), s) != cudaSuccess) {
      cudaGetLastError();
      cudaDeviceSynchronize();
      cudaGetLastError();
    }
    block.in_use = false;
    stats_.in_use_bytes -= block.size;
    stats_.cached_bytes += block.size;
    free_.emplace(block.size, ptr);
  }

  void release_cached() SEEDRL_REQUIRES(mutex_) {
    cudaDeviceSynchronize();
    cudaGetLastError();
    for (const auto& [size, ptr] : free_) {
      cudaFree(ptr);
      blocks_.erase(ptr);
      stats_.cached_bytes -= size;
    }
    free_.clear();
  }

  void empty_cache() SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    release_cached();
  }

  MemoryStats stats() SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return stats_;
  }

 private:
  struct Block {
    std::size_t size;
    EventHandle released;
    bool in_use;
  };

  static std::size_t round_up(std::size_t bytes) {
    constexpr std::size_t kSmall = 512, kLarge = 2u << 20;
    const std::size_t unit = bytes < (1u << 20) ? kSmall : kLarge;
    return (std::max<std::size_t>(bytes, 1) + unit - 1) / unit * unit;
  }
  void note_in_use(std::size_t size) SEEDRL_REQUIRES(mutex_) {
    stats_.in_use_bytes += size;
    stats_.peak_in_use_bytes = std::max(stats_.peak_in_use_bytes, stats_.in_use_bytes);
  }

  Mutex mutex_;
  std::unordered_map<void*, Block> blocks_ SEEDRL_GUARDED_BY(mutex_);
  std::multimap<std::size_t, void*> free_ SEEDRL_GUARDED_BY(mutex_);
  MemoryStats stats_ SEEDRL_GUARDED_BY(mutex_);
};

CachingAllocator& allocator() {
  static auto* instance = new CachingAllocator();  // never destroyed: frees may come at exit
  return *instance;
}

class CudaRuntime final : public DeviceRuntime {
 public:
  void* allocate(std::size_t bytes) override { return allocator().allocate(bytes); }
  void deallocate(void* data, std::size_t) noexcept override { allocator().deallocate(data); }
  void copy(void* dst, Device, const void* src, Device, std::size_t bytes) override {
    SEEDRL_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream()));
    SEEDRL_CUDA_CHECK(cudaStreamSynchronize(stream()));
  }
  void copy_async(void* dst, Device, const void* src, Device, std::size_t bytes) override {
    SEEDRL_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream()));
  }
  void synchronize() override { SEEDRL_CUDA_CHECK(cudaStreamSynchronize(stream())); }
  void* allocate_pinned(std::size_t bytes) override {
    void* data = nullptr;
    SEEDRL_CUDA_CHECK(cudaHostAlloc(&data, bytes, cudaHostAllocPortable));
    return data;
  }
  void deallocate_pinned(void* data) noexcept override { cudaFreeHost(data); }
  void fill_zero(void* data, std::size_t bytes) override {
    SEEDRL_CUDA_CHECK(cudaMemsetAsync(data, 0, bytes, stream()));
    SEEDRL_CUDA_CHECK(cudaStreamSynchronize(stream()));
  }
};

}  // namespace

bool register_runtime() noexcept {
  static CudaRuntime runtime;
  register_device_runtime(Device::cuda, &runtime);
  return true;
}

}  // namespace detail

MemoryStats memory_stats() {
  return detail::allocator().stats();
}
void empty_cache() {
  detail::allocator().empty_cache();
}

}  // namespace seedrl::cuda
