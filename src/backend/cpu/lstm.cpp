#include "seedrl/backend/cpu/lstm.hpp"

#include <vector>

#include "../layer_definitions.hpp"
#include "dnnl_util.hpp"

namespace seedrl::backend {

using namespace cpu::detail;

namespace {

template <class X>
auto sigmoid(const X& x) {
  return 0.5f * ((0.5f * x).tanh() + 1.0f);
}

using MatrixMap = Eigen::Map<RowMatrixXf>;

MatrixMap rows_of(const Tensor& t, std::int64_t rows, std::int64_t cols) {
  return {t.data<float>(), static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols)};
}

}  // namespace

template <>
struct LstmKernels<Device::cpu> : LstmLayerState {
  // Saved by forward for backward (with LstmLayerState's input, cells, outputs).
  Tensor gates;             // [T, B, 4H] activated i, f, g, o
  Tensor prev_hidden;       // [T, B, H] h_{t-1} as used by step t (zero after a reset)
  Tensor prev_cells;        // [T, B, H] c_{t-1} as used by step t
  std::vector<float> keep;  // [T * B] 0 where the state was reset before step t, else 1

  ScratchBuffer gates_buffer, cells_buffer, outputs_buffer, prev_hidden_buffer, prev_cells_buffer;
  ScratchBuffer grad_gates_buffer, grad_input_buffer, grad_h_buffer, grad_c_buffer;

  void read_resets(const Tensor& resets, std::int64_t steps_in, std::int64_t batch_in) {
    keep.assign(static_cast<std::size_t>(steps_in * batch_in), 1.0f);
    if (!resets.defined()) return;
    for (std::int64_t i = 0; i < steps_in * batch_in; ++i) {
      bool reset = false;
      if (resets.dtype() == DType::f32) {
        reset = resets.data<float>()[i] != 0.0f;
      } else if (resets.dtype() == DType::u8) {
        reset = resets.data<std::uint8_t>()[i] != 0;
      } else {
        fail(name, ": resets must be f32 or u8, got ", resets.dtype());
      }
      keep[static_cast<std::size_t>(i)] = reset ? 0.0f : 1.0f;
    }
  }

  // Rows of `dst` = rows of `src` times keep[t, b] (src may be undefined: zeros).
  void masked_copy(const Tensor& src, const Tensor& dst, std::int64_t t) const {
    MatrixMap out = rows_of(dst, batch, hidden());
    if (!src.defined()) {
      out.setZero();
      return;
    }
    MatrixMap in = rows_of(src, batch, hidden());
    for (std::int64_t b = 0; b < batch; ++b)
      out.row(b) = in.row(b) * keep[static_cast<std::size_t>(t * batch + b)];
  }

  void forward(const Tensor& input, const nn::LstmState& initial_state, const Tensor& resets);
  Tensor backward(const Tensor& grad_output, const nn::LstmState& grad_final_state,
                  bool input_grad);
};

void LstmKernels<Device::cpu>::forward(const Tensor& input, const nn::LstmState& initial_state,
                                       const Tensor& resets) {
  LstmKernels& s = *this;
  const std::int64_t in_size = s.options.input_size, h = s.hidden(), g = 4 * h;
  const std::int64_t num_steps = input.dim(0), num_batch = input.dim(1),
                     frames = num_steps * num_batch;
  s.read_resets(resets, num_steps, num_batch);
  s.gates = s.gates_buffer.view({num_steps, num_batch, g});
  s.cells = s.cells_buffer.view({num_steps, num_batch, h});
  s.outputs = s.outputs_buffer.view({num_steps, num_batch, h});
  s.prev_hidden = s.prev_hidden_buffer.view({num_steps, num_batch, h});
  s.prev_cells = s.prev_cells_buffer.view({num_steps, num_batch, h});

  // Input projection of every frame at once, plus the bias.
  gemm(false, true, frames, g, in_size, 1.0f, input.data<float>(), s.weight_ih->value.data<float>(),
       0.0f, s.gates.data<float>());
  rows_of(s.gates, frames, g).rowwise() += rows_of(s.bias->value, 1, g).row(0);

  for (std::int64_t t = 0; t < num_steps; ++t) {
    const Tensor hidden_in = t == 0 ? initial_state.h : s.outputs[t - 1];
    const Tensor cell_in = t == 0 ? initial_state.c : s.cells[t - 1];
    s.masked_copy(hidden_in, s.prev_hidden[t], t);
    s.masked_copy(cell_in, s.prev_cells[t], t);
    gemm(false, true, num_batch, g, h, 1.0f, s.prev_hidden[t].data<float>(),
         s.weight_hh->value.data<float>(), 1.0f, s.gates[t].data<float>());
    MatrixMap a = rows_of(s.gates[t], num_batch, g);
    MatrixMap c = rows_of(s.cells[t], num_batch, h);
    MatrixMap out = rows_of(s.outputs[t], num_batch, h);
    MatrixMap c_prev = rows_of(s.prev_cells[t], num_batch, h);
    a.leftCols(h).array() = sigmoid(a.leftCols(h).array());                  // i
    a.middleCols(h, h).array() = sigmoid(a.middleCols(h, h).array());        // f
    a.middleCols(2 * h, h).array() = a.middleCols(2 * h, h).array().tanh();  // g
    a.rightCols(h).array() = sigmoid(a.rightCols(h).array());                // o
    c.array() = a.middleCols(h, h).array() * c_prev.array() +
                a.leftCols(h).array() * a.middleCols(2 * h, h).array();
    out.array() = a.rightCols(h).array() * c.array().tanh();
  }
}

