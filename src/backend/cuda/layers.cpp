// The layers of the CUDA backend but for the convolution (conv2d.cpp) and layer normalisation
// (layer_norm.cpp): cuBLAS GEMMs and kernels.cu.
#include <array>
#include <map>
#include <optional>
#include <vector>

#include "../layer_definitions.hpp"
#include "cuda_util.hpp"
#include "kernels.hpp"
#include "layer_util.hpp"
#include "seedrl/backend/cuda/backend.hpp"
#include "seedrl/core/scratch_buffer.hpp"

namespace seedrl::backend {
namespace {

using cuda::detail::gemm;
using cuda::detail::stream;

// The CUDA layers' shared helpers (layer_util.hpp).
using namespace cuda_layer;  // NOLINT(google-build-using-namespace)

}  // namespace

// ---- Linear ----

template <>
struct LinearKernels<Device::cuda> : RegistersRuntime, LinearState {
  DeviceScratch output_buffer, grad_input_buffer, masked_grad_buffer;
  ColumnSums column_sums;

  Tensor forward(const Tensor& input, const Shape& out_shape) {
    const std::int64_t n = input.dim(0), in = options.in_features, out = options.out_features;
    Tensor output = output_buffer.view(out_shape);
    gemm(false, true, n, out, in, 1.0f, f32(input), f32(weight->value), 0.0f, f32(output));
    if (bias != nullptr || options.activation != nn::Activation::none) {
      cuda::kernels::bias_activation(f32(output), bias ? f32(bias->value) : nullptr, n, out,
                                     fused(options.activation), stream());
    }
    return output;
  }

  Tensor backward(const Tensor& grad_output, bool input_grad) {
    const std::int64_t n = saved_input.dim(0), in = options.in_features, out = options.out_features;
    const Tensor grad =
        activation_backward(options.activation, grad_output, saved_output, masked_grad_buffer);
    gemm(true, false, out, in, n, 1.0f, f32(grad), f32(saved_input), 0.0f, f32(weight->grad));
    if (bias) column_sums(f32(grad), n, out, f32(bias->grad));
    if (!input_grad) return {};
    Tensor grad_input = grad_input_buffer.view(saved_input.shape());
    gemm(false, false, n, in, out, 1.0f, f32(grad), f32(weight->value), 0.0f, f32(grad_input));
    return grad_input;
  }
};

// ---- LSTM ----

template <>
struct LstmKernels<Device::cuda> : RegistersRuntime, LstmLayerState {
  Tensor gates;        // [T, B, 4H] activated i, f, g, o
  Tensor prev_hidden;  // [T, B, H] h_{t-1} as used by step t (zero after a reset)
  Tensor prev_cells;   // [T, B, H] c_{t-1} as used by step t
  Tensor resets;       // [T, B] on the device, or undefined
  DeviceScratch gates_buffer, cells_buffer, outputs_buffer, prev_hidden_buffer, prev_cells_buffer,
      resets_buffer;
  DeviceScratch grad_gates_buffer, grad_input_buffer, grad_h_buffer, grad_c_buffer;
  ColumnSums column_sums;

  const void* resets_at(std::int64_t t) const {
    if (!resets.defined()) return nullptr;
    return static_cast<const char*>(resets.raw_data()) +
           t * batch * static_cast<std::int64_t>(size_of(resets.dtype()));
  }
  bool resets_u8() const { return resets.defined() && resets.dtype() == DType::u8; }

  void forward(const Tensor& input, const nn::LstmState& initial_state, const Tensor& resets_in) {
    const std::int64_t in_size = options.input_size, h = hidden(), g = 4 * h;
    const std::int64_t num_steps = input.dim(0), frames = num_steps * batch;
    resets = Tensor();
    if (resets_in.defined()) {
      resets = resets_in.device() == Device::cuda
                   ? resets_in
                   : resets_buffer.view(resets_in.shape(), resets_in.dtype());
      if (resets_in.device() != Device::cuda) resets.copy_from(resets_in);
    }
    gates = gates_buffer.view({num_steps, batch, g});
    cells = cells_buffer.view({num_steps, batch, h});
    outputs = outputs_buffer.view({num_steps, batch, h});
    prev_hidden = prev_hidden_buffer.view({num_steps, batch, h});
    prev_cells = prev_cells_buffer.view({num_steps, batch, h});

    gemm(false, true, frames, g, in_size, 1.0f, f32(input), f32(weight_ih->value), 0.0f,
         f32(gates));
    cuda::kernels::bias_activation(f32(gates), f32(bias->value), frames, g,
                                   cuda::kernels::Act::none, stream());
    for (std::int64_t t = 0; t < num_steps; ++t) {
      const float* hidden_in =
          t == 0 ? static_cast<const float*>(bytes_of(initial_state.h)) : f32(outputs[t - 1]);
      const float* cell_in =
          t == 0 ? static_cast<const float*>(bytes_of(initial_state.c)) : f32(cells[t - 1]);
      cuda::kernels::masked_copy(hidden_in, f32(prev_hidden[t]), resets_at(t), resets_u8(), batch,
                                 h, stream());
      cuda::kernels::masked_copy(cell_in, f32(prev_cells[t]), resets_at(t), resets_u8(), batch, h,
                                 stream());
      gemm(false, true, batch, g, h, 1.0f, f32(prev_hidden[t]), f32(weight_hh->value), 1.0f,
           f32(gates[t]));
      cuda::kernels::lstm_cell_forward(f32(gates[t]), f32(prev_cells[t]), f32(cells[t]),
                                       f32(outputs[t]), batch, h, stream());
    }
  }

