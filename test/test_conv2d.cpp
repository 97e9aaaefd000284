// cpu::Conv2d against a double-precision loop, and its backward against finite differences.
#include <doctest/doctest.h>

#include "seedrl/backend/cpu/conv2d.hpp"
#include "support/reference_nn.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_conv2d {

using namespace seedrl;
using namespace seedrl::test;

namespace {

// Relative error bound of the f32 layer against the double reference (values and gradients).
constexpr double kTolerance = 1e-4;

void check_conv(const ConvGeometry& g, bool bias, nn::Activation act, std::uint64_t seed) {
  CAPTURE(g.kernel);
  CAPTURE(g.stride);
  CAPTURE(g.padding);
  CAPTURE(g.in_c);
  nn::ParameterStore store;
  nn::Conv2dOptions options{g.in_c, g.out_c, g.kernel, g.stride, g.padding, bias, act};
  cpu::Conv2d layer(store, "conv", options);
  store.finalize(seed);
  Rng rng(seed);
  const Vec x = random_vec(g.n * g.h * g.w * g.in_c, rng);
  const Vec upstream = random_vec(g.n * g.out_h() * g.out_w() * g.out_c, rng);
  const Vec w = to_vec(store.find("conv.weight").value);
  const Vec b = bias ? to_vec(store.find("conv.bias").value) : Vec();
  const bool relu = act == nn::Activation::relu;
  auto reference = [&](const Vec& xv, const Vec& wv, const Vec* bv) {
    return conv2d_ref(xv, g, wv, bv, relu);
  };

  const Tensor y = layer.forward(to_tensor(x, {g.n, g.h, g.w, g.in_c}));
  CHECK(y.shape() == Shape{g.n, g.out_h(), g.out_w(), g.out_c});
  CHECK(relative_error(to_vec(y), reference(x, w, bias ? &b : nullptr)) < kTolerance);

  const Tensor grad_x = layer.backward(to_tensor(upstream, y.shape()));
  const Vec num_x = numeric_gradient(
      [&](const Vec& v) { return dot(upstream, reference(v, w, bias ? &b : nullptr)); }, x);
  const Vec num_w = numeric_gradient(
      [&](const Vec& v) { return dot(upstream, reference(x, v, bias ? &b : nullptr)); }, w);
  CHECK(relative_error(to_vec(grad_x), num_x) < kTolerance);
  CHECK(relative_error(to_vec(store.find("conv.weight").grad), num_w) < kTolerance);
  if (bias) {
    const Vec num_b =
        numeric_gradient([&](const Vec& v) { return dot(upstream, reference(x, w, &v)); }, b);
    CHECK(relative_error(to_vec(store.find("conv.bias").grad), num_b) < kTolerance);
  }
}

}  // namespace

TEST_CASE("Conv2d: forward and backward match the reference and finite differences") {
  // n, h, w, in_c, out_c, kernel, stride, padding
  check_conv({2, 6, 6, 3, 4, 3, 1, 0}, true, nn::Activation::none, 1);
  check_conv({2, 7, 7, 2, 5, 3, 2, 1}, true, nn::Activation::relu, 2);
  check_conv({1, 9, 8, 4, 3, 4, 2, 0}, false, nn::Activation::relu, 3);
  check_conv({3, 5, 5, 16, 8, 1, 1, 0}, true, nn::Activation::none, 4);
  // Nature-CNN-like strides on a small image: 8x8 kernel, stride 4.
  check_conv({1, 12, 12, 2, 4, 8, 4, 0}, true, nn::Activation::relu, 5);
}

TEST_CASE("Conv2d: few input channels into one block of 8 or 16 outputs match the reference") {
  // The layer runs these on oneDNN's planar-input kernel over a transposed copy of the input.
  check_conv({3, 10, 10, 4, 16, 3, 1, 0}, true, nn::Activation::relu, 6);  // MinAtar's first layer
  check_conv({2, 6, 6, 10, 16, 3, 1, 1}, false, nn::Activation::relu, 7);
  check_conv({2, 7, 9, 3, 8, 3, 2, 1}, true, nn::Activation::none, 8);
  // The board torso's: stride 1, padding 1 keeps the size; bias and ReLU.
  check_conv({3, 4, 5, 2, 4, 3, 1, 1}, true, nn::Activation::relu, 9);
  check_conv({2, 6, 7, 4, 3, 3, 1, 1}, true, nn::Activation::relu, 10);
}

