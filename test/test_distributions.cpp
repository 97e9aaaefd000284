// The policy distributions (math/distributions.hpp): log-probabilities and entropies against
// float64 references written from the densities; every gradient against central finite
// differences of those references; samples against their distribution's moments or
// probabilities; the tanh correction where the naive formula overflows; the squashed density
// integrating to 1; the tanh entropy estimate's mean against a Monte Carlo entropy.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <numbers>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/math/distributions.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_distributions {

using namespace seedrl;
using namespace seedrl::math;
using Matrix = RowMatrixXf;
using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

namespace {

Matrix random_matrix(Eigen::Index rows, Eigen::Index cols, double low, double high, Rng& rng) {
  Matrix m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i)
    m.data()[i] = static_cast<float>(rng.uniform(low, high));
  return m;
}

Eigen::VectorXf random_vector(Eigen::Index n, Rng& rng) {
  Eigen::VectorXf v(n);
  for (Eigen::Index i = 0; i < n; ++i) v(i) = static_cast<float>(rng.uniform(-1.5, 1.5));
  return v;
}

// ---- float64 references, per row ----
double ref_log_softmax(const MatrixD& z, Eigen::Index i, Eigen::Index a) {
  double total = 0.0;
  for (Eigen::Index j = 0; j < z.cols(); ++j) total += std::exp(z(i, j));
  return z(i, a) - std::log(total);
}
double ref_categorical_entropy(const MatrixD& z, Eigen::Index i) {
  double h = 0.0;
  for (Eigen::Index j = 0; j < z.cols(); ++j) {
    const double lp = ref_log_softmax(z, i, j);
    h -= std::exp(lp) * lp;
  }
  return h;
}
double ref_gaussian_log_prob(const MatrixD& mean, const MatrixD& log_std, const MatrixD& x,
                             Eigen::Index i) {
  double total = 0.0;
  for (Eigen::Index d = 0; d < mean.cols(); ++d) {
    const double s = std::exp(log_std(i, d));
    const double z = (x(i, d) - mean(i, d)) / s;
    total += -0.5 * z * z - std::log(s * std::sqrt(2.0 * std::numbers::pi));
  }
  return total;
}
double ref_gaussian_entropy(const MatrixD& log_std, Eigen::Index i) {
  double total = 0.0;
  for (Eigen::Index d = 0; d < log_std.cols(); ++d)
    total += 0.5 * std::log(2.0 * std::numbers::pi * std::numbers::e) + log_std(i, d);
  return total;
}
// The squashed density by the change of variables a = tanh(u): p(a) = N(u) / prod (1 - a^2).
double ref_tanh_log_prob(const MatrixD& mean, const MatrixD& log_std, const MatrixD& u,
                         Eigen::Index i) {
  double total = ref_gaussian_log_prob(mean, log_std, u, i);
  for (Eigen::Index d = 0; d < u.cols(); ++d) {
    const double a = std::tanh(u(i, d));
    total -= std::log(1.0 - a * a);
  }
  return total;
}
double ref_tanh_entropy_estimate(const MatrixD& mean, const MatrixD& log_std, const MatrixD& z,
                                 Eigen::Index i) {
  MatrixD u = mean.array() + log_std.array().exp() * z.array();
  double total = ref_gaussian_entropy(log_std, i);
  for (Eigen::Index d = 0; d < u.cols(); ++d) {
    const double a = std::tanh(u(i, d));
    total += std::log(1.0 - a * a);
  }
  return total;
}

// d/dX sum_i g_i f(X)_i by central differences on the float64 reference f.
MatrixD numeric_gradient(const std::function<double(const MatrixD&, Eigen::Index)>& f,
                         const Matrix& x, const Eigen::VectorXf& g) {
  MatrixD point = x.cast<double>();
  MatrixD grad(x.rows(), x.cols());
  const double h = 1e-6;
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index d = 0; d < x.cols(); ++d) {
      const double saved = point(i, d);
      point(i, d) = saved + h;
      const double up = f(point, i);
      point(i, d) = saved - h;
      const double down = f(point, i);
      point(i, d) = saved;
      grad(i, d) = g(i) * (up - down) / (2 * h);
    }
  return grad;
}

