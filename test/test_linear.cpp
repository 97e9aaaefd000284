// cpu::Linear against a double-precision loop, and its backward against finite differences.
#include <doctest/doctest.h>

#include "seedrl/backend/cpu/linear.hpp"
#include "support/reference_nn.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_linear {

using namespace seedrl;
using namespace seedrl::test;

namespace {

// Relative error bound of the f32 layer against the double reference (values and gradients).
constexpr double kTolerance = 1e-4;

void check_linear(Index n, Index in, Index out, bool bias, nn::Activation act, std::uint64_t seed) {
  CAPTURE(n);
  CAPTURE(in);
  CAPTURE(out);
  CAPTURE(bias);
  nn::ParameterStore store;
  nn::LinearOptions options{in, out, bias, act};
  cpu::Linear layer(store, "fc", options);
  store.finalize(seed);
  Rng rng(seed);
  const Vec x = random_vec(n * in, rng);
  const Vec upstream = random_vec(n * out, rng);
  const Vec w = to_vec(store.find("fc.weight").value);
  const Vec b = bias ? to_vec(store.find("fc.bias").value) : Vec();

  const Tensor y = layer.forward(to_tensor(x, {n, in}));
  CHECK(y.shape() == Shape{n, out});
  CHECK(relative_error(to_vec(y), linear_ref(x, n, in, out, w, bias ? &b : nullptr, act)) <
        kTolerance);

  const Tensor grad_x = layer.backward(to_tensor(upstream, {n, out}));
  // Loss = <upstream, layer(x)>: its gradients by finite differences of the reference.
  const Vec num_x = numeric_gradient(
      [&](const Vec& v) {
        return dot(upstream, linear_ref(v, n, in, out, w, bias ? &b : nullptr, act));
      },
      x);
  const Vec num_w = numeric_gradient(
      [&](const Vec& v) {
        return dot(upstream, linear_ref(x, n, in, out, v, bias ? &b : nullptr, act));
      },
      w);
  CHECK(relative_error(to_vec(grad_x), num_x) < kTolerance);
  CHECK(relative_error(to_vec(store.find("fc.weight").grad), num_w) < kTolerance);
  if (bias) {
    const Vec num_b = numeric_gradient(
        [&](const Vec& v) { return dot(upstream, linear_ref(x, n, in, out, w, &v, act)); }, b);
    CHECK(relative_error(to_vec(store.find("fc.bias").grad), num_b) < kTolerance);
  }
}

}  // namespace

TEST_CASE("Linear: forward and backward match the reference and finite differences") {
  check_linear(5, 7, 3, true, nn::Activation::none, 1);
  check_linear(4, 6, 9, true, nn::Activation::relu, 2);
  check_linear(3, 4, 5, false, nn::Activation::none, 3);
  check_linear(1, 16, 2, false, nn::Activation::relu, 4);
  check_linear(6, 5, 7, true, nn::Activation::tanh, 5);
  check_linear(2, 9, 3, false, nn::Activation::tanh, 6);
}

TEST_CASE("Linear: primitives per batch size; a later smaller batch still computes correctly") {
  nn::ParameterStore store;
  cpu::Linear layer(store, "fc", {8, 4});
  store.finalize(9);
  Rng rng(9);
  const Vec w = to_vec(store.find("fc.weight").value), b = to_vec(store.find("fc.bias").value);
  for (Index n : {6, 2, 6, 11, 1}) {
    const Vec x = random_vec(n * 8, rng);
    CHECK(relative_error(to_vec(layer.forward(to_tensor(x, {n, 8}))),
                         linear_ref(x, n, 8, 4, w, &b, nn::Activation::none)) < kTolerance);
  }
}

TEST_CASE("Linear: no input gradient when not asked; gradients are written, not accumulated") {
  nn::ParameterStore store;
  cpu::Linear layer(store, "fc", {3, 2});
  store.finalize(1);
  const Tensor x = Tensor::from_values<float>({1, 3}, {1, 2, 3});
  layer.forward(x);
  const Tensor g = Tensor::from_values<float>({1, 2}, {1, 1});
  CHECK_FALSE(layer.backward(g, false).defined());
  const Vec first = to_vec(store.find("fc.weight").grad);
  layer.forward(x);
  layer.backward(g, false);
  CHECK(to_vec(store.find("fc.weight").grad) == first);
}

TEST_CASE("Linear: bad shapes and options throw seedrl::Error naming the layer") {
  nn::ParameterStore store;
  CHECK_THROWS_WITH_AS(cpu::Linear(store, "head", {0, 2}),
                       doctest::Contains("head: in_features must be positive"), Error);
  cpu::Linear layer(store, "head", {4, 2});
  store.finalize(0);
  CHECK_THROWS_WITH_AS(layer.forward(Tensor::zeros({3, 5})),
                       doctest::Contains("head: expected input [N, 4], got [3, 5]"), Error);
  CHECK_THROWS_WITH_AS(layer.backward(Tensor::zeros({3, 2})),
                       doctest::Contains("head: backward before forward"), Error);
  layer.forward(Tensor::zeros({3, 4}));
  CHECK_THROWS_WITH_AS(
      layer.backward(Tensor::zeros({2, 2})),
      doctest::Contains("head: backward grad_output: expected f32[3, 2], got f32[2, 2]"), Error);
  CHECK_THROWS_WITH_AS(layer.forward(Tensor::zeros({3, 4}, DType::u8)),
                       doctest::Contains("head: input must be f32"), Error);
}

}  // namespace test_linear