TEST_CASE("Conv2d: a first layer computes no input gradient but all weight gradients") {
  nn::ParameterStore store;
  cpu::Conv2d layer(store, "conv", {2, 3, 3});
  store.finalize(1);
  Rng rng(1);
  const ConvGeometry g{2, 5, 5, 2, 3, 3, 1, 0};
  const Vec x = random_vec(2 * 5 * 5 * 2, rng);
  const Vec upstream = random_vec(2 * 3 * 3 * 3, rng);
  layer.forward(to_tensor(x, {2, 5, 5, 2}));
  CHECK_FALSE(layer.backward(to_tensor(upstream, {2, 3, 3, 3}), false).defined());
  const Vec w = to_vec(store.find("conv.weight").value), b = to_vec(store.find("conv.bias").value);
  const Vec num_w = numeric_gradient(
      [&](const Vec& v) { return dot(upstream, conv2d_ref(x, g, v, &b, false)); }, w);
  CHECK(relative_error(to_vec(store.find("conv.weight").grad), num_w) < kTolerance);
}

TEST_CASE("Conv2d: weights changed between calls are used (the packed copy is refreshed)") {
  nn::ParameterStore store;
  cpu::Conv2d layer(store, "conv", {3, 16, 3});
  store.finalize(2);
  Rng rng(2);
  const ConvGeometry g{1, 6, 6, 3, 16, 3, 1, 0};
  const Vec x = random_vec(6 * 6 * 3, rng);
  layer.forward(to_tensor(x, {1, 6, 6, 3}));
  store.values().flat<float>() *= 0.5f;  // as an optimizer step would change them,
  store.bump_version();                  // and as every writer must announce
  const Vec w = to_vec(store.find("conv.weight").value), b = to_vec(store.find("conv.bias").value);
  CHECK(relative_error(to_vec(layer.forward(to_tensor(x, {1, 6, 6, 3}))),
                       conv2d_ref(x, g, w, &b, false)) < kTolerance);
}

TEST_CASE("Conv2d: bad shapes and options throw seedrl::Error naming the layer") {
  nn::ParameterStore store;
  CHECK_THROWS_WITH_AS(cpu::Conv2d(store, "c1", {3, 8, 3, 0}),
                       doctest::Contains("c1: stride must be positive"), Error);
  nn::Conv2dOptions tanh{3, 8, 3};
  tanh.activation = nn::Activation::tanh;
  CHECK_THROWS_WITH_AS(cpu::Conv2d(store, "c1", tanh),
                       doctest::Contains("c1: Conv2d fuses no activation or ReLU"), Error);
  cpu::Conv2d layer(store, "c1", {3, 8, 5});
  store.finalize(0);
  CHECK_THROWS_WITH_AS(layer.forward(Tensor::zeros({1, 8, 8, 4})),
                       doctest::Contains("c1: expected NHWC input [N, H, W, 3], got [1, 8, 8, 4]"),
                       Error);
  CHECK_THROWS_WITH_AS(layer.forward(Tensor::zeros({1, 4, 4, 3})),
                       doctest::Contains("c1: input [1, 4, 4, 3] is smaller than the 5x5 kernel"),
                       Error);
  CHECK_THROWS_WITH_AS(layer.forward(Tensor::zeros({8, 8, 3})),
                       doctest::Contains("c1: expected NHWC input"), Error);
}

TEST_CASE("Conv2d and Linear: packed weights are reused until the parameter version moves") {
  nn::ParameterStore store;
  cpu::Conv2d conv(store, "conv", {3, 16, 3});
  store.finalize(4);
  Rng rng(4);
  const Vec x = random_vec(6 * 6 * 3, rng);
  const Tensor input = to_tensor(x, {1, 6, 6, 3});
  const Vec first = to_vec(conv.forward(input));
  store.find("conv.weight").value.flat<float>() *= 2.0f;  // not announced: the packed copy stays
  CHECK(to_vec(conv.forward(input)) == first);
  store.bump_version();
  const Vec second = to_vec(conv.forward(input));
  CHECK(second != first);
  // Another store aliasing the values shares the version: its writes are seen too.
  nn::ParameterStore twin;
  cpu::Conv2d twin_conv(twin, "conv", {3, 16, 3});
  twin.finalize(99);
  twin.alias_values(store);
  CHECK(to_vec(twin_conv.forward(input)) == second);
  store.find("conv.weight").value.flat<float>() *= 0.5f;
  store.bump_version();
  CHECK(relative_error(to_vec(twin_conv.forward(input)), first) < 1e-6);
}

}  // namespace test_conv2d
