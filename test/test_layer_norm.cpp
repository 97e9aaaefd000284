// cpu::LayerNorm against a double-precision loop, and its backward against finite differences.
#include <doctest/doctest.h>

#include <cmath>

#include "seedrl/backend/cpu/layer_norm.hpp"
#include "support/reference_nn.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_layer_norm {

using namespace seedrl;
using namespace seedrl::test;

namespace {

constexpr double kTolerance = 1e-4;

// gamma (x - mean) / sqrt(var + eps) + beta over each row, in double.
Vec layer_norm_ref(const Vec& x, Index n, Index f, const Vec& gamma, const Vec& beta, double eps) {
  Vec y(x.size());
  for (Index r = 0; r < n; ++r) {
    double mean = 0.0, var = 0.0;
    for (Index i = 0; i < f; ++i) mean += x[r * f + i];
    mean /= static_cast<double>(f);
    for (Index i = 0; i < f; ++i) var += (x[r * f + i] - mean) * (x[r * f + i] - mean);
    var /= static_cast<double>(f);
    for (Index i = 0; i < f; ++i)
      y[r * f + i] = gamma[i] * (x[r * f + i] - mean) / std::sqrt(var + eps) + beta[i];
  }
  return y;
}

void check_layer_norm(Index n, Index f, std::uint64_t seed) {
  CAPTURE(n);
  CAPTURE(f);
  nn::ParameterStore store;
  cpu::LayerNorm layer(store, "ln", {f});
  store.finalize(seed);
  Rng rng(seed);
  // Parameters away from their start (1 and 0), so the test sees them in every formula.
  const Vec gamma = random_vec(f, rng, 0.5, 1.5), beta = random_vec(f, rng);
  store.find("ln.weight").value.copy_from(to_tensor(gamma, {f}));
  store.find("ln.bias").value.copy_from(to_tensor(beta, {f}));
  const Vec x = random_vec(n * f, rng, -2.0, 3.0);
  const Vec upstream = random_vec(n * f, rng);
  const double eps = 1e-5;

  const Tensor y = layer.forward(to_tensor(x, {n, f}));
  CHECK(y.shape() == Shape{n, f});
  CHECK(relative_error(to_vec(y), layer_norm_ref(x, n, f, gamma, beta, eps)) < kTolerance);

  const Tensor grad_x = layer.backward(to_tensor(upstream, {n, f}));
  // The reference normalises each row on its own, so the loss's derivative by an input of row r
  // is that of row r's term alone: differenced row by row (the whole batch's loss for each of the
  // 76,800 inputs of the large case took minutes, and most of the suite's time under ASan).
  Vec num_x;
  for (Index r = 0; r < n; ++r) {
    const auto row = [r, f](const Vec& v) {
      return Vec(v.begin() + r * f, v.begin() + (r + 1) * f);
    };
    const Vec up_r = row(upstream);
    const Vec g = numeric_gradient(
        [&](const Vec& v) { return dot(up_r, layer_norm_ref(v, 1, f, gamma, beta, eps)); }, row(x));
    num_x.insert(num_x.end(), g.begin(), g.end());
  }
  const Vec num_gamma = numeric_gradient(
      [&](const Vec& v) { return dot(upstream, layer_norm_ref(x, n, f, v, beta, eps)); }, gamma);
  const Vec num_beta = numeric_gradient(
      [&](const Vec& v) { return dot(upstream, layer_norm_ref(x, n, f, gamma, v, eps)); }, beta);
  CHECK(relative_error(to_vec(grad_x), num_x) < kTolerance);
  CHECK(relative_error(to_vec(store.find("ln.weight").grad), num_gamma) < kTolerance);
  CHECK(relative_error(to_vec(store.find("ln.bias").grad), num_beta) < kTolerance);
}

}  // namespace

TEST_CASE("LayerNorm: forward and backward match the reference and finite differences") {
  check_layer_norm(5, 7, 1);
  check_layer_norm(1, 16, 2);
  check_layer_norm(3, 2, 3);
  // Large enough to split the rows over the thread team.
  check_layer_norm(300, 256, 4);
}

TEST_CASE("LayerNorm: starts as the identity normalisation; the input gradient only when asked") {
  nn::ParameterStore store;
  cpu::LayerNorm layer(store, "ln", {4});
  store.finalize(5);
  CHECK(to_vec(store.find("ln.weight").value) == Vec{1, 1, 1, 1});
  CHECK(to_vec(store.find("ln.bias").value) == Vec{0, 0, 0, 0});
  // A row of equal values normalises to 0 (epsilon keeps it finite); rows are independent.
  const Tensor y =
      layer.forward(Tensor::from_values<float>({2, 4}, {3, 3, 3, 3, 1e6f, 1e6f + 2, 1e6f, 1e6f}));
  const Vec out = to_vec(y);
  for (int i = 0; i < 4; ++i) CHECK(out[static_cast<std::size_t>(i)] == 0.0);
  // 1e6 + {0, 2, 0, 0}: mean 1e6 + 0.5, standard deviation sqrt(0.75).
  CHECK(out[5] == doctest::Approx(1.5 / std::sqrt(0.75)).epsilon(1e-3));
  CHECK(out[4] == doctest::Approx(-0.5 / std::sqrt(0.75)).epsilon(1e-3));
  CHECK_FALSE(layer.backward(Tensor::zeros({2, 4}), false).defined());
  CHECK(to_vec(store.find("ln.bias").grad) == Vec{0, 0, 0, 0});
}

TEST_CASE("LayerNorm: bad options and inputs are named") {
  nn::ParameterStore store;
  CHECK_THROWS_WITH_AS(cpu::LayerNorm(store, "critic.ln1", {0}),
                       doctest::Contains("critic.ln1: features must be positive, got 0"), Error);
  nn::LayerNormOptions zero_eps{4};
  zero_eps.epsilon = 0.0f;
  CHECK_THROWS_WITH_AS(cpu::LayerNorm(store, "ln", zero_eps),
                       doctest::Contains("ln: epsilon must be positive"), Error);
  cpu::LayerNorm layer(store, "ln", {4});
  store.finalize(6);
  CHECK_THROWS_WITH_AS(layer.backward(Tensor::zeros({2, 4})),
                       doctest::Contains("ln: backward before forward"), Error);
  CHECK_THROWS_WITH_AS(layer.forward(Tensor::zeros({2, 5})),
                       doctest::Contains("ln: expected input [N, 4], got [2, 5]"), Error);
}

}  // namespace test_layer_norm
