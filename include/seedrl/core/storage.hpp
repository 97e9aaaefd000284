// Storage: a reference-counted block of memory on a device, the thing tensors view.
//
// CPU storage is 64-byte aligned (one cache line, one AVX-512 register). Other devices plug in
// a DeviceRuntime (the CUDA backend registers one when its library is linked), so that a tensor
// on a GPU is the same Tensor type and callers do not change.
#pragma once

#include <array>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <ostream>
#include <string_view>

#include "seedrl/core/error.hpp"

namespace seedrl {

/// Where a tensor's elements live.
enum class Device : std::uint8_t { cpu = 0, cuda = 1 };

constexpr std::string_view name(Device device) {
  return device == Device::cpu ? "cpu" : "cuda";
}
inline std::ostream& operator<<(std::ostream& out, Device device) {
  return out << name(device);
}

/// Alignment of every CPU allocation, in bytes.
inline constexpr std::size_t kStorageAlignment = 64;

/// Memory services of a non-CPU device. A backend library registers one at start-up with
/// register_device_runtime(); Storage and Tensor use it for allocation and copies.
class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* data, std::size_t bytes) noexcept = 0;
  /// Copies `bytes` between any two of {cpu, this device}; returns when the copy is complete.
  virtual void copy(void* dst, Device dst_device, const void* src, Device src_device,
                    std::size_t bytes) = 0;
  /// Queues the same copy on the calling thread's queue of device work and returns; it is
  /// complete after synchronize(). Host memory on either side must stay valid and unchanged
  /// until then. By default the copy is done at once.
  virtual void copy_async(void* dst, Device dst_device, const void* src, Device src_device,
                          std::size_t bytes) {
    copy(dst, dst_device, src, src_device, bytes);
  }
  /// Waits for the device work (copies included) queued so far by the calling thread.
  virtual void synchronize() {}
  virtual void fill_zero(void* data, std::size_t bytes) = 0;
  /// Page-locked host memory, which the device reads and writes by DMA (faster copies).
  virtual void* allocate_pinned(std::size_t bytes) = 0;
  virtual void deallocate_pinned(void* data) noexcept = 0;
};

namespace detail {
inline std::array<DeviceRuntime*, 2>& device_runtimes() {
  static std::array<DeviceRuntime*, 2> runtimes{};
  return runtimes;
}
}  // namespace detail

/// Installs the runtime for `device` (not for Device::cpu). Called by backend libraries.
inline void register_device_runtime(Device device, DeviceRuntime* runtime) {
  SEEDRL_REQUIRE(device != Device::cpu, "register_device_runtime: the cpu runtime is built in");
  detail::device_runtimes()[static_cast<std::size_t>(device)] = runtime;
}

/// The runtime of a non-CPU device; throws if no backend for it was linked and initialised.
inline DeviceRuntime& device_runtime(Device device) {
  DeviceRuntime* runtime = detail::device_runtimes()[static_cast<std::size_t>(device)];
  SEEDRL_REQUIRE(runtime != nullptr, "no runtime for device '", device,
                 "': link and initialise the seedrl backend for it (e.g. seedrl::cuda)");
  return *runtime;
}

/// A block of device memory. Owning storage frees itself; borrowed storage (from_blob) does not.
/// Thread-safety: the object itself is immutable after construction; the bytes are not guarded.
class Storage {
 public:
  /// Allocates `bytes` on `device`. CPU memory is 64-byte aligned and zero-filled.
  static std::shared_ptr<Storage> allocate(std::size_t bytes, Device device = Device::cpu) {
    void* data = nullptr;
    if (bytes > 0) {
      if (device == Device::cpu) {
        const std::size_t rounded =
            (bytes + kStorageAlignment - 1) / kStorageAlignment * kStorageAlignment;
        data = std::aligned_alloc(kStorageAlignment, rounded);
        if (data == nullptr) throw std::bad_alloc();
        std::memset(data, 0, rounded);
      } else {
        DeviceRuntime& runtime = device_runtime(device);
        data = runtime.allocate(bytes);
        runtime.fill_zero(data, bytes);
      }
    }
    return std::shared_ptr<Storage>(new Storage(data, bytes, device, /*owned=*/true));
  }

  /// Allocates `bytes` of zero-filled host memory (Device::cpu) that `accelerator` can copy from
  /// and to by DMA: page-locked through its runtime. For Device::cpu, plain allocate().
  static std::shared_ptr<Storage> allocate_pinned(std::size_t bytes, Device accelerator) {
    if (accelerator == Device::cpu || bytes == 0) return allocate(bytes);
    void* data = device_runtime(accelerator).allocate_pinned(bytes);
    std::memset(data, 0, bytes);
    auto storage = std::shared_ptr<Storage>(new Storage(data, bytes, Device::cpu, /*owned=*/true));
    storage->pinned_for_ = accelerator;
    return storage;
  }

  /// Wraps memory the caller owns and keeps alive for as long as any tensor views it.
  static std::shared_ptr<Storage> borrow(void* data, std::size_t bytes,
                                         Device device = Device::cpu) {
    return std::shared_ptr<Storage>(new Storage(data, bytes, device, /*owned=*/false));
  }

  ~Storage() {
    if (!owned_ || data_ == nullptr) return;
    if (pinned_for_ != Device::cpu) {
      device_runtime(pinned_for_).deallocate_pinned(data_);
    } else if (device_ == Device::cpu) {
      std::free(data_);
    } else {
      device_runtime(device_).deallocate(data_, bytes_);
    }
  }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  Device device() const { return device_; }
  /// The accelerator this host memory is page-locked for (Device::cpu: ordinary memory).
  Device pinned_for() const { return pinned_for_; }

 private:
  Storage(void* data, std::size_t bytes, Device device, bool owned)
      : data_(data), bytes_(bytes), device_(device), owned_(owned) {}

  void* data_;
  std::size_t bytes_;
  Device device_;
  bool owned_;
  Device pinned_for_ = Device::cpu;
};

}  // namespace seedrl
