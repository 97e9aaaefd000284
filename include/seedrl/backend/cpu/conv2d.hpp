// cpu::Conv2d: a 2-D convolution on oneDNN primitives over channels-last images.
#pragma once

#include <memory>
#include <string>

#include "seedrl/core/tensor.hpp"
#include "seedrl/nn/layer_options.hpp"
#include "seedrl/nn/parameter.hpp"

namespace seedrl::cpu {

/// act(conv(x, W) + b) on NHWC f32 images [N, H, W, in_channels] -> [N, OH, OW, out_channels].
///
/// Parameters "<name>.weight" [out, in, k, k] and "<name>.bias" [out]. Activations stay
/// channels-last (measured fastest for these shapes on AVX-512, and no reorder between
/// layers); oneDNN picks the weight layout (format_tag::any) and the layer reorders the weights
/// into it on each forward and the weight gradient back out of it on each backward. Primitives
/// and reorders are created once per input shape and cached; the backward-data primitive is only
/// created when an input gradient is asked for (a first layer never needs one).
///
/// Buffer ownership, gradient writing and thread-safety as cpu::Linear.
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
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedrl::cpu
