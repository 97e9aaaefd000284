// Parameter initialisation schemes of the common frameworks, drawn from a seeded Rng.
#pragma once

#include <Eigen/Dense>
#include <cmath>
#include <cstdint>

#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/core/shape.hpp"

namespace seedrl::nn {

/// How a parameter tensor is filled when its store is finalised. Fan-in and fan-out follow the
/// PyTorch convention for a weight of shape [out, in, kernel...]: fan_in = in * kernel area,
/// fan_out = out * kernel area.
struct Init {
  enum class Kind {
    zeros,
    constant,         ///< every element = value
    uniform,          ///< U(-value, value)
    fan_in_uniform,   ///< U(-1/sqrt(fan_in), 1/sqrt(fan_in)): PyTorch's Linear/Conv/LSTM default
    xavier_uniform,   ///< U(-a, a), a = value * sqrt(6 / (fan_in + fan_out))
    kaiming_uniform,  ///< U(-a, a), a = value * sqrt(3 / fan_in) (value is the gain, sqrt 2 for
                      ///< ReLU)
    orthogonal,       ///< value * a random orthogonal matrix over [dim 0, rest] (Saxe et al. 2014)
  };
  Kind kind = Kind::fan_in_uniform;
  double value = 0.0;

  static Init zeros() { return {Kind::zeros, 0.0}; }
  static Init constant(double v) { return {Kind::constant, v}; }
  static Init uniform(double bound) { return {Kind::uniform, bound}; }
  static Init fan_in_uniform() { return {Kind::fan_in_uniform, 0.0}; }
  static Init xavier_uniform(double gain = 1.0) { return {Kind::xavier_uniform, gain}; }
  static Init kaiming_uniform(double gain = std::sqrt(2.0)) {
    return {Kind::kaiming_uniform, gain};
  }
  static Init orthogonal(double gain = 1.0) { return {Kind::orthogonal, gain}; }
};

/// Fills `data` (row-major, `shape`) according to `init`.
inline void initialize(float* data, const Shape& shape, const Init& init, std::int64_t fan_in,
                       std::int64_t fan_out, Rng& rng) {
  const std::int64_t n = shape.numel();
  auto fill_uniform = [&](double bound) {
    for (std::int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(rng.uniform(-bound, bound));
  };
  switch (init.kind) {
    case Init::Kind::zeros:
      for (std::int64_t i = 0; i < n; ++i) data[i] = 0.0f;
      return;
    case Init::Kind::constant:
      for (std::int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(init.value);
      return;
    case Init::Kind::uniform:
      fill_uniform(init.value);
      return;
    case Init::Kind::fan_in_uniform:
      SEEDRL_REQUIRE(fan_in > 0, "Init::fan_in_uniform: fan_in must be positive for ", shape);
      fill_uniform(1.0 / std::sqrt(static_cast<double>(fan_in)));
      return;
    case Init::Kind::xavier_uniform:
      SEEDRL_REQUIRE(fan_in + fan_out > 0, "Init::xavier_uniform: zero fans for ", shape);
      fill_uniform(init.value * std::sqrt(6.0 / static_cast<double>(fan_in + fan_out)));
      return;
    case Init::Kind::kaiming_uniform:
      SEEDRL_REQUIRE(fan_in > 0, "Init::kaiming_uniform: fan_in must be positive for ", shape);
      fill_uniform(init.value * std::sqrt(3.0 / static_cast<double>(fan_in)));
      return;
    case Init::Kind::orthogonal: {
      SEEDRL_REQUIRE(shape.rank() >= 1 && n > 0, "Init::orthogonal: needs a non-empty matrix, got ",
                     shape);
      const std::int64_t rows = shape.rank() == 1 ? 1 : shape[0];
      const std::int64_t cols = n / rows;
      const Eigen::Index tall = std::max(rows, cols), wide = std::min(rows, cols);
      Eigen::MatrixXd gaussian(tall, wide);
      for (Eigen::Index j = 0; j < wide; ++j)
        for (Eigen::Index i = 0; i < tall; ++i) gaussian(i, j) = rng.normal();
      Eigen::HouseholderQR<Eigen::MatrixXd> qr(gaussian);
      Eigen::MatrixXd q = qr.householderQ() * Eigen::MatrixXd::Identity(tall, wide);
      // Make the decomposition unique (and the distribution uniform) as Mezzadri (2007) does.
      const Eigen::MatrixXd r = qr.matrixQR().topRows(wide).triangularView<Eigen::Upper>();
      for (Eigen::Index j = 0; j < wide; ++j)
        if (r(j, j) < 0) q.col(j) *= -1.0;
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j) {
          const double v = rows >= cols ? q(i, j) : q(j, i);
          data[i * cols + j] = static_cast<float>(init.value * v);
        }
      return;
    }
  }
}

}  // namespace seedrl::nn
