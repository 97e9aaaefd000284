#include "seedrl/backend/cpu/conv2d.hpp"

#include <array>
#include <map>
#include <optional>
#include <string_view>

#include "../layer_definitions.hpp"
#include "dnnl_util.hpp"

namespace seedrl::backend {

using namespace cpu::detail;
using dnnl::convolution_backward_data;
using dnnl::convolution_backward_weights;
using dnnl::convolution_forward;
using dnnl::reorder;

template <>
struct Conv2dKernels<Device::cpu> : Conv2dState {
  struct Primitives {
    memory::desc src, plain_weights, bias, dst;
    // The NHWC forward: the hint for the backward passes, whose activations are NHWC.
    convolution_forward::primitive_desc nhwc_pd;
    // The forward that runs: `nhwc_pd`, or the planar-input kernel (see planar_forward).
    convolution_forward::primitive_desc forward_pd;
    convolution_forward forward;
    PackedWeights forward_weights;
    // Planar forward only: its descriptors, and the reorder of the NHWC input into NCHW.
    std::optional<memory::desc> planar_src, planar_dst;
    std::optional<dnnl::reorder> to_planar;
    // Backward weights: gradient in oneDNN's layout, unpacked into the store's plain layout.
    std::optional<convolution_backward_weights::primitive_desc> backward_weights_pd;
    std::optional<convolution_backward_weights> backward_weights;
    memory packed_grad;
    std::optional<reorder::primitive_desc> unpack_grad_pd;
    std::optional<reorder> unpack_grad;
    // Backward data, only when an input gradient is asked for.
    std::optional<convolution_backward_data::primitive_desc> backward_data_pd;
    std::optional<convolution_backward_data> backward_data;
    std::optional<PackedWeights> backward_data_weights;
    bool backward_data_shares_weights = false;
  };

  std::map<std::array<std::int64_t, 3>, Primitives> cache;
  Primitives* last = nullptr;
  Buffer output_buffer, grad_input_buffer, masked_grad_buffer, planar_input_buffer, scratch;

  memory::dims strides() const { return {options.stride, options.stride}; }
  memory::dims padding() const { return {options.padding, options.padding}; }

  Primitives& primitives(const Shape& in, const Shape& out) {
    const std::array<std::int64_t, 3> key{in[0], in[1], in[2]};
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    return guarded(name, "creating forward primitives", [&]() -> Primitives& {
      // oneDNN dims are logical NCHW; the format tag says the memory is NHWC.
      const memory::desc src({in[0], in[3], in[1], in[2]}, DataType::f32, Tag::nhwc);
      const memory::desc plain_weights(
          {options.out_channels, options.in_channels, options.kernel, options.kernel},
          DataType::f32, Tag::oihw);
      const memory::desc any_weights(plain_weights.dims(), DataType::f32, Tag::any);
      const memory::desc bias_md({options.out_channels}, DataType::f32, Tag::x);
      const memory::desc dst({out[0], out[3], out[1], out[2]}, DataType::f32, Tag::nhwc);
      dnnl::primitive_attr attr = user_scratchpad();
      if (options.activation == nn::Activation::relu) {
        dnnl::post_ops ops;
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
        attr.set_post_ops(ops);
      }
      auto desc = options.bias
                      ? convolution_forward::desc(
                            dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                            src, any_weights, bias_md, dst, strides(), padding(), padding())
                      : convolution_forward::desc(
                            dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                            src, any_weights, dst, strides(), padding(), padding());
      convolution_forward::primitive_desc pd(desc, attr, engine());
      std::optional<memory::desc> planar_src, planar_dst;
      std::optional<convolution_forward::primitive_desc> planar =
          planar_forward(src, dst, bias_md, attr, planar_src, planar_dst);
      const convolution_forward::primitive_desc& run = planar ? *planar : pd;
      std::optional<dnnl::reorder> to_planar;
      if (planar) to_planar.emplace(reorder::primitive_desc(engine(), src, engine(), *planar_src));
      return cache
          .emplace(key, Primitives{src,
                                   plain_weights,
                                   bias_md,
                                   dst,
                                   pd,
                                   run,
                                   convolution_forward(run),
                                   PackedWeights(run.weights_desc(), plain_weights),
                                   planar_src,
                                   planar_dst,
                                   std::move(to_planar),
                                   {},
                                   {},
                                   {},
                                   {},
                                   {},
                                   {},
                                   {},
                                   {},
                                   false})
          .first->second;
    });
  }