void check_close(const Matrix& analytic, const MatrixD& numeric, double tolerance = 2e-4) {
  REQUIRE(analytic.rows() == numeric.rows());
  REQUIRE(analytic.cols() == numeric.cols());
  for (Eigen::Index k = 0; k < analytic.size(); ++k) {
    CAPTURE(k);
    CHECK(analytic.data()[k] == doctest::Approx(numeric.data()[k]).epsilon(tolerance).scale(1.0));
  }
}

}  // namespace

TEST_CASE("Categorical: log-probability, entropy and their gradients") {
  Rng rng(3);
  const Matrix logits = random_matrix(6, 5, -3, 3, rng);
  const MatrixD z = logits.cast<double>();
  const std::vector<std::int32_t> actions{0, 4, 2, 1, 3, 4};
  const Eigen::VectorXf g = random_vector(6, rng);

  const Eigen::VectorXf lp = Categorical::log_prob(logits, actions);
  const Eigen::VectorXf h = Categorical::entropy(logits);
  for (Eigen::Index i = 0; i < 6; ++i) {
    CHECK(
        lp(i) ==
        doctest::Approx(ref_log_softmax(z, i, actions[static_cast<std::size_t>(i)])).epsilon(1e-5));
    CHECK(h(i) == doctest::Approx(ref_categorical_entropy(z, i)).epsilon(1e-5));
  }
  Matrix grad(6, 5);
  Categorical::log_prob_backward(logits, actions, g, grad);
  check_close(grad, numeric_gradient(
                        [&](const MatrixD& x, Eigen::Index i) {
                          return ref_log_softmax(x, i, actions[static_cast<std::size_t>(i)]);
                        },
                        logits, g));
  Categorical::entropy_backward(logits, g, grad);
  check_close(grad, numeric_gradient(ref_categorical_entropy, logits, g));

  std::vector<std::int32_t> modes(6);
  Categorical::mode(logits, modes);
  for (Eigen::Index i = 0; i < 6; ++i) {
    Eigen::Index best = 0;
    logits.row(i).maxCoeff(&best);
    CHECK(modes[static_cast<std::size_t>(i)] == best);
  }
  const std::vector<std::int32_t> bad{0, 5, 0, 0, 0, 0};
  CHECK_THROWS_WITH_AS(Categorical::log_prob(logits, bad),
                       doctest::Contains("action 5 of row 1 is out of range [0, 5)"), Error);
}

TEST_CASE("Categorical: samples follow the softmax probabilities") {
  Matrix logits(1, 4);
  logits << 1.0f, 0.0f, -1.0f, 2.0f;
  const MatrixD z = logits.cast<double>();
  Rng rng(9);
  const int n = 40000;
  std::vector<int> counts(4, 0);
  std::vector<std::int32_t> action(1);
  for (int k = 0; k < n; ++k) {
    Categorical::sample(logits, action, rng);
    ++counts[static_cast<std::size_t>(action[0])];
  }
  for (Eigen::Index a = 0; a < 4; ++a) {
    const double p = std::exp(ref_log_softmax(z, 0, a));
    const double sd = std::sqrt(p * (1 - p) / n);
    CHECK(std::abs(counts[static_cast<std::size_t>(a)] / static_cast<double>(n) - p) < 5 * sd);
  }
}

