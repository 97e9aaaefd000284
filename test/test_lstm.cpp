// cpu::LSTM against a double-precision loop; backward through time against finite differences.
#include <doctest/doctest.h>

#include "seedrl/backend/cpu/lstm.hpp"
#include "support/reference_nn.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_lstm {

using namespace seedrl;
using namespace seedrl::test;

namespace {

// Relative error bound of the f32 layer against the double reference (values and gradients).
constexpr double kTolerance = 1e-4;

struct Case {
  Index steps, batch, in, hidden;
  bool with_initial_state;
  std::vector<double> keep;  // [T * B], 0 = reset before that step
};

void check_lstm(const Case& k, std::uint64_t seed) {
  CAPTURE(k.steps);
  CAPTURE(k.batch);
  nn::ParameterStore store;
  nn::LstmOptions options{k.in, k.hidden};
  options.bias_init = nn::Init::uniform(0.5);
  cpu::LSTM layer(store, "lstm", options);
  store.finalize(seed);
  Rng rng(seed);
  const Vec x = random_vec(k.steps * k.batch * k.in, rng);
  const Vec h0 = k.with_initial_state ? random_vec(k.batch * k.hidden, rng)
                                      : Vec(static_cast<std::size_t>(k.batch * k.hidden));
  const Vec c0 = k.with_initial_state ? random_vec(k.batch * k.hidden, rng)
                                      : Vec(static_cast<std::size_t>(k.batch * k.hidden));
  const Vec up_out = random_vec(k.steps * k.batch * k.hidden, rng);
  const Vec up_h = random_vec(k.batch * k.hidden, rng);
  const Vec up_c = random_vec(k.batch * k.hidden, rng);
  const Vec w_ih = to_vec(store.find("lstm.weight_ih").value);
  const Vec w_hh = to_vec(store.find("lstm.weight_hh").value);
  const Vec bias = to_vec(store.find("lstm.bias").value);

  Tensor resets = Tensor::zeros({k.steps, k.batch}, DType::u8);
  for (Index i = 0; i < k.steps * k.batch; ++i)
    resets.data<std::uint8_t>()[i] = k.keep[static_cast<std::size_t>(i)] == 0.0 ? 1 : 0;
  nn::LstmState initial;
  if (k.with_initial_state)
    initial = {to_tensor(h0, {k.batch, k.hidden}), to_tensor(c0, {k.batch, k.hidden})};

  // Loss = <up_out, outputs> + <up_h, h_T> + <up_c, c_T>.
  auto loss = [&](const Vec& xv, const Vec& wih, const Vec& whh, const Vec& b, const Vec& h,
                  const Vec& c) {
    const LstmRefResult r =
        lstm_ref(xv, k.steps, k.batch, k.in, k.hidden, wih, whh, b, h, c, k.keep);
    return dot(up_out, r.outputs) + dot(up_h, r.h) + dot(up_c, r.c);
  };

  const Tensor out = layer.forward(to_tensor(x, {k.steps, k.batch, k.in}), initial, resets);
  const LstmRefResult ref =
      lstm_ref(x, k.steps, k.batch, k.in, k.hidden, w_ih, w_hh, bias, h0, c0, k.keep);
  CHECK(out.shape() == Shape{k.steps, k.batch, k.hidden});
  CHECK(relative_error(to_vec(out), ref.outputs) < kTolerance);
  CHECK(relative_error(to_vec(layer.final_state().h), ref.h) < kTolerance);
  CHECK(relative_error(to_vec(layer.final_state().c), ref.c) < kTolerance);

  const Tensor grad_x =
      layer.backward(to_tensor(up_out, out.shape()),
                     {to_tensor(up_h, {k.batch, k.hidden}), to_tensor(up_c, {k.batch, k.hidden})});
  CHECK(relative_error(
            to_vec(grad_x),
            numeric_gradient([&](const Vec& v) { return loss(v, w_ih, w_hh, bias, h0, c0); }, x)) <
        kTolerance);
  CHECK(relative_error(
            to_vec(store.find("lstm.weight_ih").grad),
            numeric_gradient([&](const Vec& v) { return loss(x, v, w_hh, bias, h0, c0); }, w_ih)) <
        kTolerance);
  CHECK(relative_error(
            to_vec(store.find("lstm.weight_hh").grad),
            numeric_gradient([&](const Vec& v) { return loss(x, w_ih, v, bias, h0, c0); }, w_hh)) <
        kTolerance);
  CHECK(relative_error(
            to_vec(store.find("lstm.bias").grad),
            numeric_gradient([&](const Vec& v) { return loss(x, w_ih, w_hh, v, h0, c0); }, bias)) <
        kTolerance);
  CHECK(relative_error(
            to_vec(layer.initial_state_grad().h),
            numeric_gradient([&](const Vec& v) { return loss(x, w_ih, w_hh, bias, v, c0); }, h0)) <
        kTolerance);
  CHECK(relative_error(
            to_vec(layer.initial_state_grad().c),
            numeric_gradient([&](const Vec& v) { return loss(x, w_ih, w_hh, bias, h0, v); }, c0)) <
        kTolerance);
}

}  // namespace

