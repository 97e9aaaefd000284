// The Backend concept: what a compute backend provides so models, optimizers and agents can be
// written once and instantiated for the CPU (seedrl::cpu::Backend) or a GPU.
//
// A backend is a type with static members and nested layer types:
//
//   struct MyBackend {
//     static constexpr Device device = Device::cpu;
//     using Linear = ...;  using Conv2d = ...;  using LSTM = ...;  using LayerNorm = ...;
//     using ReLU = ...;    using Flatten = ...; using Rescale = ...;
//     static double sum_of_squares(const Tensor& x);           // sum of x^2 over f32 x
//     static void scale(const Tensor& x, float factor);        // x *= factor
//     static void add_to(const Tensor& dst, const Tensor& src); // dst += src
//     static void adam_update(p, g, m, v, const nn::AdamStep&);  // flat f32 tensors
//     static void rmsprop_update(p, g, mean_square, mean_grad, mom, const nn::RmsPropStep&);
//     static void sgd_update(p, g, buf, const nn::SgdStep&);
//     static void dueling_forward(value [N,1], advantage [N,A], q [N,A]);  // q = v + a - mean a
//     static void dueling_backward(grad_q, grad_value, grad_advantage);
//   };
//   static_assert(seedrl::nn::Backend<MyBackend>);
//
// Layer types are constructed as Layer(ParameterStore&, name, options) and offer
// forward(input) -> Tensor and backward(grad_output, input_grad) -> Tensor (see
// backend/layers.hpp).
#pragma once

#include <concepts>

#include "seedrl/core/tensor.hpp"
#include "seedrl/nn/update_rules.hpp"

namespace seedrl::nn {

template <class B>
concept Backend = requires(const Tensor& t, float f, const AdamStep& adam,
                           const RmsPropStep& rmsprop, const SgdStep& sgd) {
  { B::device } -> std::convertible_to<Device>;
  typename B::Linear;
  typename B::Conv2d;
  typename B::LSTM;
  typename B::LayerNorm;
  typename B::ReLU;
  typename B::Flatten;
  typename B::Rescale;
  { B::sum_of_squares(t) } -> std::convertible_to<double>;
  B::scale(t, f);
  B::add_to(t, t);
  B::adam_update(t, t, t, t, adam);
  B::rmsprop_update(t, t, t, t, t, rmsprop);
  B::sgd_update(t, t, t, sgd);
  B::dueling_forward(t, t, t);
  B::dueling_backward(t, t, t);
};

}  // namespace seedrl::nn