  Tensor backward(const Tensor& grad_output, const nn::LstmState& grad_final_state,
                  bool input_grad) {
    const std::int64_t h = hidden(), g = 4 * h, in_size = options.input_size,
                       frames = steps * batch;
    Tensor grad_gates = grad_gates_buffer.view({steps, batch, g});
    Tensor dh_next = grad_h_buffer.view({batch, h});
    Tensor dc_next = grad_c_buffer.view({batch, h});
    if (grad_final_state.h.defined()) {
      dh_next.copy_from(grad_final_state.h);
    } else {
      cuda::kernels::fill(f32(dh_next), batch * h, 0.0f, stream());
    }
    if (grad_final_state.c.defined()) {
      dc_next.copy_from(grad_final_state.c);
    } else {
      cuda::kernels::fill(f32(dc_next), batch * h, 0.0f, stream());
    }
    for (std::int64_t t = steps - 1; t >= 0; --t) {
      cuda::kernels::lstm_cell_backward(f32(gates[t]), f32(cells[t]), f32(prev_cells[t]),
                                        grad_output.defined() ? f32(grad_output[t]) : nullptr,
                                        f32(dh_next), f32(dc_next), f32(grad_gates[t]), batch, h,
                                        stream());
      // Into the previous step through the recurrent weights, except across a reset.
      gemm(false, false, batch, h, g, 1.0f, f32(grad_gates[t]), f32(weight_hh->value), 0.0f,
           f32(dh_next));
      cuda::kernels::zero_reset_rows(f32(dh_next), resets_at(t), resets_u8(), batch, h, stream());
      cuda::kernels::zero_reset_rows(f32(dc_next), resets_at(t), resets_u8(), batch, h, stream());
    }
    grad_initial = {dh_next, dc_next};

    gemm(true, false, g, h, frames, 1.0f, f32(grad_gates), f32(prev_hidden), 0.0f,
         f32(weight_hh->grad));
    gemm(true, false, g, in_size, frames, 1.0f, f32(grad_gates), f32(saved_input), 0.0f,
         f32(weight_ih->grad));
    column_sums(f32(grad_gates), frames, g, f32(bias->grad));
    if (!input_grad) return {};
    Tensor grad_input = grad_input_buffer.view(saved_input.shape());
    gemm(false, false, frames, in_size, g, 1.0f, f32(grad_gates), f32(weight_ih->value), 0.0f,
         f32(grad_input));
    return grad_input;
  }
};

// ---- ReLU ----

template <>
struct ReluKernels<Device::cuda> : RegistersRuntime, ReluState {
  DeviceScratch output_buffer, grad_input_buffer;

  Tensor forward(const Tensor& input) {
    Tensor output = output_buffer.view(input.shape());
    cuda::kernels::relu_forward(f32(input), f32(output), input.numel(), stream());
    return output;
  }
  Tensor backward(const Tensor& grad_output) {
    return relu_masked(grad_output, saved_output, grad_input_buffer);
  }
};

// ---- Rescale ----

template <>
struct RescaleKernels<Device::cuda> : RegistersRuntime, RescaleState {
  DeviceScratch output_buffer;

  Tensor forward(const Tensor& input, const Shape& out_shape) {
    Tensor output = output_buffer.view(out_shape);
    // out_shape is [N, H, W, C] whatever the input layout.
    cuda::kernels::rescale(input.raw_data(), input.dtype() == DType::u8,
                           options.channels_first_input, out_shape[0], out_shape[3], out_shape[1],
                           out_shape[2], options.scale, f32(output), stream());
    return output;
  }
};

}  // namespace seedrl::backend

template class seedrl::backend::Linear<seedrl::Device::cuda>;
template class seedrl::backend::LSTM<seedrl::Device::cuda>;
template class seedrl::backend::ReLU<seedrl::Device::cuda>;
template class seedrl::backend::Rescale<seedrl::Device::cuda>;
