// Independent double-precision reference implementations of the layers, written as plain loops
// straight from the definitions, plus central finite differences. Tests compare seedrl's f32
// layers to these: forward values directly, gradients against finite differences of the
// reference (exact up to O(h^2) in double precision).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "seedrl/core/random.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/nn/layer_options.hpp"

namespace seedrl::test {

using Vec = std::vector<double>;
using Index = std::int64_t;

inline Vec to_vec(const Tensor& t) {
  Vec out(static_cast<std::size_t>(t.numel()));
  if (t.dtype() == DType::f32) {
    for (Index i = 0; i < t.numel(); ++i) out[static_cast<std::size_t>(i)] = t.data<float>()[i];
  } else {
    for (Index i = 0; i < t.numel(); ++i)
      out[static_cast<std::size_t>(i)] = t.data<std::uint8_t>()[i];
  }
  return out;
}

inline Tensor to_tensor(const Vec& v, const Shape& shape) {
  Tensor t = Tensor::empty(shape);
  for (Index i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = static_cast<float>(v[static_cast<std::size_t>(i)]);
  return t;
}

/// Uniform values in [low, high), rounded to f32 so both sides see exactly the same numbers.
inline Vec random_vec(Index n, Rng& rng, double low = -1.0, double high = 1.0) {
  Vec v(static_cast<std::size_t>(n));
  for (double& x : v) x = static_cast<float>(rng.uniform(low, high));
  return v;
}

inline double relu(double x) {
  return x > 0.0 ? x : 0.0;
}
inline double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

/// y[n, o] = act(sum_i x[n, i] w[o, i] + b[o]).
/// act(x W^T + b); `act` as nn::Activation: none, relu or tanh.
inline Vec linear_ref(const Vec& x, Index n, Index in, Index out, const Vec& w, const Vec* b,
                      nn::Activation act) {
  Vec y(static_cast<std::size_t>(n * out));
  for (Index r = 0; r < n; ++r)
    for (Index o = 0; o < out; ++o) {
      double acc = b ? (*b)[static_cast<std::size_t>(o)] : 0.0;
      for (Index i = 0; i < in; ++i)
        acc += x[static_cast<std::size_t>(r * in + i)] * w[static_cast<std::size_t>(o * in + i)];
      y[static_cast<std::size_t>(r * out + o)] = act == nn::Activation::relu   ? relu(acc)
                                                 : act == nn::Activation::tanh ? std::tanh(acc)
                                                                               : acc;
    }
  return y;
}

struct ConvGeometry {
  Index n, h, w, in_c, out_c, kernel, stride, padding;
  Index out_h() const { return (h + 2 * padding - kernel) / stride + 1; }
  Index out_w() const { return (w + 2 * padding - kernel) / stride + 1; }
};

/// NHWC convolution with weights [out_c, in_c, k, k], zero padding.
inline Vec conv2d_ref(const Vec& x, const ConvGeometry& g, const Vec& weights, const Vec* bias,
                      bool use_relu) {
  const Index oh = g.out_h(), ow = g.out_w();
  Vec y(static_cast<std::size_t>(g.n * oh * ow * g.out_c));
  for (Index n = 0; n < g.n; ++n)
    for (Index i = 0; i < oh; ++i)
      for (Index j = 0; j < ow; ++j)
        for (Index o = 0; o < g.out_c; ++o) {
          double acc = bias ? (*bias)[static_cast<std::size_t>(o)] : 0.0;
          for (Index c = 0; c < g.in_c; ++c)
            for (Index ki = 0; ki < g.kernel; ++ki)
              for (Index kj = 0; kj < g.kernel; ++kj) {
                const Index y_in = i * g.stride + ki - g.padding;
                const Index x_in = j * g.stride + kj - g.padding;
                if (y_in < 0 || y_in >= g.h || x_in < 0 || x_in >= g.w) continue;
                acc += x[static_cast<std::size_t>(((n * g.h + y_in) * g.w + x_in) * g.in_c + c)] *
                       weights[static_cast<std::size_t>(
                           ((o * g.in_c + c) * g.kernel + ki) * g.kernel + kj)];
              }
          y[static_cast<std::size_t>(((n * oh + i) * ow + j) * g.out_c + o)] =
              use_relu ? relu(acc) : acc;
        }
  return y;
}

struct LstmRefResult {
  Vec outputs;  // [T, B, H]
  Vec h, c;     // final state [B, H]
};

/// LSTM with gates (i, f, g, o); keep[t * B + b] = 0 zeroes the state of column b before step t.
inline LstmRefResult lstm_ref(const Vec& x, Index steps, Index batch, Index in, Index hidden,
                              const Vec& w_ih, const Vec& w_hh, const Vec& bias, Vec h, Vec c,
                              const std::vector<double>& keep) {
  LstmRefResult r;
  r.outputs.resize(static_cast<std::size_t>(steps * batch * hidden));
  auto at = [](const Vec& v, Index i) { return v[static_cast<std::size_t>(i)]; };
  for (Index t = 0; t < steps; ++t) {
    Vec h_new(h.size()), c_new(c.size());
    for (Index b = 0; b < batch; ++b) {
      const double k = keep[static_cast<std::size_t>(t * batch + b)];
      for (Index u = 0; u < hidden; ++u) {
        double a[4];
        for (Index gate = 0; gate < 4; ++gate) {
          const Index row = gate * hidden + u;
          double acc = at(bias, row);
          for (Index i = 0; i < in; ++i)
            acc += at(x, (t * batch + b) * in + i) * at(w_ih, row * in + i);
          for (Index j = 0; j < hidden; ++j)
            acc += k * at(h, b * hidden + j) * at(w_hh, row * hidden + j);
          a[gate] = acc;
        }
        const double ig = sigmoid(a[0]), fg = sigmoid(a[1]), gg = std::tanh(a[2]),
                     og = sigmoid(a[3]);
        const double cell = fg * k * at(c, b * hidden + u) + ig * gg;
        c_new[static_cast<std::size_t>(b * hidden + u)] = cell;
        h_new[static_cast<std::size_t>(b * hidden + u)] = og * std::tanh(cell);
      }
    }
    h = h_new;
    c = c_new;
    std::copy(h.begin(), h.end(),
              r.outputs.begin() + static_cast<std::ptrdiff_t>(t * batch * hidden));
  }
  r.h = h;
  r.c = c;
  return r;
}

/// Central finite differences of f at `x`, in double precision.
inline Vec numeric_gradient(const std::function<double(const Vec&)>& f, Vec x, double step = 1e-6) {
  Vec grad(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + step;
    const double up = f(x);
    x[i] = saved - step;
    const double down = f(x);
    x[i] = saved;
    grad[i] = (up - down) / (2.0 * step);
  }
  return grad;
}

inline double dot(const Vec& a, const Vec& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

/// max_i |a_i - b_i| / max(1, max_i |b_i|): the error measure the gradient checks bound.
inline double relative_error(const Vec& actual, const Vec& expected) {
  double diff = 0.0, scale = 1.0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    diff = std::max(diff, std::abs(actual[i] - expected[i]));
    scale = std::max(scale, std::abs(expected[i]));
  }
  return diff / scale;
}

}  // namespace seedrl::test
