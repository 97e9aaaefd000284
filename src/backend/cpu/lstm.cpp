#include "seedrl/backend/cpu/lstm.hpp"

#include <vector>

#include "dnnl_util.hpp"

namespace seedrl::cpu {

using namespace detail;

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

struct LSTM::Impl {
  std::string name;
  nn::LstmOptions options;
  nn::Parameter* weight_ih = nullptr;
  nn::Parameter* weight_hh = nullptr;
  nn::Parameter* bias = nullptr;

  // Saved by forward for backward.
  std::int64_t steps = 0, batch = 0;
  Tensor input;             // [T, B, I]
  Tensor gates;             // [T, B, 4H] activated i, f, g, o
  Tensor cells;             // [T, B, H] c_t
  Tensor outputs;           // [T, B, H] h_t
  Tensor prev_hidden;       // [T, B, H] h_{t-1} as used by step t (zero after a reset)
  Tensor prev_cells;        // [T, B, H] c_{t-1} as used by step t
  std::vector<float> keep;  // [T * B] 0 where the state was reset before step t, else 1
  LstmState grad_initial;

  ScratchBuffer gates_buffer, cells_buffer, outputs_buffer, prev_hidden_buffer, prev_cells_buffer;
  ScratchBuffer grad_gates_buffer, grad_input_buffer, grad_h_buffer, grad_c_buffer;

  std::int64_t hidden() const { return options.hidden_size; }

