// What the CUDA backend's layer sources (layers.cpp, layer_norm.cpp) share: raw device pointers
// of tensors, device scratch buffers, and the runtime every layer registers. Private to the
// backend; not installed.
#pragma once

#include "cuda_util.hpp"
#include "seedrl/backend/cuda/backend.hpp"
#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/core/tensor.hpp"

namespace seedrl::backend::cuda_layer {

inline float* f32(const Tensor& t) {
  return static_cast<float*>(t.raw_data());
}
inline const void* bytes_of(const Tensor& t) {
  return t.defined() ? t.raw_data() : nullptr;
}

/// Device scratch for per-call results, on the GPU.
struct DeviceScratch : ScratchBuffer {
  DeviceScratch() : ScratchBuffer(Device::cuda) {}
};

/// Constructing any CUDA layer installs the device runtime its buffers are allocated from.
struct RegistersRuntime {
  RegistersRuntime() { cuda::detail::register_runtime(); }
};

}  // namespace seedrl::backend::cuda_layer
