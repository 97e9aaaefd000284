// cpu::Linear: a fully connected layer on oneDNN inner-product primitives.
#pragma once

#include <memory>
#include <string>

#include "seedrl/core/tensor.hpp"
#include "seedrl/nn/layer_options.hpp"
#include "seedrl/nn/parameter.hpp"

namespace seedrl::cpu {

/// y = act(x W^T + b) on [N, in_features] -> [N, out_features], f32.
///
/// Parameters "<name>.weight" [out, in] and "<name>.bias" [out] are declared in the store given
/// to the constructor. Primitives are created once per batch size and cached.
///
/// forward() returns a view of a buffer the layer owns, valid until its next forward(); the
/// layer keeps a handle to its input for backward(), so the caller must not overwrite the input
/// in between. backward() *writes* (does not accumulate) the weight and bias gradients and
/// returns the gradient w.r.t. the input when `input_grad`, else an undefined tensor.
/// Not thread-safe: one thread uses a layer at a time.
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
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedrl::cpu
