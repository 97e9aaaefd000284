// Parameter initialisation schemes of the common frameworks, drawn from a seeded Rng.
#pragma once

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
void initialize(float* data, const Shape& shape, const Init& init, std::int64_t fan_in,
                std::int64_t fan_out, Rng& rng);

}  // namespace seedrl::nn