TEST_CASE("DiagGaussian: log-probability, entropy, gradients and samples") {
  Rng rng(5);
  const Matrix mean = random_matrix(5, 3, -2, 2, rng);
  const Matrix log_std = random_matrix(5, 3, -1.5, 0.8, rng);
  const Matrix x = random_matrix(5, 3, -3, 3, rng);
  const Eigen::VectorXf g = random_vector(5, rng);
  const MatrixD m = mean.cast<double>(), s = log_std.cast<double>(), xd = x.cast<double>();

  const Eigen::VectorXf lp = DiagGaussian::log_prob(mean, log_std, x);
  const Eigen::VectorXf h = DiagGaussian::entropy(log_std);
  for (Eigen::Index i = 0; i < 5; ++i) {
    CHECK(lp(i) == doctest::Approx(ref_gaussian_log_prob(m, s, xd, i)).epsilon(1e-5));
    CHECK(h(i) == doctest::Approx(ref_gaussian_entropy(s, i)).epsilon(1e-5));
  }

  Matrix grad_mean(5, 3), grad_log_std(5, 3);
  DiagGaussian::log_prob_backward(mean, log_std, x, g, grad_mean, grad_log_std);
  check_close(grad_mean,
              numeric_gradient([&](const MatrixD& v,
                                   Eigen::Index i) { return ref_gaussian_log_prob(v, s, xd, i); },
                               mean, g));
  check_close(grad_log_std,
              numeric_gradient([&](const MatrixD& v,
                                   Eigen::Index i) { return ref_gaussian_log_prob(m, v, xd, i); },
                               log_std, g));
  DiagGaussian::entropy_backward(g, grad_log_std);
  check_close(grad_log_std, numeric_gradient(ref_gaussian_entropy, log_std, g));

  Matrix mode(5, 3);
  DiagGaussian::mode(mean, mode);
  CHECK(mode == mean);

  // Samples: per-dimension mean and standard deviation of 20000 draws of one row.
  const int n = 20000;
  Matrix one_mean = mean.topRows(1), one_log_std = log_std.topRows(1), draw(1, 3);
  Eigen::ArrayXd sum = Eigen::ArrayXd::Zero(3), squares = Eigen::ArrayXd::Zero(3);
  for (int k = 0; k < n; ++k) {
    DiagGaussian::sample(one_mean, one_log_std, draw, rng);
    const Eigen::ArrayXd v = draw.row(0).transpose().cast<double>().array();
    sum += v;
    squares += v.square();
  }
  for (Eigen::Index d = 0; d < 3; ++d) {
    const double sd = std::exp(static_cast<double>(log_std(0, d)));
    const double sample_mean = sum(d) / n;
    CHECK(std::abs(sample_mean - mean(0, d)) < 5 * sd / std::sqrt(n));
    const double sample_sd = std::sqrt(squares(d) / n - sample_mean * sample_mean);
    CHECK(sample_sd == doctest::Approx(sd).epsilon(0.03));
  }
  CHECK_THROWS_WITH_AS(DiagGaussian::log_prob(mean, log_std.leftCols(2), x),
                       doctest::Contains("log_std is [5, 2]"), Error);
}

TEST_CASE("TanhGaussian: the change-of-variables density, stable at large |u|, integrating to 1") {
  Rng rng(7);
  const Matrix mean = random_matrix(4, 2, -1, 1, rng);
  const Matrix log_std = random_matrix(4, 2, -1, 0.5, rng);
  const Matrix u = random_matrix(4, 2, -3, 3, rng);
  const MatrixD m = mean.cast<double>(), s = log_std.cast<double>(), ud = u.cast<double>();
  const Eigen::VectorXf lp = TanhGaussian::log_prob(mean, log_std, u);
  for (Eigen::Index i = 0; i < 4; ++i)
    CHECK(lp(i) == doctest::Approx(ref_tanh_log_prob(m, s, ud, i)).epsilon(1e-4));

  // log(1 - tanh(u)^2) where float's tanh has rounded to 1: the stable form against float64's.
  for (const float x : {0.0f, 0.3f, -2.0f, 9.5f, -15.0f, 40.0f}) {
    const double reference = std::log(1.0 - std::pow(std::tanh(static_cast<double>(x)), 2.0));
    const double expected = std::abs(x) > 15 ? 2 * (std::log(2.0) - std::abs(x)) : reference;
    CAPTURE(x);
    CHECK(std::isfinite(log_one_minus_tanh_squared(x)));
    CHECK(log_one_minus_tanh_squared(x) == doctest::Approx(expected).epsilon(1e-5));
  }

  // One dimension: the density of a = tanh(u) over (-1, 1) integrates to 1 (midpoint rule in a).
  Matrix m1(1, 1), s1(1, 1), u1(1, 1);
  m1 << 0.4f;
  s1 << -0.3f;
  const int cells = 200000;
  double integral = 0.0;
  for (int k = 0; k < cells; ++k) {
    const double a = -1.0 + (k + 0.5) * 2.0 / cells;
    u1(0, 0) = static_cast<float>(std::atanh(a));
    integral += std::exp(static_cast<double>(TanhGaussian::log_prob(m1, s1, u1)(0))) * 2.0 / cells;
  }
  CHECK(integral == doctest::Approx(1.0).epsilon(1e-3));

  Matrix actions(4, 2);
  TanhGaussian::squash(u, actions);
  CHECK(actions.isApprox(u.array().tanh().matrix()));
}

