// The layer types every backend provides, declared once for all devices.
//
// backend::Linear<Device::cpu> is what seedrl::cpu::Linear names, backend::Linear<Device::cuda>
// what seedrl::cuda::Linear names. The class templates below own what all backends share (the
// options, the parameters a layer declares in its store, shape and FLOP arithmetic); the compute
// lives in a per-device implementation (LinearKernels<D>, ...) that each backend's library
// defines and explicitly instantiates, so including this header never pulls in oneDNN or CUDA.
//
// Common contract of the layers:
// - Construction declares the parameters in the given ParameterStore ("<name>.weight", ...);
//   the store allocates them on its device when finalised.
// - forward() returns a view of a buffer the layer owns, valid until its next forward(); the
//   layer keeps a handle to its input for backward(), so the caller must not overwrite the input
//   in between.
// - backward() *writes* (does not accumulate) the layer's parameter gradients and returns the
//   gradient w.r.t. the input when `input_grad`, else an undefined tensor.
// - Inputs and outputs are tensors on the backend's device. Not thread-safe: one thread uses a
//   layer at a time.
#pragma once

#include <memory>
#include <string>

#include "seedrl/core/tensor.hpp"
#include "seedrl/nn/layer_options.hpp"
#include "seedrl/nn/lstm_state.hpp"
#include "seedrl/nn/parameter.hpp"

namespace seedrl::backend {

// Per-device implementations, defined by the backend libraries (src/backend/<device>/).
template <Device D>
struct LinearKernels;
template <Device D>
struct Conv2dKernels;
template <Device D>
struct LstmKernels;
template <Device D>
struct LayerNormKernels;
template <Device D>
struct ReluKernels;
template <Device D>
struct RescaleKernels;

/// y = act(x W^T + b) on [N, in_features] -> [N, out_features], f32.
/// Parameters "<name>.weight" [out, in] and "<name>.bias" [out].
template <Device D>
class Linear {
 public:
  Linear(nn::ParameterStore& store, const std::string& name, const nn::LinearOptions& options);
  ~Linear();
  Linear(Linear&&) noexcept;
  Linear& operator=(Linear&&) noexcept;

  Tensor forward(const Tensor& input);
  Tensor backward(const Tensor& grad_output, bool input_grad = true);

  const std::string& name() const;
  const nn::LinearOptions& options() const;
  Shape output_shape(const Shape& input) const { return options().output_shape(input, name()); }
  double forward_flops(const Shape& input) const { return options().forward_flops(input[0]); }
  double backward_flops(const Shape& input, bool input_grad) const {
    return options().backward_flops(input[0], input_grad);
  }

 private:
  std::unique_ptr<LinearKernels<D>> impl_;
};

/// act(conv(x, W) + b) on channels-last f32 images [N, H, W, in_channels] ->
/// [N, OH, OW, out_channels]. Parameters "<name>.weight" [out, in, k, k] and "<name>.bias" [out].
/// A backend computes the input gradient only when it is asked for (a first layer never needs
/// one).
template <Device D>
class Conv2d {
 public:
  Conv2d(nn::ParameterStore& store, const std::string& name, const nn::Conv2dOptions& options);
  ~Conv2d();
  Conv2d(Conv2d&&) noexcept;
  Conv2d& operator=(Conv2d&&) noexcept;

  Tensor forward(const Tensor& input);
  Tensor backward(const Tensor& grad_output, bool input_grad = true);

  const std::string& name() const;
  const nn::Conv2dOptions& options() const;
  Shape output_shape(const Shape& input) const { return options().output_shape(input, name()); }
  double forward_flops(const Shape& input) const { return options().forward_flops(input); }
  double backward_flops(const Shape& input, bool input_grad) const {
    return options().backward_flops(input, input_grad);
  }

 private:
  std::unique_ptr<Conv2dKernels<D>> impl_;
};

/// One LSTM layer over a time-major unroll, with backward through time (gates i, f, g, o as in
/// PyTorch; one bias of 4H):
///   a = x_t W_ih^T + h_{t-1} W_hh^T + b;  i, f, o = sigmoid;  g = tanh;
///   c_t = f c_{t-1} + i g;  h_t = o tanh(c_t).
/// Parameters "<name>.weight_ih" [4H, I], "<name>.weight_hh" [4H, H], "<name>.bias" [4H].
///
/// forward(x [T, B, I], initial state, resets [T, B]) returns h for every step [T, B, H]; the
/// final state is final_state(). Where resets[t, b] is non-zero (f32 or u8, on any device) the
/// state of column b is set to zero before step t: episodes that end inside an unroll do not leak
/// into the next. An undefined initial state means zeros.
///
/// backward(grad_outputs [T, B, H], grad_final_state) writes the weight gradients and returns the
/// gradient w.r.t. x (when input_grad); the gradient w.r.t. the initial state is
/// initial_state_grad(). Either gradient argument may be undefined (zero).
template <Device D>
class LSTM {
 public:
  LSTM(nn::ParameterStore& store, const std::string& name, const nn::LstmOptions& options);
  ~LSTM();
  LSTM(LSTM&&) noexcept;
  LSTM& operator=(LSTM&&) noexcept;

