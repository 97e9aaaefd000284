// The device-independent half of the backend layers (include/seedrl/backend/layers.hpp):
// parameter declaration, argument checks and forwarding to the per-device kernels.
//
// A backend's source defines, for its device D, the structs LinearKernels<D>, Conv2dKernels<D>,
// LstmKernels<D>, LayerNormKernels<D>, ReluKernels<D> and RescaleKernels<D> (deriving from the
// *State structs below and adding forward/backward), includes this file and explicitly instantiates
// the layers (template class seedrl::backend::Linear<D>; ...).
#pragma once

#include <cmath>
#include <string>

#include "seedrl/backend/layers.hpp"

namespace seedrl::backend {

/// What every Linear keeps, whatever the device.
struct LinearState {
  std::string name;
  nn::LinearOptions options;
  nn::Parameter* weight = nullptr;
  nn::Parameter* bias = nullptr;
  Tensor saved_input;   // of the last forward
  Tensor saved_output;  // of the last forward
};

struct Conv2dState {
  std::string name;
  nn::Conv2dOptions options;
  nn::Parameter* weight = nullptr;
  nn::Parameter* bias = nullptr;
  Tensor saved_input;
  Tensor saved_output;
};

struct LstmLayerState {
  std::string name;
  nn::LstmOptions options;
  nn::Parameter* weight_ih = nullptr;
  nn::Parameter* weight_hh = nullptr;
  nn::Parameter* bias = nullptr;
  std::int64_t steps = 0, batch = 0;  // of the last forward; steps 0: none usable
  Tensor saved_input;                 // [T, B, I]
  Tensor cells;                       // [T, B, H] c_t
  Tensor outputs;                     // [T, B, H] h_t
  nn::LstmState grad_initial;
  std::int64_t hidden() const { return options.hidden_size; }
};

struct LayerNormState {
  std::string name;
  nn::LayerNormOptions options;
  nn::Parameter* weight = nullptr;  // gamma
  nn::Parameter* bias = nullptr;    // beta
  Tensor saved_input;
  Tensor saved_output;
  Tensor mean, rstd;  // [N] of the last forward: each row's mean and 1 / sqrt(var + epsilon)
};

struct ReluState {
  std::string name;
  Tensor saved_output;  // of the last forward, for backward
};

struct RescaleState {
  std::string name;
  nn::RescaleOptions options;
};

namespace detail {
inline void require_on(const Tensor& t, Device device, DType dtype, const std::string& layer,
                       const char* what) {
  SEEDRL_REQUIRE(t.defined(), layer, ": ", what, " not given");
  SEEDRL_REQUIRE(t.dtype() == dtype, layer, ": ", what, " must be ", dtype, ", got ", t.dtype());
  SEEDRL_REQUIRE(t.device() == device, layer, ": ", what, " is on ", t.device(), ", the layer on ",
                 device);
}
// forward() of a layer with parameters: checks the input, runs the kernels, keeps the input and
// the output for backward().
template <Device D, class Layer, class Kernels>
Tensor forward_saving(const Layer& layer, Kernels& k, const Tensor& input) {
  require_on(input, D, DType::f32, k.name, "input");
  Tensor output = k.forward(input, layer.output_shape(input.shape()));
  k.saved_input = input;
  k.saved_output = output;
  return output;
}

// The checks of every backward(): a forward came first and the gradient matches its output.
inline void require_backward(const Tensor& saved_output, const Tensor& grad_output, Device device,
                             const std::string& layer) {
  SEEDRL_REQUIRE(saved_output.defined(), layer, ": backward before forward");
  require_tensor(grad_output, saved_output.shape(), DType::f32, layer, ": backward grad_output");
  require_on(grad_output, device, DType::f32, layer, "backward grad_output");
}

}  // namespace detail

// The special members and name() every layer defines the same way (the kernels own the name).
#define SEEDRL_LAYER_COMMON_MEMBERS(Layer)                   \
  template <Device D>                                        \
  Layer<D>::~Layer() = default;                              \
  template <Device D>                                        \
  Layer<D>::Layer(Layer&&) noexcept = default;               \
  template <Device D>                                        \
  Layer<D>& Layer<D>::operator=(Layer&&) noexcept = default; \
  template <Device D>                                        \
  const std::string& Layer<D>::name() const {                \
    return impl_->name;                                      \
  }

SEEDRL_LAYER_COMMON_MEMBERS(Linear)
SEEDRL_LAYER_COMMON_MEMBERS(Conv2d)
SEEDRL_LAYER_COMMON_MEMBERS(LSTM)
SEEDRL_LAYER_COMMON_MEMBERS(LayerNorm)
SEEDRL_LAYER_COMMON_MEMBERS(ReLU)
SEEDRL_LAYER_COMMON_MEMBERS(Rescale)
#undef SEEDRL_LAYER_COMMON_MEMBERS

// ---- Linear ----

template <Device D>
Linear<D>::Linear(nn::ParameterStore& store, const std::string& name,
                  const nn::LinearOptions& options)
    : impl_(std::make_unique<LinearKernels<D>>()) {
  options.validate(name);
  impl_->name = name;
  impl_->options = options;
  impl_->weight = &store.add(name + ".weight", {options.out_features, options.in_features},
                             options.weight_init, options.in_features, options.out_features);
  if (options.bias) {
    impl_->bias = &store.add(name + ".bias", {options.out_features}, options.bias_init,
                             options.in_features, options.out_features);
  }
}
template <Device D>
const nn::LinearOptions& Linear<D>::options() const {
  return impl_->options;
}
template <Device D>
Tensor Linear<D>::forward(const Tensor& input) {
  return detail::forward_saving<D>(*this, *impl_, input);
}
template <Device D>
Tensor Linear<D>::backward(const Tensor& grad_output, bool input_grad) {
  detail::require_backward(impl_->saved_output, grad_output, D, name());
  return impl_->backward(grad_output, input_grad);
}

// ---- Conv2d ----

template <Device D>
Conv2d<D>::Conv2d(nn::ParameterStore& store, const std::string& name,
                  const nn::Conv2dOptions& options)
    : impl_(std::make_unique<Conv2dKernels<D>>()) {
  options.validate(name);
  impl_->name = name;
  impl_->options = options;
  const std::int64_t area = options.kernel * options.kernel;
  impl_->weight = &store.add(
      name + ".weight", {options.out_channels, options.in_channels, options.kernel, options.kernel},
      options.weight_init, options.in_channels * area, options.out_channels * area);
  if (options.bias) {
    impl_->bias = &store.add(name + ".bias", {options.out_channels}, options.bias_init,
                             options.in_channels * area, options.out_channels * area);
  }
}
template <Device D>
const nn::Conv2dOptions& Conv2d<D>::options() const {
  return impl_->options;
}
template <Device D>
Tensor Conv2d<D>::forward(const Tensor& input) {
  return detail::forward_saving<D>(*this, *impl_, input);
}
template <Device D>
Tensor Conv2d<D>::backward(const Tensor& grad_output, bool input_grad) {
  detail::require_backward(impl_->saved_output, grad_output, D, name());
  return impl_->backward(grad_output, input_grad);
}

// ---- LSTM ----

template <Device D>
LSTM<D>::LSTM(nn::ParameterStore& store, const std::string& name, const nn::LstmOptions& options)
    : impl_(std::make_unique<LstmKernels<D>>()) {
  options.validate(name);
  impl_->name = name;
  impl_->options = options;
  const std::int64_t g = 4 * options.hidden_size;
  impl_->weight_ih = &store.add(name + ".weight_ih", {g, options.input_size},
                                options.input_weight_init, options.input_size, g);
  impl_->weight_hh = &store.add(name + ".weight_hh", {g, options.hidden_size},
                                options.recurrent_weight_init, options.hidden_size, g);
  impl_->bias = &store.add(name + ".bias", {g}, options.bias_init, options.hidden_size, g);
}
template <Device D>
const nn::LstmOptions& LSTM<D>::options() const {
  return impl_->options;
}
template <Device D>
Tensor LSTM<D>::forward(const Tensor& input, const nn::LstmState& initial_state,
                        const Tensor& resets) {
  LstmKernels<D>& s = *impl_;
  const std::int64_t in_size = s.options.input_size, h = s.hidden();
  SEEDRL_REQUIRE(input.defined() && input.dtype() == DType::f32 && input.rank() == 3 &&
                     input.dim(2) == in_size,
                 s.name, ": expected input f32[T, B, ", in_size, "], got ",
                 input.defined() ? input.shape().to_string() : "nothing");
  detail::require_on(input, D, DType::f32, s.name, "input");
  const std::int64_t steps = input.dim(0), batch = input.dim(1);
  SEEDRL_REQUIRE(steps > 0 && batch > 0, s.name, ": empty input ", input.shape());
  if (initial_state.h.defined() || initial_state.c.defined()) {
    require_tensor(initial_state.h, Shape{batch, h}, DType::f32, s.name, ": initial state h");
    require_tensor(initial_state.c, Shape{batch, h}, DType::f32, s.name, ": initial state c");
    detail::require_on(initial_state.h, D, DType::f32, s.name, "initial state h");
    detail::require_on(initial_state.c, D, DType::f32, s.name, "initial state c");
  }
  if (resets.defined()) {
    SEEDRL_REQUIRE(resets.shape() == Shape({steps, batch}), s.name, ": resets must be [", steps,
                   ", ", batch, "], got ", resets.shape());
    SEEDRL_REQUIRE(resets.dtype() == DType::f32 || resets.dtype() == DType::u8, s.name,
                   ": resets must be f32 or u8, got ", resets.dtype());
  }
  s.steps = 0;  // a forward that fails below leaves nothing for backward to misuse
  s.batch = batch;
  s.saved_input = input;
  s.forward(input, initial_state, resets);
  s.steps = steps;
  return s.outputs;
}
template <Device D>
nn::LstmState LSTM<D>::final_state() const {
  const LstmKernels<D>& s = *impl_;
  SEEDRL_REQUIRE(s.steps > 0, s.name, ": final_state before forward");
  return {s.outputs[s.steps - 1], s.cells[s.steps - 1]};
}
template <Device D>
nn::LstmState LSTM<D>::initial_state_grad() const {
  return impl_->grad_initial;
}
template <Device D>
Tensor LSTM<D>::backward(const Tensor& grad_output, const nn::LstmState& grad_final_state,
                         bool input_grad) {
  LstmKernels<D>& s = *impl_;
  SEEDRL_REQUIRE(s.steps > 0, s.name, ": backward before forward");
  const Shape state{s.batch, s.hidden()};
  if (grad_output.defined()) {
    require_tensor(grad_output, Shape{s.steps, s.batch, s.hidden()}, DType::f32, s.name,
                   ": grad_output");
    detail::require_on(grad_output, D, DType::f32, s.name, "grad_output");
  }
  if (grad_final_state.h.defined()) {
    require_tensor(grad_final_state.h, state, DType::f32, s.name, ": grad of final h");
    detail::require_on(grad_final_state.h, D, DType::f32, s.name, "grad of final h");
  }
  if (grad_final_state.c.defined()) {
    require_tensor(grad_final_state.c, state, DType::f32, s.name, ": grad of final c");
    detail::require_on(grad_final_state.c, D, DType::f32, s.name, "grad of final c");
  }
  return s.backward(grad_output, grad_final_state, input_grad);
}

// ---- LayerNorm ----

template <Device D>
LayerNorm<D>::LayerNorm(nn::ParameterStore& store, const std::string& name,
                        const nn::LayerNormOptions& options)
    : impl_(std::make_unique<LayerNormKernels<D>>()) {
  options.validate(name);
  impl_->name = name;
  impl_->options = options;
  const std::int64_t f = options.features;
  impl_->weight = &store.add(name + ".weight", {f}, nn::Init::constant(1.0), f, f);
  impl_->bias = &store.add(name + ".bias", {f}, nn::Init::zeros(), f, f);
}
template <Device D>
const nn::LayerNormOptions& LayerNorm<D>::options() const {
  return impl_->options;
}
template <Device D>
Tensor LayerNorm<D>::forward(const Tensor& input) {
  return detail::forward_saving<D>(*this, *impl_, input);
}
template <Device D>
Tensor LayerNorm<D>::backward(const Tensor& grad_output, bool input_grad) {
  detail::require_backward(impl_->saved_output, grad_output, D, name());
  return impl_->backward(grad_output, input_grad);
}

// ---- ReLU ----

template <Device D>
ReLU<D>::ReLU(std::string name) : impl_(std::make_unique<ReluKernels<D>>()) {
  impl_->name = std::move(name);
}
template <Device D>
Tensor ReLU<D>::forward(const Tensor& input) {
  detail::require_on(input, D, DType::f32, name(), "input");
  impl_->saved_output = impl_->forward(input);
  return impl_->saved_output;
}
template <Device D>
Tensor ReLU<D>::backward(const Tensor& grad_output, bool input_grad) {
  detail::require_backward(impl_->saved_output, grad_output, D, name());
  if (!input_grad) return {};
  return impl_->backward(grad_output);
}

// ---- Rescale ----

template <Device D>
Rescale<D>::Rescale(const nn::RescaleOptions& options, std::string name)
    : impl_(std::make_unique<RescaleKernels<D>>()) {
  SEEDRL_REQUIRE(std::isfinite(options.scale) && options.scale != 0.0f, name,
                 ": scale must be finite and non-zero, got ", options.scale);
  impl_->name = std::move(name);
  impl_->options = options;
}
template <Device D>
const nn::RescaleOptions& Rescale<D>::options() const {
  return impl_->options;
}
template <Device D>
Tensor Rescale<D>::forward(const Tensor& input) {
  SEEDRL_REQUIRE(input.defined() && (input.dtype() == DType::u8 || input.dtype() == DType::f32),
                 name(), ": input must be u8 or f32, got ",
                 input.defined() ? seedrl::name(input.dtype()) : "nothing");
  SEEDRL_REQUIRE(input.device() == D, name(), ": input is on ", input.device(), ", the layer on ",
                 D);
  const Shape out_shape = output_shape(input.shape());
  if (input.dtype() == DType::f32 && options().scale == 1.0f && !options().channels_first_input) {
    return input;
  }
  return impl_->forward(input, out_shape);
}

}  // namespace seedrl::backend
