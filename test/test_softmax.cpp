// Softmax family on logits against naive double-precision formulas and finite differences.
#include <doctest/doctest.h>

#include "seedrl/math/softmax.hpp"
#include "support/reference_nn.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_softmax {

using namespace seedrl;
using namespace seedrl::test;

namespace {

constexpr Index kRows = 4, kCols = 5;
constexpr double kTolerance = 1e-5;

RowMatrixXf to_matrix(const Vec& v) {
  RowMatrixXf m(kRows, kCols);
  for (Index i = 0; i < kRows * kCols; ++i)
    m.data()[i] = static_cast<float>(v[static_cast<std::size_t>(i)]);
  return m;
}
Vec from_matrix(const RowMatrixXf& m) {
  return Vec(m.data(), m.data() + m.size());
}

Vec log_softmax_ref(const Vec& logits) {
  Vec out(logits.size());
  for (Index i = 0; i < kRows; ++i) {
    double sum = 0.0;
    for (Index j = 0; j < kCols; ++j)
      sum += std::exp(logits[static_cast<std::size_t>(i * kCols + j)]);
    for (Index j = 0; j < kCols; ++j)
      out[static_cast<std::size_t>(i * kCols + j)] =
          logits[static_cast<std::size_t>(i * kCols + j)] - std::log(sum);
  }
  return out;
}
Vec softmax_ref(const Vec& logits) {
  Vec lp = log_softmax_ref(logits);
  for (double& x : lp) x = std::exp(x);
  return lp;
}
Vec entropy_ref(const Vec& logits) {
  const Vec lp = log_softmax_ref(logits);
  Vec h(kRows, 0.0);
  for (Index i = 0; i < kRows * kCols; ++i)
    h[static_cast<std::size_t>(i / kCols)] -=
        std::exp(lp[static_cast<std::size_t>(i)]) * lp[static_cast<std::size_t>(i)];
  return h;
}

}  // namespace

TEST_CASE("log_softmax, softmax and entropy match the definitions") {
  Rng rng(1);
  const Vec logits = random_vec(kRows * kCols, rng, -3, 3);
  const RowMatrixXf lp = math::log_softmax(to_matrix(logits));
  CHECK(relative_error(from_matrix(lp), log_softmax_ref(logits)) < kTolerance);
  CHECK(relative_error(from_matrix(math::softmax(to_matrix(logits))), softmax_ref(logits)) <
        kTolerance);
  const Eigen::VectorXf h = math::entropy_from_log_probs(lp);
  CHECK(relative_error(Vec(h.data(), h.data() + h.size()), entropy_ref(logits)) < kTolerance);
}

TEST_CASE("log_softmax is stable for huge logits") {
  RowMatrixXf logits(1, 3);
  logits << 1000.0f, 1001.0f, -1000.0f;
  const RowMatrixXf lp = math::log_softmax(logits);
  CHECK(std::isfinite(lp(0, 2)));
  CHECK(lp(0, 1) == doctest::Approx(-std::log(1.0 + std::exp(-1.0))));
}

TEST_CASE("backward passes match finite differences") {
  Rng rng(2);
  const Vec logits = random_vec(kRows * kCols, rng, -2, 2);
  const Vec upstream = random_vec(kRows * kCols, rng);
  const Vec upstream_rows = random_vec(kRows, rng);
  RowMatrixXf grad(kRows, kCols);

  math::log_softmax_backward(math::log_softmax(to_matrix(logits)), to_matrix(upstream), grad);
  CHECK(relative_error(
            from_matrix(grad),
            numeric_gradient([&](const Vec& v) { return dot(upstream, log_softmax_ref(v)); },
                             logits)) < 1e-4);

  math::softmax_backward(math::softmax(to_matrix(logits)), to_matrix(upstream), grad);
  CHECK(relative_error(from_matrix(grad),
                       numeric_gradient([&](const Vec& v) { return dot(upstream, softmax_ref(v)); },
                                        logits)) < 1e-4);

  Eigen::VectorXf g(kRows);
  for (Index i = 0; i < kRows; ++i)
    g(i) = static_cast<float>(upstream_rows[static_cast<std::size_t>(i)]);
  math::entropy_backward(math::log_softmax(to_matrix(logits)), g, grad);
  CHECK(relative_error(
            from_matrix(grad),
            numeric_gradient([&](const Vec& v) { return dot(upstream_rows, entropy_ref(v)); },
                             logits)) < 1e-4);
}

TEST_CASE("shape mismatches throw") {
  RowMatrixXf a(2, 3), b(3, 3);
  CHECK_THROWS_WITH_AS(math::log_softmax_backward(a, b, a),
                       doctest::Contains("expected [2, 3], got [3, 3]"), Error);
}

}  // namespace test_softmax
