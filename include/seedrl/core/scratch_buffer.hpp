// ScratchBuffer: reusable storage for per-call results, so hot paths do not allocate.
#pragma once

#include <atomic>
#include <cstdint>

#include "seedrl/core/tensor.hpp"

namespace seedrl {

/// view(shape) returns a tensor of `shape` over storage that is reallocated only when more
/// elements (or another dtype or device) than ever before are asked for. Earlier views stay valid
/// (they keep their storage alive) but are overwritten by the users of later views of the same
/// storage. Not thread-safe.
///
/// reallocations() counts, process-wide, every time any ScratchBuffer got new storage: work
/// replayed from recorded device addresses (a CUDA graph of a forward) is valid only while it has
/// not moved.
class ScratchBuffer {
 public:
  explicit ScratchBuffer(Device device = Device::cpu) : device_(device) {}

  /// A host buffer whose memory is page-locked for `accelerator` (see Tensor::empty_pinned).
  static ScratchBuffer pinned(Device accelerator) {
    ScratchBuffer buffer(Device::cpu);
    buffer.pinned_for_ = accelerator;
    return buffer;
  }

  Tensor view(const Shape& shape, DType dtype = DType::f32) {
    const std::int64_t n = shape.numel();
    if (!storage_.defined() || storage_.dtype() != dtype || storage_.numel() < n) {
      storage_ = pinned_for_ != Device::cpu ? Tensor::empty_pinned({n}, dtype, pinned_for_)
                                            : Tensor::empty({n}, dtype, device_);
      counter().fetch_add(1, std::memory_order_relaxed);
    }
    return storage_.slice(0, n).reshape(shape);
  }

  static std::uint64_t reallocations() { return counter().load(std::memory_order_relaxed); }

 private:
  static std::atomic<std::uint64_t>& counter() {
    static std::atomic<std::uint64_t> count{0};
    return count;
  }

  Device device_;
  Device pinned_for_ = Device::cpu;
  Tensor storage_;
};

}  // namespace seedrl