  void read_resets(const Tensor& resets, std::int64_t steps_in, std::int64_t batch_in) {
    keep.assign(static_cast<std::size_t>(steps_in * batch_in), 1.0f);
    if (!resets.defined()) return;
    SEEDRL_REQUIRE(resets.shape() == Shape({steps_in, batch_in}), name, ": resets must be [",
                   steps_in, ", ", batch_in, "], got ", resets.shape());
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
};

LSTM::LSTM(nn::ParameterStore& store, const std::string& name, const nn::LstmOptions& options)
    : impl_(std::make_unique<Impl>()) {
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

LSTM::~LSTM() = default;
LSTM::LSTM(LSTM&&) noexcept = default;
LSTM& LSTM::operator=(LSTM&&) noexcept = default;

const std::string& LSTM::name() const {
  return impl_->name;
}
const nn::LstmOptions& LSTM::options() const {
  return impl_->options;
}

Tensor LSTM::forward(const Tensor& input, const LstmState& initial_state, const Tensor& resets) {
  Impl& s = *impl_;
  const std::int64_t in_size = s.options.input_size, h = s.hidden(), g = 4 * h;
  SEEDRL_REQUIRE(input.defined() && input.dtype() == DType::f32 && input.rank() == 3 &&
                     input.dim(2) == in_size,
                 s.name, ": expected input f32[T, B, ", in_size, "], got ",
                 input.defined() ? input.shape().to_string() : "nothing");
  const std::int64_t steps = input.dim(0), batch = input.dim(1), frames = steps * batch;
  SEEDRL_REQUIRE(steps > 0 && batch > 0, s.name, ": empty input ", input.shape());
  if (initial_state.h.defined() || initial_state.c.defined()) {
    require_tensor(initial_state.h, Shape{batch, h}, DType::f32, s.name, ": initial state h");
    require_tensor(initial_state.c, Shape{batch, h}, DType::f32, s.name, ": initial state c");
  }
  s.steps = 0;  // a forward that fails below leaves nothing for backward to misuse
  s.batch = batch;
  s.read_resets(resets, steps, batch);
  s.input = input;
  s.gates = s.gates_buffer.view({steps, batch, g});
  s.cells = s.cells_buffer.view({steps, batch, h});
  s.outputs = s.outputs_buffer.view({steps, batch, h});
  s.prev_hidden = s.prev_hidden_buffer.view({steps, batch, h});
  s.prev_cells = s.prev_cells_buffer.view({steps, batch, h});

  // Input projection of every frame at once, plus the bias.
  gemm(false, true, frames, g, in_size, 1.0f, input.data<float>(), s.weight_ih->value.data<float>(),
       0.0f, s.gates.data<float>());
  rows_of(s.gates, frames, g).rowwise() += rows_of(s.bias->value, 1, g).row(0);

  for (std::int64_t t = 0; t < steps; ++t) {
    const Tensor hidden_in = t == 0 ? initial_state.h : s.outputs[t - 1];
    const Tensor cell_in = t == 0 ? initial_state.c : s.cells[t - 1];
    s.masked_copy(hidden_in, s.prev_hidden[t], t);
    s.masked_copy(cell_in, s.prev_cells[t], t);
    gemm(false, true, batch, g, h, 1.0f, s.prev_hidden[t].data<float>(),
         s.weight_hh->value.data<float>(), 1.0f, s.gates[t].data<float>());
    MatrixMap a = rows_of(s.gates[t], batch, g);
    MatrixMap c = rows_of(s.cells[t], batch, h);
    MatrixMap out = rows_of(s.outputs[t], batch, h);
    MatrixMap c_prev = rows_of(s.prev_cells[t], batch, h);
    a.leftCols(h).array() = sigmoid(a.leftCols(h).array());                  // i
    a.middleCols(h, h).array() = sigmoid(a.middleCols(h, h).array());        // f
    a.middleCols(2 * h, h).array() = a.middleCols(2 * h, h).array().tanh();  // g
    a.rightCols(h).array() = sigmoid(a.rightCols(h).array());                // o
    c.array() = a.middleCols(h, h).array() * c_prev.array() +
                a.leftCols(h).array() * a.middleCols(2 * h, h).array();
    out.array() = a.rightCols(h).array() * c.array().tanh();
  }
  s.steps = steps;
  return s.outputs;
}

LstmState LSTM::final_state() const {
  const Impl& s = *impl_;
  SEEDRL_REQUIRE(s.steps > 0, s.name, ": final_state before forward");
  return {s.outputs[s.steps - 1], s.cells[s.steps - 1]};
}

LstmState LSTM::initial_state_grad() const {
  return impl_->grad_initial;
}

Tensor LSTM::backward(const Tensor& grad_output, const LstmState& grad_final_state,
                      bool input_grad) {
  Impl& s = *impl_;
  SEEDRL_REQUIRE(s.steps > 0, s.name, ": backward before forward");
  const std::int64_t steps = s.steps, batch = s.batch, h = s.hidden(), g = 4 * h,
                     in_size = s.options.input_size, frames = steps * batch;
  if (grad_output.defined()) {
    require_tensor(grad_output, Shape{steps, batch, h}, DType::f32, s.name, ": grad_output");
  }
  Tensor grad_gates = s.grad_gates_buffer.view({steps, batch, g});
  Tensor grad_h = s.grad_h_buffer.view({batch, h});
  Tensor grad_c = s.grad_c_buffer.view({batch, h});
  MatrixMap dh_next = rows_of(grad_h, batch, h);
  MatrixMap dc_next = rows_of(grad_c, batch, h);
  if (grad_final_state.h.defined()) {
    require_tensor(grad_final_state.h, Shape{batch, h}, DType::f32, s.name, ": grad of final h");
    dh_next = rows_of(grad_final_state.h, batch, h);
  } else {
    dh_next.setZero();
  }
  if (grad_final_state.c.defined()) {
    require_tensor(grad_final_state.c, Shape{batch, h}, DType::f32, s.name, ": grad of final c");
    dc_next = rows_of(grad_final_state.c, batch, h);
  } else {
    dc_next.setZero();
  }

  RowMatrixXf dh(batch, h), dc(batch, h), tanh_c(batch, h);
  for (std::int64_t t = steps - 1; t >= 0; --t) {
    MatrixMap a = rows_of(s.gates[t], batch, g);
    MatrixMap da = rows_of(grad_gates[t], batch, g);
    MatrixMap c = rows_of(s.cells[t], batch, h);
    MatrixMap c_prev = rows_of(s.prev_cells[t], batch, h);
    const auto i = a.leftCols(h).array();
    const auto f = a.middleCols(h, h).array();
    const auto cand = a.middleCols(2 * h, h).array();
    const auto o = a.rightCols(h).array();
    dh = dh_next;
    if (grad_output.defined()) dh += rows_of(grad_output[t], batch, h);
    tanh_c.array() = c.array().tanh();
    dc.array() = dh.array() * o * (1.0f - tanh_c.array().square()) + dc_next.array();
    da.leftCols(h).array() = dc.array() * cand * i * (1.0f - i);
    da.middleCols(h, h).array() = dc.array() * c_prev.array() * f * (1.0f - f);
    da.middleCols(2 * h, h).array() = dc.array() * i * (1.0f - cand.square());
    da.rightCols(h).array() = dh.array() * tanh_c.array() * o * (1.0f - o);
    // Into the previous step: through the recurrent weights and the forget gate, except across
    // a reset, where the previous state was replaced by zeros.
    dc_next.array() = dc.array() * f;
    gemm(false, false, batch, h, g, 1.0f, grad_gates[t].data<float>(),
         s.weight_hh->value.data<float>(), 0.0f, grad_h.data<float>());
    for (std::int64_t b = 0; b < batch; ++b) {
      const float keep = s.keep[static_cast<std::size_t>(t * batch + b)];
      dh_next.row(b) *= keep;
      dc_next.row(b) *= keep;
    }
  }
  s.grad_initial = {grad_h, grad_c};

  // Weight gradients over the whole unroll.
  gemm(true, false, g, h, frames, 1.0f, grad_gates.data<float>(), s.prev_hidden.data<float>(), 0.0f,
       s.weight_hh->grad.data<float>());
  gemm(true, false, g, in_size, frames, 1.0f, grad_gates.data<float>(), s.input.data<float>(), 0.0f,
       s.weight_ih->grad.data<float>());
  rows_of(s.bias->grad, 1, g).row(0) = rows_of(grad_gates, frames, g).colwise().sum();
  if (!input_grad) return {};
  Tensor grad_input = s.grad_input_buffer.view(s.input.shape());
  gemm(false, false, frames, in_size, g, 1.0f, grad_gates.data<float>(),
       s.weight_ih->value.data<float>(), 0.0f, grad_input.data<float>());
  return grad_input;
}

}  // namespace seedrl::cpu
