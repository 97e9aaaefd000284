// Sequential: a chain of a backend's layers with one forward and one backward.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/nn/backend.hpp"

namespace seedrl::nn {

/// Layers applied in order. backward() runs them in reverse and stops at the first layer with
/// parameters unless the caller asks for the gradient w.r.t. the chain's input, so a first
/// convolution never computes an input gradient and an input layer without a backward
/// (Rescale) is never asked for one.
///
/// Buffer ownership and thread-safety as the layers (one thread; outputs valid until the next
/// forward).
template <Backend B>
class Sequential {
 public:
  using Layer = std::variant<typename B::Rescale, typename B::Conv2d, typename B::Linear,
                             typename B::ReLU, typename B::Flatten>;

  template <class L>
  L& add(L layer) {
    layers_.emplace_back(std::move(layer));
    if (first_trainable_ < 0 && has_parameters(layers_.back())) {
      first_trainable_ = static_cast<int>(layers_.size()) - 1;
    }
    return std::get<L>(layers_.back());
  }

  bool empty() const { return layers_.empty(); }
  std::size_t size() const { return layers_.size(); }

  Tensor forward(const Tensor& input) {
    Tensor x = input;
    for (Layer& layer : layers_) x = std::visit([&](auto& l) { return l.forward(x); }, layer);
    return x;
  }

  /// Gradient w.r.t. the input when `input_grad`, else an undefined tensor.
  Tensor backward(const Tensor& grad_output, bool input_grad = false) {
    if (!input_grad && first_trainable_ < 0) return Tensor();  // nothing to train, nothing asked
    Tensor grad = grad_output;
    const int last = static_cast<int>(layers_.size()) - 1;
    const int stop = input_grad ? 0 : first_trainable_;
    for (int i = last; i >= stop; --i) {
      const bool need_input_grad = input_grad || i > first_trainable_;
      grad = std::visit(
          [&](auto& l) -> Tensor {
            if constexpr (requires { l.backward(grad, need_input_grad); }) {
              return l.backward(grad, need_input_grad);
            } else {
              SEEDRL_REQUIRE(!need_input_grad, l.name(),
                             ": this layer has no gradient (input layer)");
              return Tensor();
            }
          },
          layers_[static_cast<std::size_t>(i)]);
    }
    return input_grad ? grad : Tensor();
  }

  Shape output_shape(const Shape& input) const {
    Shape shape = input;
    for (const Layer& layer : layers_)
      shape = std::visit([&](auto& l) { return l.output_shape(shape); }, layer);
    return shape;
  }

  /// Useful floating-point operations of one forward over `input`.
  double forward_flops(const Shape& input) const {
    double total = 0.0;
    Shape shape = input;
    for (const Layer& layer : layers_) {
      std::visit(
          [&](auto& l) {
            total += l.forward_flops(shape);
            shape = l.output_shape(shape);
          },
          layer);
    }
    return total;
  }

  /// Useful floating-point operations of the backward() that follows a forward over `input`.
  double backward_flops(const Shape& input, bool input_grad = false) const {
    double total = 0.0;
    Shape shape = input;
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      std::visit(
          [&](auto& l) {
            if constexpr (requires { l.backward_flops(shape, true); }) {
              const int index = static_cast<int>(i);
              if (input_grad || index >= first_trainable_) {
                total += l.backward_flops(shape, input_grad || index > first_trainable_);
              }
            }
            shape = l.output_shape(shape);
          },
          layers_[i]);
    }
    return total;
  }

 private:
  static bool has_parameters(const Layer& layer) {
    return std::holds_alternative<typename B::Conv2d>(layer) ||
           std::holds_alternative<typename B::Linear>(layer);
  }

  std::vector<Layer> layers_;
  int first_trainable_ = -1;
};

}  // namespace seedrl::nn
