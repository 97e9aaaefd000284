// cpu::LayerNorm: each row normalised in one pass for its moments and one for the output, the
// rows split over the OpenMP team when the batch is large. The moments accumulate in double, so
// a row of large, nearly equal values keeps its variance.
#include "seedrl/backend/cpu/layer_norm.hpp"

#include <omp.h>

#include <cmath>

#include "seedrl/core/scratch_buffer.hpp"

#include "../layer_definitions.hpp"
#include "element_loops.hpp"

namespace seedrl::backend {

using namespace cpu::detail;

template <>
struct LayerNormKernels<Device::cpu> : LayerNormState {
  ScratchBuffer output_buffer, grad_input_buffer, mean_buffer, rstd_buffer;
  Tensor forward(const Tensor& input, const Shape& out_shape);
  Tensor backward(const Tensor& grad_output, bool input_grad);
};

namespace {
// Rows over the team when the tensor is activation-sized.
template <class F>
void for_each_row(std::int64_t rows, std::int64_t features, F body) {
  if (rows * features >= kElementParallelThreshold && rows > 1) {
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) body(r);
  } else {
    for (std::int64_t r = 0; r < rows; ++r) body(r);
  }
}
}  // namespace

Tensor LayerNormKernels<Device::cpu>::forward(const Tensor& input, const Shape& out_shape) {
  const std::int64_t n = input.dim(0), f = options.features;
  Tensor output = output_buffer.view(out_shape);
  mean = mean_buffer.view({n});
  rstd = rstd_buffer.view({n});
  const float* x = input.data<float>();
  const float* gamma = weight->value.data<float>();
  const float* beta = bias->value.data<float>();
  float* y = output.data<float>();
  float* mean_out = mean.data<float>();
  float* rstd_out = rstd.data<float>();
  const double eps = options.epsilon;
  for_each_row(n, f, [&](std::int64_t r) {
    const float* row = x + r * f;
    double sum = 0.0;
    for (std::int64_t i = 0; i < f; ++i) sum += row[i];
    const double mu = sum / static_cast<double>(f);
    double squares = 0.0;
    for (std::int64_t i = 0; i < f; ++i) {
      const double d = row[i] - mu;
      squares += d * d;
    }
    const double inv = 1.0 / std::sqrt(squares / static_cast<double>(f) + eps);
    mean_out[r] = static_cast<float>(mu);
    rstd_out[r] = static_cast<float>(inv);
    const float m = static_cast<float>(mu), s = static_cast<float>(inv);
    float* out = y + r * f;
    for (std::int64_t i = 0; i < f; ++i) out[i] = gamma[i] * ((row[i] - m) * s) + beta[i];
  });
  return output;
}

// With x^ = (x - mean) * rstd and g = dy * gamma:
//   dgamma = sum over rows of dy x^,  dbeta = sum over rows of dy,
//   dx = rstd (g - mean(g) - x^ mean(g x^)), the means over the row.
Tensor LayerNormKernels<Device::cpu>::backward(const Tensor& grad_output, bool input_grad) {
  const std::int64_t n = saved_input.dim(0), f = options.features;
  const float* x = saved_input.data<float>();
  const float* dy = grad_output.data<float>();
  const float* gamma = weight->value.data<float>();
  const float* mu = mean.data<float>();
  const float* inv = rstd.data<float>();
  float* dgamma = weight->grad.data<float>();
  float* dbeta = bias->grad.data<float>();
  for (std::int64_t i = 0; i < f; ++i) dgamma[i] = dbeta[i] = 0.0f;
  for (std::int64_t r = 0; r < n; ++r) {
    const float* row = x + r * f;
    const float* drow = dy + r * f;
    for (std::int64_t i = 0; i < f; ++i) {
      dgamma[i] += drow[i] * ((row[i] - mu[r]) * inv[r]);
      dbeta[i] += drow[i];
    }
  }
  if (!input_grad) return {};
  Tensor grad_input = grad_input_buffer.view(saved_input.shape());
  float* dx = grad_input.data<float>();
  for_each_row(n, f, [&](std::int64_t r) {
    const float* row = x + r * f;
    const float* drow = dy + r * f;
    double sum_g = 0.0, sum_gx = 0.0;
    for (std::int64_t i = 0; i < f; ++i) {
      const double g = drow[i] * gamma[i];
      sum_g += g;
      sum_gx += g * ((row[i] - mu[r]) * inv[r]);
    }
    const float mean_g = static_cast<float>(sum_g / static_cast<double>(f));
    const float mean_gx = static_cast<float>(sum_gx / static_cast<double>(f));
    float* out = dx + r * f;
    for (std::int64_t i = 0; i < f; ++i) {
      const float xhat = (row[i] - mu[r]) * inv[r];
      out[i] = inv[r] * (drow[i] * gamma[i] - mean_g - xhat * mean_gx);
    }
  });
  return grad_input;
}

}  // namespace seedrl::backend

template class seedrl::backend::LayerNorm<seedrl::Device::cpu>;
