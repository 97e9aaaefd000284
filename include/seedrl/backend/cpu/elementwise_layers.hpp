// cpu::ReLU, cpu::Flatten and cpu::Rescale: the parameter-free layers of the CPU backend.
#pragma once

#include <memory>
#include <string>

#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/nn/layer_options.hpp"
#include "seedrl/nn/parameter.hpp"

namespace seedrl::cpu {

/// y = max(x, 0) element-wise on f32 of any shape. (Linear and Conv2d can also fuse it.)
class ReLU {
 public:
  explicit ReLU(std::string name = "relu") : name_(std::move(name)) {}
  Tensor forward(const Tensor& input);
  Tensor backward(const Tensor& grad_output, bool input_grad = true);
  const std::string& name() const { return name_; }
  Shape output_shape(const Shape& input) const { return input; }
  double forward_flops(const Shape&) const { return 0.0; }
  double backward_flops(const Shape&, bool) const { return 0.0; }

 private:
  std::string name_;
  ScratchBuffer output_buffer_;
  ScratchBuffer grad_input_buffer_;
  Tensor output_;  // of the last forward, for backward
};

/// [N, d1, d2, ...] -> [N, d1 * d2 * ...] without copying (a reshape view), and back.
class Flatten {
 public:
  explicit Flatten(std::string name = "flatten") : name_(std::move(name)) {}
  Tensor forward(const Tensor& input);
  Tensor backward(const Tensor& grad_output, bool input_grad = true);
  const std::string& name() const { return name_; }
  Shape output_shape(const Shape& input) const;
  double forward_flops(const Shape&) const { return 0.0; }
  double backward_flops(const Shape&, bool) const { return 0.0; }

 private:
  std::string name_;
  Shape input_shape_;
};

/// Image batch (u8 or f32, NCHW or NHWC) -> f32 NHWC times a scale, as one cached oneDNN
/// reorder (conversion, layout change and scaling in one pass). An input layer: no backward.
/// An f32 NHWC input with scale 1 is returned as it is.
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
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedrl::cpu
