// cpu::LSTM: one LSTM layer over a time-major unroll, with backward through time.
#pragma once

#include <memory>
#include <string>

#include "seedrl/core/tensor.hpp"
#include "seedrl/nn/layer_options.hpp"
#include "seedrl/nn/lstm_state.hpp"
#include "seedrl/nn/parameter.hpp"

namespace seedrl::cpu {

using nn::LstmState;

/// One LSTM layer (gates i, f, g, o as in PyTorch; one bias of 4H):
///   a = x_t W_ih^T + h_{t-1} W_hh^T + b;  i, f, o = sigmoid;  g = tanh;
///   c_t = f c_{t-1} + i g;  h_t = o tanh(c_t).
/// Parameters "<name>.weight_ih" [4H, I], "<name>.weight_hh" [4H, H], "<name>.bias" [4H].
///
/// forward(x [T, B, I], initial state, resets [T, B]) returns h for every step [T, B, H]; the
/// final state is final_state(). Where resets[t, b] is non-zero (f32 or u8) the state of column b
/// is set to zero before step t: episodes that end inside an unroll do not leak into the next.
/// An undefined initial state means zeros.
///
/// The input projection for all T*B frames is one GEMM, the recurrence is one [B, H] x [H, 4H]
/// GEMM per step plus fused element-wise gate math, and backward through time does the same in
/// reverse with the weight gradients as whole-unroll GEMMs at the end.
///
/// backward(grad_outputs [T, B, H], grad_final_state) writes the weight gradients and returns the
/// gradient w.r.t. x (when input_grad); the gradient w.r.t. the initial state is
/// initial_state_grad(). Either gradient argument may be undefined (zero).
/// Buffer ownership and thread-safety as cpu::Linear.
class LSTM {
 public:
  LSTM(nn::ParameterStore& store, const std::string& name, const nn::LstmOptions& options);
  ~LSTM();
  LSTM(LSTM&&) noexcept;
  LSTM& operator=(LSTM&&) noexcept;

  Tensor forward(const Tensor& input, const LstmState& initial_state = {},
                 const Tensor& resets = {});
  Tensor backward(const Tensor& grad_output, const LstmState& grad_final_state = {},
                  bool input_grad = true);

  /// State after the last step of the most recent forward (views of layer-owned buffers).
  LstmState final_state() const;
  /// Gradient w.r.t. the initial state from the most recent backward.
  LstmState initial_state_grad() const;

  const std::string& name() const;
  const nn::LstmOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedrl::cpu
