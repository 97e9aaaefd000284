#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <cmath>

#include "seedrl/nn/parameter.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_parameter {

using seedrl::Error;
using seedrl::Shape;
using seedrl::nn::Init;
using seedrl::nn::ParameterStore;

TEST_CASE("ParameterStore: flat buffers, aligned views, names") {
  ParameterStore store;
  auto& w = store.add("fc.weight", {3, 5}, Init::constant(2.0), 5, 3);
  auto& b = store.add("fc.bias", {3}, Init::zeros(), 5, 3);
  CHECK_FALSE(w.value.defined());
  CHECK_THROWS_WITH_AS(store.values(), doctest::Contains("not finalised"), Error);
  store.finalize(1);
  CHECK(store.num_parameters() == 18);
  CHECK(store.flat_size() == 32);  // each parameter starts on a 16-float boundary
  CHECK(w.value.shape() == Shape{3, 5});
  CHECK(w.value.shares_storage_with(store.values()));
  CHECK(b.grad.shares_storage_with(store.grads()));
  CHECK(reinterpret_cast<std::uintptr_t>(b.value.raw_data()) % 64 == 0);
  CHECK(w.value.flat<float>().minCoeff() == 2.0f);
  CHECK(b.value.flat<float>().abs().maxCoeff() == 0.0f);
  CHECK(store.grads().flat<float>().abs().maxCoeff() == 0.0f);
  CHECK(&store.find("fc.bias") == &b);
  CHECK_THROWS_WITH_AS(store.find("nope"), doctest::Contains("no parameter named 'nope'"), Error);
}

TEST_CASE("ParameterStore: declaration errors name the parameter") {
  ParameterStore store;
  store.add("a", {2}, Init::zeros(), 1, 1);
  CHECK_THROWS_WITH_AS(store.add("a", {2}, Init::zeros(), 1, 1),
                       doctest::Contains("duplicate parameter name 'a'"), Error);
  CHECK_THROWS_WITH_AS(store.add("b", {0, 2}, Init::zeros(), 1, 1), doctest::Contains("'b'"),
                       Error);
  store.finalize(0);
  CHECK_THROWS_WITH_AS(store.add("c", {2}, Init::zeros(), 1, 1),
                       doctest::Contains("already finalised"), Error);
}

TEST_CASE("ParameterStore: the same seed gives the same values; copy_values_from checks layout") {
  auto build = [](ParameterStore& s) {
    s.add("w", {8, 4}, Init::fan_in_uniform(), 4, 8);
    s.add("v", {4}, Init::uniform(0.5), 4, 4);
  };
  ParameterStore a, b, c;
  build(a);
  build(b);
  build(c);
  a.finalize(5);
  b.finalize(5);
  c.finalize(6);
  CHECK((a.values().flat<float>() == b.values().flat<float>()).all());
  CHECK_FALSE((a.values().flat<float>() == c.values().flat<float>()).all());
  const auto version = c.version();
  c.copy_values_from(a);
  CHECK(c.version() > version);
  CHECK((a.values().flat<float>() == c.values().flat<float>()).all());

  ParameterStore other;
  other.add("w", {4, 8}, Init::zeros(), 4, 8);
  other.add("v", {4}, Init::zeros(), 4, 4);
  other.finalize(0);
  CHECK_THROWS_WITH_AS(other.copy_values_from(a),
                       doctest::Contains("'w' [4, 8] here but 'w' [8, 4] there"), Error);
}

TEST_CASE("ParameterStore: alias_values reads the other store's memory through its own handle") {
  auto build = [](ParameterStore& s, std::uint64_t seed) {
    s.add("w", {8, 4}, Init::fan_in_uniform(), 4, 8);
    s.add("v", {4}, Init::uniform(0.5), 4, 4);
    s.finalize(seed);
  };
  ParameterStore owner, twin;
  build(owner, 5);
  build(twin, 6);
  twin.alias_values(owner);
  CHECK(twin.values().raw_data() == owner.values().raw_data());
  CHECK(twin.find("v").value.raw_data() == owner.find("v").value.raw_data());
  // No reference count in common: two threads' tensor copies never touch one cache line.
  CHECK_FALSE(twin.values().shares_storage_with(owner.values()));
  CHECK_FALSE(twin.find("w").value.shares_storage_with(owner.find("w").value));
  // One set of values and one version counter; separate gradients.
  const auto version = owner.version();
  owner.find("v").value.data<float>()[2] = 7.0f;
  owner.bump_version();
  CHECK(twin.find("v").value.data<float>()[2] == 7.0f);
  CHECK(twin.version() == owner.version());
  CHECK(twin.version() > version);
  CHECK(twin.grads().raw_data() != owner.grads().raw_data());
}

TEST_CASE("Init: uniform bounds and variance follow the named scheme") {
  seedrl::Rng rng(3);
  std::vector<float> w(64 * 256);
  const Shape shape{64, 256};
  auto check = [&](const Init& init, double bound) {
    seedrl::nn::initialize(w.data(), shape, init, 256, 64, rng);
    double max_abs = 0.0, sum_sq = 0.0;
    for (float x : w) {
      max_abs = std::max(max_abs, static_cast<double>(std::abs(x)));
      sum_sq += static_cast<double>(x) * x;
    }
    CHECK(max_abs <= bound);
    CHECK(max_abs > 0.98 * bound);
    // Var of U(-a, a) is a^2 / 3.
    CHECK(sum_sq / static_cast<double>(w.size()) ==
          doctest::Approx(bound * bound / 3).epsilon(0.03));
  };
  check(Init::fan_in_uniform(), 1.0 / 16.0);
  check(Init::xavier_uniform(), std::sqrt(6.0 / 320.0));
  check(Init::kaiming_uniform(), std::sqrt(2.0) * std::sqrt(3.0 / 256.0));
  check(Init::uniform(0.3), 0.3);
}

TEST_CASE("Init: orthogonal gives gain * a matrix with orthonormal rows or columns") {
  seedrl::Rng rng(11);
  for (auto [rows, cols] : {std::pair{6, 10}, std::pair{10, 6}, std::pair{7, 7}}) {
    std::vector<float> w(static_cast<std::size_t>(rows * cols));
    seedrl::nn::initialize(w.data(), {rows, cols}, Init::orthogonal(2.0), cols, rows, rng);
    Eigen::MatrixXd m(rows, cols);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) m(i, j) = w[static_cast<std::size_t>(i * cols + j)] / 2.0;
    const Eigen::MatrixXd gram =
        rows <= cols ? Eigen::MatrixXd(m * m.transpose()) : Eigen::MatrixXd(m.transpose() * m);
    CHECK((gram - Eigen::MatrixXd::Identity(gram.rows(), gram.cols())).cwiseAbs().maxCoeff() <
          1e-5);
  }
}

}  // namespace test_parameter
