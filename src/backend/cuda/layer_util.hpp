// What the CUDA backend's layer sources (layers.cpp, layer_norm.cpp) share: raw device pointers
// of tensors, device scratch buffers, and the runtime every layer registers. Private to the
// backend; not installed.
#pragma once

#include "cuda_util.hpp"
#include "kernels.hpp"
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

/// Column sums of a row-major [rows, cols] matrix as one GEMV against a vector of ones.
class ColumnSums {
 public:
  void operator()(const float* x, std::int64_t rows, std::int64_t cols, float* out) {
    if (rows > ones_count_) {
      ones_ = buffer_.view({rows});
      cuda::kernels::fill(f32(ones_), rows, 1.0f, cuda::detail::stream());
      ones_count_ = rows;
    }
    const float one = 1.0f, zero = 0.0f;
    SEEDRL_CUBLAS_CHECK(cublasSgemv(cuda::detail::cublas(), CUBLAS_OP_N, static_cast<int>(cols),
                                    static_cast<int>(rows), &one, x, static_cast<int>(cols),
                                    f32(ones_), 1, &zero, out, 1));
  }

 private:
  DeviceScratch buffer_;
  Tensor ones_;
  std::int64_t ones_count_ = 0;
};

// Gradient after a fused ReLU: grad where the output was positive.
inline Tensor relu_masked(const Tensor& grad_output, const Tensor& output, DeviceScratch& buffer) {
  Tensor grad = buffer.view(grad_output.shape());
  cuda::kernels::relu_backward(f32(output), f32(grad_output), f32(grad), grad.numel(),
                               cuda::detail::stream());
  return grad;
}

// Gradient before a fused activation, from its output (grad_output itself for none).
inline Tensor activation_backward(nn::Activation act, const Tensor& grad_output,
                                  const Tensor& output, DeviceScratch& buffer) {
  if (act == nn::Activation::none) return grad_output;
  if (act == nn::Activation::relu) return relu_masked(grad_output, output, buffer);
  Tensor grad = buffer.view(grad_output.shape());
  cuda::kernels::tanh_backward(f32(output), f32(grad_output), f32(grad), grad.numel(),
                               cuda::detail::stream());
  return grad;
}

inline cuda::kernels::Act fused(nn::Activation act) {
  return static_cast<cuda::kernels::Act>(static_cast<int>(act));
}

}  // namespace seedrl::backend::cuda_layer