Tensor LstmKernels<Device::cpu>::backward(const Tensor& grad_output,
                                          const nn::LstmState& grad_final_state, bool input_grad) {
  LstmKernels& s = *this;
  const std::int64_t num_steps = s.steps, num_batch = s.batch, h = s.hidden(), g = 4 * h,
                     in_size = s.options.input_size, frames = num_steps * num_batch;
  Tensor grad_gates = s.grad_gates_buffer.view({num_steps, num_batch, g});
  Tensor grad_h = s.grad_h_buffer.view({num_batch, h});
  Tensor grad_c = s.grad_c_buffer.view({num_batch, h});
  MatrixMap dh_next = rows_of(grad_h, num_batch, h);
  MatrixMap dc_next = rows_of(grad_c, num_batch, h);
  if (grad_final_state.h.defined()) {
    dh_next = rows_of(grad_final_state.h, num_batch, h);
  } else {
    dh_next.setZero();
  }
  if (grad_final_state.c.defined()) {
    dc_next = rows_of(grad_final_state.c, num_batch, h);
  } else {
    dc_next.setZero();
  }

  RowMatrixXf dh(num_batch, h), dc(num_batch, h), tanh_c(num_batch, h);
  for (std::int64_t t = num_steps - 1; t >= 0; --t) {
    MatrixMap a = rows_of(s.gates[t], num_batch, g);
    MatrixMap da = rows_of(grad_gates[t], num_batch, g);
    MatrixMap c = rows_of(s.cells[t], num_batch, h);
    MatrixMap c_prev = rows_of(s.prev_cells[t], num_batch, h);
    const auto i = a.leftCols(h).array();
    const auto f = a.middleCols(h, h).array();
    const auto cand = a.middleCols(2 * h, h).array();
    const auto o = a.rightCols(h).array();
    dh = dh_next;
    if (grad_output.defined()) dh += rows_of(grad_output[t], num_batch, h);
    tanh_c.array() = c.array().tanh();
    dc.array() = dh.array() * o * (1.0f - tanh_c.array().square()) + dc_next.array();
    da.leftCols(h).array() = dc.array() * cand * i * (1.0f - i);
    da.middleCols(h, h).array() = dc.array() * c_prev.array() * f * (1.0f - f);
    da.middleCols(2 * h, h).array() = dc.array() * i * (1.0f - cand.square());
    da.rightCols(h).array() = dh.array() * tanh_c.array() * o * (1.0f - o);
    // Into the previous step: through the recurrent weights and the forget gate, except across
    // a reset, where the previous state was replaced by zeros.
    dc_next.array() = dc.array() * f;
    gemm(false, false, num_batch, h, g, 1.0f, grad_gates[t].data<float>(),
         s.weight_hh->value.data<float>(), 0.0f, grad_h.data<float>());
    for (std::int64_t b = 0; b < num_batch; ++b) {
      const float keep_b = s.keep[static_cast<std::size_t>(t * num_batch + b)];
      dh_next.row(b) *= keep_b;
      dc_next.row(b) *= keep_b;
    }
  }
  s.grad_initial = {grad_h, grad_c};

  // Weight gradients over the whole unroll.
  gemm(true, false, g, h, frames, 1.0f, grad_gates.data<float>(), s.prev_hidden.data<float>(), 0.0f,
       s.weight_hh->grad.data<float>());
  gemm(true, false, g, in_size, frames, 1.0f, grad_gates.data<float>(), s.saved_input.data<float>(),
       0.0f, s.weight_ih->grad.data<float>());
  rows_of(s.bias->grad, 1, g).row(0) = rows_of(grad_gates, frames, g).colwise().sum();
  if (!input_grad) return {};
  Tensor grad_input = s.grad_input_buffer.view(s.saved_input.shape());
  gemm(false, false, frames, in_size, g, 1.0f, grad_gates.data<float>(),
       s.weight_ih->value.data<float>(), 0.0f, grad_input.data<float>());
  return grad_input;
}

}  // namespace seedrl::backend

template class seedrl::backend::LSTM<seedrl::Device::cpu>;