TEST_CASE("TanhGaussian: gradients, and the entropy estimate's mean is the entropy") {
  Rng rng(11);
  const Matrix mean = random_matrix(4, 3, -1, 1, rng);
  const Matrix log_std = random_matrix(4, 3, -1, 0.3, rng);
  const Matrix u = random_matrix(4, 3, -2, 2, rng);
  const Matrix noise = random_matrix(4, 3, -2, 2, rng);
  const Eigen::VectorXf g = random_vector(4, rng);
  const MatrixD m = mean.cast<double>(), s = log_std.cast<double>(), ud = u.cast<double>(),
                z = noise.cast<double>();

  Matrix grad_mean(4, 3), grad_log_std(4, 3);
  TanhGaussian::log_prob_backward(mean, log_std, u, g, grad_mean, grad_log_std);
  check_close(grad_mean,
              numeric_gradient(
                  [&](const MatrixD& v, Eigen::Index i) { return ref_tanh_log_prob(v, s, ud, i); },
                  mean, g));
  check_close(grad_log_std,
              numeric_gradient(
                  [&](const MatrixD& v, Eigen::Index i) { return ref_tanh_log_prob(m, v, ud, i); },
                  log_std, g));

  const Eigen::VectorXf estimate = TanhGaussian::entropy_estimate(mean, log_std, noise);
  for (Eigen::Index i = 0; i < 4; ++i)
    CHECK(estimate(i) == doctest::Approx(ref_tanh_entropy_estimate(m, s, z, i)).epsilon(1e-4));
  TanhGaussian::entropy_estimate_backward(mean, log_std, noise, g, grad_mean, grad_log_std);
  check_close(grad_mean, numeric_gradient(
                             [&](const MatrixD& v, Eigen::Index i) {
                               return ref_tanh_entropy_estimate(v, s, z, i);
                             },
                             mean, g));
  check_close(grad_log_std, numeric_gradient(
                                [&](const MatrixD& v, Eigen::Index i) {
                                  return ref_tanh_entropy_estimate(m, v, z, i);
                                },
                                log_std, g));

  // The estimate averaged over noise against -E[log p(a)] from independent samples (float64).
  Matrix m1 = mean.topRows(1), s1 = log_std.topRows(1), z1(1, 3), u1(1, 3);
  const MatrixD m1d = m1.cast<double>(), s1d = s1.cast<double>();
  const int n = 40000;
  double estimates = 0.0, monte_carlo = 0.0;
  for (int k = 0; k < n; ++k) {
    for (Eigen::Index d = 0; d < 3; ++d) z1(0, d) = static_cast<float>(rng.normal());
    estimates += TanhGaussian::entropy_estimate(m1, s1, z1)(0);
    TanhGaussian::sample(m1, s1, u1, rng);
    monte_carlo -= ref_tanh_log_prob(m1d, s1d, u1.cast<double>(), 0);
  }
  CHECK(estimates / n == doctest::Approx(monte_carlo / n).epsilon(0.02));
}

}  // namespace test_distributions
