#include "seedrl/backend/cpu/elementwise_layers.hpp"

#include <cmath>
#include <map>
#include <tuple>

#include "../layer_definitions.hpp"
#include "dnnl_util.hpp"
#include "element_loops.hpp"

namespace seedrl::backend {

using namespace cpu::detail;

// ---- ReLU ----

template <>
struct ReluKernels<Device::cpu> : ReluState {
  ScratchBuffer output_buffer, grad_input_buffer;
  Tensor forward(const Tensor& input);
  Tensor backward(const Tensor& grad_output);
};

Tensor ReluKernels<Device::cpu>::forward(const Tensor& input) {
  Tensor output = output_buffer.view(input.shape());
  const float* x = input.data<float>();
  float* y = output.data<float>();
  const std::int64_t n = input.numel();
  for_each_index(n, kElementParallelThreshold,
                 [x, y](std::int64_t i) { y[i] = x[i] > 0.0f ? x[i] : 0.0f; });
  return output;
}

Tensor ReluKernels<Device::cpu>::backward(const Tensor& grad_output) {
  Tensor grad_input = grad_input_buffer.view(grad_output.shape());
  relu_backward(saved_output.data<float>(), grad_output.data<float>(), grad_input.data<float>(),
                grad_output.numel());
  return grad_input;
}

// ---- Rescale ----

template <>
struct RescaleKernels<Device::cpu> : RescaleState {
  struct Reorder {
    dnnl::reorder::primitive_desc pd;
    dnnl::reorder primitive;
  };
  // One reorder per (input dtype, input shape).
  std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t, std::int64_t>, Reorder> cache;
  Buffer output_buffer, scratch;

  Tensor forward(const Tensor& input, const Shape& out_shape);
};

Tensor RescaleKernels<Device::cpu>::forward(const Tensor& input, const Shape& out_shape) {
  RescaleKernels& s = *this;
  const Shape& in = input.shape();
  // Logical NCHW dims of the image batch.
  const memory::dims dims = s.options.channels_first_input
                                ? memory::dims{in[0], in[1], in[2], in[3]}
                                : memory::dims{in[0], in[3], in[1], in[2]};
  const memory::desc src(dims, data_type(input.dtype()),
                         s.options.channels_first_input ? Tag::nchw : Tag::nhwc);
  const memory::desc dst(dims, DataType::f32, Tag::nhwc);
  Tensor output = s.output_buffer.view(out_shape);
  guarded(s.name, "forward", [&] {
    const auto key = std::make_tuple(static_cast<int>(input.dtype()), in[0], in[1], in[2], in[3]);
    auto it = s.cache.find(key);
    if (it == s.cache.end()) {
      dnnl::primitive_attr attr = user_scratchpad();
      if (s.options.scale != 1.0f) attr.set_output_scales(0, {s.options.scale});
      dnnl::reorder::primitive_desc pd(engine(), src, engine(), dst, attr);
      it = s.cache.emplace(key, Reorder{pd, dnnl::reorder(pd)}).first;
    }
    it->second.primitive.execute(stream(),
                                 {{DNNL_ARG_FROM, wrap(src, input)},
                                  {DNNL_ARG_TO, wrap(dst, output)},
                                  {DNNL_ARG_SCRATCHPAD, scratchpad(s.scratch, it->second.pd)}});
    stream().wait();
  });
  return output;
}

}  // namespace seedrl::backend

template class seedrl::backend::ReLU<seedrl::Device::cpu>;
template class seedrl::backend::Rescale<seedrl::Device::cpu>;
