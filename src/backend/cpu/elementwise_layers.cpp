#include "seedrl/backend/cpu/elementwise_layers.hpp"

#include <cmath>
#include <map>
#include <tuple>

#include "dnnl_util.hpp"

namespace seedrl::cpu {

using namespace detail;

// ---- ReLU ----

Tensor ReLU::forward(const Tensor& input) {
  SEEDRL_REQUIRE(input.defined() && input.dtype() == DType::f32, name_, ": input must be f32");
  Tensor output = output_buffer_.view(input.shape());
  const float* x = input.data<float>();
  float* y = output.data<float>();
  const std::int64_t n = input.numel();
#pragma omp parallel for simd schedule(static) if (n > 65536)
  for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  output_ = output;
  return output;
}

Tensor ReLU::backward(const Tensor& grad_output, bool input_grad) {
  SEEDRL_REQUIRE(output_.defined(), name_, ": backward before forward");
  require_tensor(grad_output, output_.shape(), DType::f32, name_, ": backward grad_output");
  if (!input_grad) return {};
  Tensor grad_input = grad_input_buffer_.view(grad_output.shape());
  relu_backward(output_.data<float>(), grad_output.data<float>(), grad_input.data<float>(),
                grad_output.numel());
  return grad_input;
}

// ---- Flatten ----

Shape Flatten::output_shape(const Shape& input) const {
  SEEDRL_REQUIRE(input.rank() >= 1, name_, ": cannot flatten a scalar");
  return {input[0], input.drop_front().numel()};
}

Tensor Flatten::forward(const Tensor& input) {
  SEEDRL_REQUIRE(input.defined(), name_, ": input not given");
  input_shape_ = input.shape();
  return input.reshape(output_shape(input.shape()));
}

Tensor Flatten::backward(const Tensor& grad_output, bool input_grad) {
  SEEDRL_REQUIRE(input_shape_.rank() > 0, name_, ": backward before forward");
  require_tensor(grad_output, output_shape(input_shape_), grad_output.dtype(), name_,
                 ": backward grad_output");
  return input_grad ? grad_output.reshape(input_shape_) : Tensor();
}

// ---- Rescale ----

struct Rescale::Impl {
  std::string name;
  nn::RescaleOptions options;
  struct Reorder {
    dnnl::reorder::primitive_desc pd;
    dnnl::reorder primitive;
  };
  // One reorder per (input dtype, input shape).
  std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t, std::int64_t>, Reorder> cache;
  Buffer output_buffer, scratch;
};

Rescale::Rescale(const nn::RescaleOptions& options, std::string name)
    : impl_(std::make_unique<Impl>()) {
  SEEDRL_REQUIRE(std::isfinite(options.scale) && options.scale != 0.0f, name,
                 ": scale must be finite and non-zero, got ", options.scale);
  impl_->name = std::move(name);
  impl_->options = options;
}

Rescale::~Rescale() = default;
Rescale::Rescale(Rescale&&) noexcept = default;
Rescale& Rescale::operator=(Rescale&&) noexcept = default;

const std::string& Rescale::name() const {
  return impl_->name;
}
const nn::RescaleOptions& Rescale::options() const {
  return impl_->options;
}

Tensor Rescale::forward(const Tensor& input) {
  Impl& s = *impl_;
  SEEDRL_REQUIRE(input.defined() && (input.dtype() == DType::u8 || input.dtype() == DType::f32),
                 s.name, ": input must be u8 or f32, got ",
                 input.defined() ? seedrl::name(input.dtype()) : "nothing");
  const Shape out_shape = output_shape(input.shape());
  if (input.dtype() == DType::f32 && s.options.scale == 1.0f && !s.options.channels_first_input) {
    return input;
  }
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
      it = s.cache.emplace(key, Impl::Reorder{pd, dnnl::reorder(pd)}).first;
    }
    it->second.primitive.execute(stream(),
                                 {{DNNL_ARG_FROM, wrap(src, input)},
                                  {DNNL_ARG_TO, wrap(dst, output)},
                                  {DNNL_ARG_SCRATCHPAD, scratchpad(s.scratch, it->second.pd)}});
    stream().wait();
  });
  return output;
}

}  // namespace seedrl::cpu
