// seedrl::cuda runtime: devices, the caching allocator's statistics, events for timing.
//
// Opt-in: include <seedrl/backend/cuda/backend.hpp> (which includes this) and link
// seedrl::cuda. These headers never include CUDA's own headers, so a host program compiles them
// with its usual C++ compiler.
//
// Every CUDA, cuBLAS and cuDNN status the backend sees is checked; a failure throws
// seedrl::Error naming the call, the library's message, and the file and line.
//
// Streams: each host thread that uses the backend gets its own non-blocking stream (and cuBLAS
// and cuDNN handles bound to it), created on first use. A thread's kernels run in order on its
// stream; copies to or from the host (Tensor::copy_from, clone) wait for them, and optimizer
// updates finish before they return, so parameters written by a learner thread are complete when
// another thread's inference reads them.
//
// Memory: device memory comes from a caching allocator. Freed blocks are kept (keyed by size)
// and reused once the work queued before their release has finished (an event recorded at free
// time); when cudaMalloc runs out, the cache is released and the allocation retried. No managed
// memory is used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace seedrl::cuda {

/// Number of CUDA devices the driver reports; 0 when there is no device or no driver.
int device_count() noexcept;
/// True when at least one device is usable.
bool available() noexcept;
/// Why available() is false, in the CUDA runtime's words ("" when a device is available).
std::string unavailable_reason();

/// Selects the device the backend uses from now on, for threads that have not used it yet
/// (default 0). Throws when `index` is out of range.
void set_device(int index);
int current_device();

struct DeviceInfo {
  int index = 0;
  std::string name;
  int compute_major = 0, compute_minor = 0;
  std::size_t total_memory = 0;
  int multiprocessors = 0;
  int driver_version = 0;   ///< e.g. 13000 for CUDA 13.0
  int runtime_version = 0;  ///< the CUDA runtime seedrl was built against
  std::size_t cudnn_version = 0;
  int cublas_version = 0;
  /// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.1 GiB; driver 13.0, runtime 13.0, cuDNN 9.19.0)"
  std::string describe() const;
};
/// Facts about a device (the current one by default).
DeviceInfo device_info(int index = -1);

/// Waits until the calling thread's queued GPU work is done.
void synchronize();

/// Lets cuBLAS and cuDNN use TF32 tensor cores for f32 GEMMs and convolutions (about 10 bits of
/// mantissa; much faster on Ampere and later). Off by default so results match the CPU backend
/// closely. Takes effect for work issued afterwards, on every thread.
void set_allow_tf32(bool allow);
bool allow_tf32();

/// How convolutions choose their cuDNN algorithms. A new input shape (a new batch size, say)
/// starts with cuDNN's heuristics, which cost microseconds; once the shape has been used `uses`
/// times in a pass (forward, filter gradient, input gradient), its algorithms for that pass are
/// measured (cudnnFind: every candidate timed on the device, tens of milliseconds and more) and
/// the fastest kept. So a fixed training shape is measured after a few steps, while the server's
/// batch sizes, which vary from 1 to its max_batch, never stall acting with a search at first
/// sight. 0: never measure (heuristics only); 1: measure at first sight. Default 8.
void set_conv_measure_after(int uses);
int conv_measure_after();
/// Algorithm measurements (cudnnFind searches) run so far in this process, one per pass and
/// shape measured: a figure to watch when the first steps of a run are slow.
std::int64_t conv_measurements();

struct MemoryStats {
  std::size_t in_use_bytes = 0;         ///< handed out and not yet freed
  std::size_t cached_bytes = 0;         ///< freed, kept for reuse
  std::size_t peak_in_use_bytes = 0;    ///< highest in_use_bytes so far
  std::int64_t device_allocations = 0;  ///< cudaMalloc calls
  std::int64_t cache_hits = 0;          ///< allocations served from the cache
};
MemoryStats memory_stats();
/// Returns every cached block to the driver (waits for the device first).
void empty_cache();

/// A CUDA event on the calling thread's stream, for timing GPU work from the host:
///   Event start, stop; start.record(); ...; stop.record(); double ms = stop.elapsed_ms(start);
class Event {
 public:
  Event();
  ~Event();
  Event(Event&&) noexcept;
  Event& operator=(Event&&) noexcept;
  /// Records the event after the work queued so far on the calling thread's stream.
  void record();
  /// Waits until the recorded work is done.
  void synchronize() const;
  /// Milliseconds between `start` and this event (both recorded; waits for this one).
  double elapsed_ms(const Event& start) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedrl::cuda