TEST_CASE("LSTM: one step equals the reference cell") {
  check_lstm({1, 3, 4, 5, true, std::vector<double>(3, 1.0)}, 1);
}

TEST_CASE("LSTM: backward through time over a multi-step unroll") {
  check_lstm({6, 2, 3, 4, true, std::vector<double>(12, 1.0)}, 2);
}

TEST_CASE("LSTM: resets inside the unroll cut both the state and its gradient") {
  // Column 0 restarts at step 2, column 1 at steps 0 and 4; a reset at step 0 discards the
  // initial state of that column.
  std::vector<double> keep(5 * 2, 1.0);
  keep[2 * 2 + 0] = 0.0;
  keep[0 * 2 + 1] = 0.0;
  keep[4 * 2 + 1] = 0.0;
  check_lstm({5, 2, 3, 4, true, keep}, 3);
}

TEST_CASE("LSTM: an undefined initial state means zeros") {
  check_lstm({3, 2, 2, 3, false, std::vector<double>(6, 1.0)}, 4);
}

TEST_CASE("LSTM: the final state continues a split unroll exactly") {
  nn::ParameterStore store;
  cpu::LSTM layer(store, "lstm", {3, 4});
  store.finalize(5);
  Rng rng(5);
  const Vec x = random_vec(6 * 2 * 3, rng);
  const Tensor whole = to_tensor(x, {6, 2, 3});
  const Vec all = to_vec(layer.forward(whole));
  const nn::LstmState mid = [&] {
    layer.forward(whole.slice(0, 3));
    const nn::LstmState s = layer.final_state();
    return nn::LstmState{s.h.clone(), s.c.clone()};
  }();
  const Vec second = to_vec(layer.forward(whole.slice(3, 6), mid));
  CHECK(relative_error(second, Vec(all.begin() + 3 * 2 * 4, all.end())) < 1e-6);
}

TEST_CASE("LSTM: bad shapes throw seedrl::Error naming the layer") {
  nn::ParameterStore store;
  cpu::LSTM layer(store, "core", {3, 4});
  store.finalize(0);
  CHECK_THROWS_WITH_AS(layer.forward(Tensor::zeros({2, 3})),
                       doctest::Contains("core: expected input f32[T, B, 3]"), Error);
  CHECK_THROWS_WITH_AS(
      layer.forward(Tensor::zeros({2, 5, 3}), {Tensor::zeros({4, 4}), Tensor::zeros({5, 4})}),
      doctest::Contains("core: initial state h: expected f32[5, 4], got f32[4, 4]"), Error);
  CHECK_THROWS_WITH_AS(layer.forward(Tensor::zeros({2, 5, 3}), {}, Tensor::zeros({5, 2})),
                       doctest::Contains("core: resets must be [2, 5], got [5, 2]"), Error);
  CHECK_THROWS_WITH_AS(layer.backward(Tensor::zeros({2, 5, 4})),
                       doctest::Contains("core: backward before forward"), Error);
}

}  // namespace test_lstm