  // oneDNN's kernel for convolutions with few input channels (a network's first layer) reads a
  // planar NCHW input and writes channel blocks of 16 (AVX-512) or 8 (AVX2). With exactly one
  // block of output channels, that blocked output is NHWC byte for byte, so the layer can run it
  // on a transposed copy of its input and hand on the output as it is: faster than the NHWC
  // kernel for MinAtar's first convolution, the transpose included (docs/performance.md, issue
  // 19). Taken only when it is not oneDNN's reference kernel.
  std::optional<convolution_forward::primitive_desc> planar_forward(
      const memory::desc& src, const memory::desc& dst, const memory::desc& bias_md,
      const dnnl::primitive_attr& attr, std::optional<memory::desc>& planar_src,
      std::optional<memory::desc>& planar_dst) const {
    if (options.in_channels >= 16) return std::nullopt;
    Tag blocked;
    if (options.out_channels == 16) {
      blocked = Tag::aBcd16b;
    } else if (options.out_channels == 8) {
      blocked = Tag::aBcd8b;
    } else {
      return std::nullopt;
    }
    const memory::desc in(src.dims(), DataType::f32, Tag::nchw);
    const memory::desc out(dst.dims(), DataType::f32, blocked);
    const memory::desc any_weights(
        {options.out_channels, options.in_channels, options.kernel, options.kernel}, DataType::f32,
        Tag::any);
    auto desc = options.bias
                    ? convolution_forward::desc(
                          dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                          in, any_weights, bias_md, out, strides(), padding(), padding())
                    : convolution_forward::desc(dnnl::prop_kind::forward_training,
                                                dnnl::algorithm::convolution_direct, in,
                                                any_weights, out, strides(), padding(), padding());
    try {
      convolution_forward::primitive_desc pd(desc, attr, engine());
      if (std::string_view(pd.impl_info_str()).starts_with("ref")) return std::nullopt;
      planar_src = in;
      planar_dst = out;
      return pd;
    } catch (const dnnl::error&) {
      return std::nullopt;  // no implementation for this layout here: the NHWC kernel runs
    }
  }

  void make_backward_weights(Primitives& p) {
    const memory::desc any_weights(p.plain_weights.dims(), DataType::f32, Tag::any);
    auto desc = options.bias
                    ? convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, p.src,
                                                         any_weights, p.bias, p.dst, strides(),
                                                         padding(), padding())
                    : convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, p.src,
                                                         any_weights, p.dst, strides(), padding(),
                                                         padding());
    const auto& pd = p.backward_weights_pd.emplace(desc, user_scratchpad(), engine(), p.nhwc_pd);
    SEEDRL_REQUIRE(pd.src_desc() == p.src && pd.diff_dst_desc() == p.dst, name,
                   ": oneDNN chose a non-NHWC layout for the backward-weights activations");
    p.backward_weights.emplace(pd);
    if (pd.diff_weights_desc() != p.plain_weights) {
      p.packed_grad = memory(pd.diff_weights_desc(), engine());
      p.unpack_grad_pd.emplace(engine(), pd.diff_weights_desc(), engine(), p.plain_weights,
                               user_scratchpad());
      p.unpack_grad.emplace(*p.unpack_grad_pd);
    }
  }

  void make_backward_data(Primitives& p) {
    const memory::desc any_weights(p.plain_weights.dims(), DataType::f32, Tag::any);
    convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, p.src, any_weights,
                                         p.dst, strides(), padding(), padding());
    const auto& pd = p.backward_data_pd.emplace(desc, user_scratchpad(), engine(), p.nhwc_pd);
    SEEDRL_REQUIRE(pd.diff_src_desc() == p.src && pd.diff_dst_desc() == p.dst, name,
                   ": oneDNN chose a non-NHWC layout for the backward-data activations");
    p.backward_data.emplace(pd);
    p.backward_data_shares_weights = pd.weights_desc() == p.forward_pd.weights_desc();
    if (!p.backward_data_shares_weights)
      p.backward_data_weights.emplace(pd.weights_desc(), p.plain_weights);
  }

  Tensor forward(const Tensor& input, const Shape& out_shape);
  Tensor backward(const Tensor& grad_output, bool input_grad);
};

