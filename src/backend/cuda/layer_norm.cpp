// cuda::LayerNorm: layer_norm_kernels.cu on the layer's device buffers.
#include "../layer_definitions.hpp"
#include "kernels.hpp"
#include "layer_util.hpp"

namespace seedrl::backend {

using cuda::detail::stream;
using cuda_layer::DeviceScratch;
using cuda_layer::f32;
using cuda_layer::RegistersRuntime;

template <>
struct LayerNormKernels<Device::cuda> : RegistersRuntime, LayerNormState {
  DeviceScratch output_buffer, grad_input_buffer, mean_buffer, rstd_buffer;

  Tensor forward(const Tensor& input, const Shape& out_shape) {
    const std::int64_t n = input.dim(0);
    Tensor output = output_buffer.view(out_shape);
    mean = mean_buffer.view({n});
    rstd = rstd_buffer.view({n});
    cuda::kernels::layer_norm_forward(f32(input), f32(weight->value), f32(bias->value), f32(output),
                                      f32(mean), f32(rstd), n, options.features, options.epsilon,
                                      stream());
    return output;
  }
  Tensor backward(const Tensor& grad_output, bool input_grad) {
    Tensor grad_input = input_grad ? grad_input_buffer.view(saved_input.shape()) : Tensor();
    cuda::kernels::layer_norm_backward(f32(saved_input), f32(grad_output), f32(weight->value),
                                       f32(mean), f32(rstd), input_grad ? f32(grad_input) : nullptr,
                                       f32(weight->grad), f32(bias->grad), saved_input.dim(0),
                                       options.features, stream());
    return grad_input;
  }
};

}  // namespace seedrl::backend

template class seedrl::backend::LayerNorm<seedrl::Device::cuda>;