  Tensor forward(const Tensor& input, const nn::LstmState& initial_state = {},
                 const Tensor& resets = {});
  Tensor backward(const Tensor& grad_output, const nn::LstmState& grad_final_state = {},
                  bool input_grad = true);

  /// State after the last step of the most recent forward (views of layer-owned buffers).
  nn::LstmState final_state() const;
  /// Gradient w.r.t. the initial state from the most recent backward.
  nn::LstmState initial_state_grad() const;

  const std::string& name() const;
  const nn::LstmOptions& options() const;

 private:
  std::unique_ptr<LstmKernels<D>> impl_;
};

/// Layer normalisation of each row of [N, features] with a learned scale and shift (see
/// nn::LayerNormOptions). Parameters "<name>.weight" (gamma) [features] and "<name>.bias" (beta)
/// [features].
template <Device D>
class LayerNorm {
 public:
  LayerNorm(nn::ParameterStore& store, const std::string& name,
            const nn::LayerNormOptions& options);
  ~LayerNorm();
  LayerNorm(LayerNorm&&) noexcept;
  LayerNorm& operator=(LayerNorm&&) noexcept;

  Tensor forward(const Tensor& input);
  Tensor backward(const Tensor& grad_output, bool input_grad = true);

  const std::string& name() const;
  const nn::LayerNormOptions& options() const;
  Shape output_shape(const Shape& input) const { return options().output_shape(input, name()); }
  double forward_flops(const Shape& input) const { return options().forward_flops(input[0]); }
  double backward_flops(const Shape& input, bool input_grad) const {
    return options().backward_flops(input[0], input_grad);
  }

 private:
  std::unique_ptr<LayerNormKernels<D>> impl_;
};

/// y = max(x, 0) element-wise on f32 of any shape. (Linear and Conv2d can also fuse it.)
template <Device D>
class ReLU {
 public:
  explicit ReLU(std::string name = "relu");
  ~ReLU();
  ReLU(ReLU&&) noexcept;
  ReLU& operator=(ReLU&&) noexcept;

  Tensor forward(const Tensor& input);
  Tensor backward(const Tensor& grad_output, bool input_grad = true);
  const std::string& name() const;
  Shape output_shape(const Shape& input) const { return input; }
  double forward_flops(const Shape&) const { return 0.0; }
  double backward_flops(const Shape&, bool) const { return 0.0; }

 private:
  std::unique_ptr<ReluKernels<D>> impl_;
};

/// Image batch (u8 or f32, NCHW or NHWC) -> f32 NHWC times a scale, in one pass. An input layer:
/// no backward. An f32 NHWC input with scale 1 is returned as it is.
template <Device D>
class Rescale {
 public:
  explicit Rescale(const nn::RescaleOptions& options, std::string name = "rescale");
  ~Rescale();
  Rescale(Rescale&&) noexcept;
  Rescale& operator=(Rescale&&) noexcept;

  Tensor forward(const Tensor& input);
  const std::string& name() const;
  const nn::RescaleOptions& options() const;
  Shape output_shape(const Shape& input) const { return options().output_shape(input, name()); }
  double forward_flops(const Shape&) const { return 0.0; }

 private:
  std::unique_ptr<RescaleKernels<D>> impl_;
};

/// [N, d1, d2, ...] -> [N, d1 * d2 * ...] without copying (a reshape view), and back. The same
/// on every device.
class Flatten {
 public:
  explicit Flatten(std::string name = "flatten") : name_(std::move(name)) {}
  Tensor forward(const Tensor& input) {
    SEEDRL_REQUIRE(input.defined(), name_, ": input not given");
    input_shape_ = input.shape();
    return input.reshape(output_shape(input.shape()));
  }
  Tensor backward(const Tensor& grad_output, bool input_grad = true) {
    SEEDRL_REQUIRE(input_shape_.rank() > 0, name_, ": backward before forward");
    require_tensor(grad_output, output_shape(input_shape_), grad_output.dtype(), name_,
                   ": backward grad_output");
    return input_grad ? grad_output.reshape(input_shape_) : Tensor();
  }
  const std::string& name() const { return name_; }
  Shape output_shape(const Shape& input) const {
    SEEDRL_REQUIRE(input.rank() >= 1, name_, ": cannot flatten a scalar");
    return {input[0], input.drop_front().numel()};
  }
  double forward_flops(const Shape&) const { return 0.0; }
  double backward_flops(const Shape&, bool) const { return 0.0; }

 private:
  std::string name_;
  Shape input_shape_;
};

// Instantiated in the backend libraries only.
#define SEEDRL_DECLARE_BACKEND_LAYERS(DEVICE) \
  extern template class Linear<DEVICE>;       \
  extern template class Conv2d<DEVICE>;       \
  extern template class LSTM<DEVICE>;         \
  extern template class LayerNorm<DEVICE>;    \
  extern template class ReLU<DEVICE>;         \
  extern template class Rescale<DEVICE>
SEEDRL_DECLARE_BACKEND_LAYERS(Device::cpu);
SEEDRL_DECLARE_BACKEND_LAYERS(Device::cuda);
#undef SEEDRL_DECLARE_BACKEND_LAYERS

}  // namespace seedrl::backend