Tensor Conv2dKernels<Device::cpu>::forward(const Tensor& input, const Shape& out_shape) {
  Conv2dKernels& s = *this;
  Primitives& p = s.primitives(input.shape(), out_shape);
  Tensor output = s.output_buffer.view(out_shape);
  guarded(s.name, "forward", [&] {
    const memory weights = p.forward_weights.refresh(wrap(p.plain_weights, s.weight->value),
                                                     s.weight->version(), s.scratch);
    memory src = wrap(p.src, input);
    if (p.to_planar) {
      memory planar(*p.planar_src, engine(), s.planar_input_buffer.view(input.shape()).raw_data());
      p.to_planar->execute(stream(), src, planar);
      src = planar;
    }
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src},
        {DNNL_ARG_WEIGHTS, weights},
        {DNNL_ARG_DST, wrap(p.planar_dst ? *p.planar_dst : p.dst, output)},
        {DNNL_ARG_SCRATCHPAD, scratchpad(s.scratch, p.forward_pd)}};
    if (s.bias) args.emplace(DNNL_ARG_BIAS, wrap(p.bias, s.bias->value));
    p.forward.execute(stream(), args);
    stream().wait();
  });
  s.last = &p;
  return output;
}

Tensor Conv2dKernels<Device::cpu>::backward(const Tensor& grad_output, bool input_grad) {
  Conv2dKernels& s = *this;
  Primitives& p = *s.last;
  Tensor grad = grad_output;
  if (s.options.activation == nn::Activation::relu) {
    grad = s.masked_grad_buffer.view(grad_output.shape());
    relu_backward(s.saved_output.data<float>(), grad_output.data<float>(), grad.data<float>(),
                  grad.numel());
  }
  return guarded(s.name, "backward", [&] {
    if (!p.backward_weights) s.make_backward_weights(p);
    const memory plain_grad = wrap(p.plain_weights, s.weight->grad);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, wrap(p.src, s.saved_input)},
        {DNNL_ARG_DIFF_DST, wrap(p.dst, grad)},
        {DNNL_ARG_DIFF_WEIGHTS, p.unpack_grad ? p.packed_grad : plain_grad},
        {DNNL_ARG_SCRATCHPAD, scratchpad(s.scratch, *p.backward_weights_pd)}};
    if (s.bias) args.emplace(DNNL_ARG_DIFF_BIAS, wrap(p.bias, s.bias->grad));
    p.backward_weights->execute(stream(), args);
    if (p.unpack_grad) {
      p.unpack_grad->execute(stream(),
                             {{DNNL_ARG_FROM, p.packed_grad},
                              {DNNL_ARG_TO, plain_grad},
                              {DNNL_ARG_SCRATCHPAD, scratchpad(s.scratch, *p.unpack_grad_pd)}});
    }

    Tensor grad_input;
    if (input_grad) {
      if (!p.backward_data) s.make_backward_data(p);
      // When the layouts agree, the forward already packed these weights (unchanged since).
      const memory plain_values = wrap(p.plain_weights, s.weight->value);
      PackedWeights& packed =
          p.backward_data_shares_weights ? p.forward_weights : *p.backward_data_weights;
      const memory weights = packed.refresh(plain_values, s.weight->version(), s.scratch);
      grad_input = s.grad_input_buffer.view(s.saved_input.shape());
      p.backward_data->execute(stream(),
                               {{DNNL_ARG_DIFF_SRC, wrap(p.src, grad_input)},
                                {DNNL_ARG_WEIGHTS, weights},
                                {DNNL_ARG_DIFF_DST, wrap(p.dst, grad)},
                                {DNNL_ARG_SCRATCHPAD, scratchpad(s.scratch, *p.backward_data_pd)}});
    }
    stream().wait();
    return grad_input;
  });
}

}  // namespace seedrl::backend

template class seedrl::backend::Conv2d<seedrl::Device::cpu>;
