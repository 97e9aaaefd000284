#include "seedrl/backend/cpu/linear.hpp"

#include <optional>
#include <unordered_map>

#include "../layer_definitions.hpp"
#include "dnnl_util.hpp"

namespace seedrl::backend {

using namespace cpu::detail;
using dnnl::inner_product_backward_data;
using dnnl::inner_product_backward_weights;
using dnnl::inner_product_forward;

template <>
struct LinearKernels<Device::cpu> : LinearState {
  // Primitives for one batch size; the backward ones are made on first use.
  struct Primitives {
    memory::desc src, weights, bias, dst;
    inner_product_forward::primitive_desc forward_pd;
    inner_product_forward forward;
    PackedWeights forward_weights;  // oneDNN's layout (brgemm): faster (docs/performance.md)
    std::optional<inner_product_backward_data::primitive_desc> backward_data_pd;
    std::optional<inner_product_backward_data> backward_data;
    std::optional<inner_product_backward_weights::primitive_desc> backward_weights_pd;
    std::optional<inner_product_backward_weights> backward_weights;
  };

  std::unordered_map<std::int64_t, Primitives> cache;
  Buffer output_buffer, grad_input_buffer, masked_grad_buffer, scratch;

  Primitives& primitives(std::int64_t n) {
    auto it = cache.find(n);
    if (it != cache.end()) return it->second;
    return guarded(name, "creating primitives", [&]() -> Primitives& {
      const memory::desc src({n, options.in_features}, DataType::f32, Tag::nc);
      const memory::desc weights({options.out_features, options.in_features}, DataType::f32,
                                 Tag::oi);
      const memory::desc bias_md({options.out_features}, DataType::f32, Tag::x);
      const memory::desc dst({n, options.out_features}, DataType::f32, Tag::nc);
      dnnl::primitive_attr attr = user_scratchpad();
      if (options.activation != nn::Activation::none) {
        dnnl::post_ops ops;
        ops.append_eltwise(1.0f,
                           options.activation == nn::Activation::relu
                               ? dnnl::algorithm::eltwise_relu
                               : dnnl::algorithm::eltwise_tanh,
                           0.0f, 0.0f);
        attr.set_post_ops(ops);
      }
      // The forward lets oneDNN pick the weight layout; the backward passes use the plain one
      // the gradients are stored in.
      const memory::desc any_weights(weights.dims(), DataType::f32, Tag::any);
      auto desc = options.bias ? inner_product_forward::desc(dnnl::prop_kind::forward_training, src,
                                                             any_weights, bias_md, dst)
                               : inner_product_forward::desc(dnnl::prop_kind::forward_training, src,
                                                             any_weights, dst);
      inner_product_forward::primitive_desc pd(desc, attr, engine());
      return cache
          .emplace(n, Primitives{src,
                                 weights,
                                 bias_md,
                                 dst,
                                 pd,
                                 inner_product_forward(pd),
                                 PackedWeights(pd.weights_desc(), weights),
                                 {},
                                 {},
                                 {},
                                 {}})
          .first->second;
    });
  }

  Tensor forward(const Tensor& input, const Shape& out_shape);
  Tensor backward(const Tensor& grad_output, bool input_grad);
};

Tensor LinearKernels<Device::cpu>::forward(const Tensor& input, const Shape& out_shape) {
  LinearKernels& s = *this;
  Primitives& p = s.primitives(input.dim(0));
  Tensor output = s.output_buffer.view(out_shape);
  guarded(s.name, "forward", [&] {
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, wrap(p.src, input)},
        {DNNL_ARG_WEIGHTS, p.forward_weights.refresh(wrap(p.weights, s.weight->value),
                                                     s.weight->version(), s.scratch)},
        {DNNL_ARG_DST, wrap(p.dst, output)},
        {DNNL_ARG_SCRATCHPAD, scratchpad(s.scratch, p.forward_pd)}};
    if (s.bias) args.emplace(DNNL_ARG_BIAS, wrap(p.bias, s.bias->value));
    p.forward.execute(stream(), args);
    stream().wait();
  });
  return output;
}

Tensor LinearKernels<Device::cpu>::backward(const Tensor& grad_output, bool input_grad) {
  LinearKernels& s = *this;
  Primitives& p = s.primitives(s.saved_input.dim(0));
  Tensor grad = grad_output;
  if (s.options.activation != nn::Activation::none) {
    grad = s.masked_grad_buffer.view(grad_output.shape());
    (s.options.activation == nn::Activation::relu ? relu_backward : tanh_backward)(
        s.saved_output.data<float>(), grad_output.data<float>(), grad.data<float>(), grad.numel());
  }
  return guarded(s.name, "backward", [&] {
    if (!p.backward_weights) {
      auto desc = s.options.bias
                      ? inner_product_backward_weights::desc(p.src, p.weights, p.bias, p.dst)
                      : inner_product_backward_weights::desc(p.src, p.weights, p.dst);
      p.backward_weights_pd.emplace(desc, user_scratchpad(), engine(), p.forward_pd);
      p.backward_weights.emplace(*p.backward_weights_pd);
    }
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, wrap(p.src, s.saved_input)},
        {DNNL_ARG_DIFF_DST, wrap(p.dst, grad)},
        {DNNL_ARG_DIFF_WEIGHTS, wrap(p.weights, s.weight->grad)},
        {DNNL_ARG_SCRATCHPAD, scratchpad(s.scratch, *p.backward_weights_pd)}};
    if (s.bias) args.emplace(DNNL_ARG_DIFF_BIAS, wrap(p.bias, s.bias->grad));
    p.backward_weights->execute(stream(), args);
    Tensor grad_input;
    if (input_grad) {
      if (!p.backward_data) {
        inner_product_backward_data::desc desc(p.src, p.weights, p.dst);
        p.backward_data_pd.emplace(desc, user_scratchpad(), engine(), p.forward_pd);
        p.backward_data.emplace(*p.backward_data_pd);
      }
      grad_input = s.grad_input_buffer.view(s.saved_input.shape());
      p.backward_data->execute(stream(),
                               {{DNNL_ARG_DIFF_SRC, wrap(p.src, grad_input)},
                                {DNNL_ARG_WEIGHTS, wrap(p.weights, s.weight->value)},
                                {DNNL_ARG_DIFF_DST, wrap(p.dst, grad)},
                                {DNNL_ARG_SCRATCHPAD, scratchpad(s.scratch, *p.backward_data_pd)}});
    }
    stream().wait();
    return grad_input;
  });
}

}  // namespace seedrl::backend

template class seedrl::backend::Linear<seedrl::Device::cpu>;
