// The CPU backend's element-wise kernels and thread control.
#include "seedrl/backend/cpu/backend.hpp"

#include <omp.h>

namespace seedrl::cpu {
namespace {

constexpr std::int64_t kParallelThreshold = 32768;

float* f32(const Tensor& t, const char* what) {
  SEEDRL_REQUIRE(t.defined() && t.dtype() == DType::f32 && t.device() == Device::cpu, what,
                 ": expected a defined f32 CPU tensor");
  return t.data<float>();
}

void require_same_size(const Tensor& a, const Tensor& b, const char* what) {
  SEEDRL_REQUIRE(a.numel() == b.numel(), what, ": sizes differ (", a.shape(), " vs ", b.shape(),
                 ")");
}

}  // namespace

void set_num_threads(int n) {
  SEEDRL_REQUIRE(n >= 1, "set_num_threads: thread count must be >= 1, got ", n);
  omp_set_num_threads(n);
}

int num_threads() {
  return omp_get_max_threads();
}

double Backend::sum_of_squares(const Tensor& x) {
  const float* p = f32(x, "sum_of_squares");
  const std::int64_t n = x.numel();
  double total = 0.0;
#pragma omp parallel for simd reduction(+ : total) schedule(static) if (n > kParallelThreshold)
  for (std::int64_t i = 0; i < n; ++i) total += static_cast<double>(p[i]) * p[i];
  return total;
}

void Backend::scale(const Tensor& x, float factor) {
  float* p = f32(x, "scale");
  const std::int64_t n = x.numel();
#pragma omp parallel for simd schedule(static) if (n > kParallelThreshold)
  for (std::int64_t i = 0; i < n; ++i) p[i] *= factor;
}

void Backend::add_to(const Tensor& dst, const Tensor& src) {
  require_same_size(dst, src, "add_to");
  float* d = f32(dst, "add_to destination");
  const float* s = f32(src, "add_to source");
  const std::int64_t n = dst.numel();
#pragma omp parallel for simd schedule(static) if (n > kParallelThreshold)
  for (std::int64_t i = 0; i < n; ++i) d[i] += s[i];
}

void Backend::adam_update(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v,
                          const nn::AdamStep& step) {
  require_same_size(param, grad, "adam_update");
  require_same_size(param, m, "adam_update");
  require_same_size(param, v, "adam_update");
  float* p = f32(param, "adam_update");
  const float* g = f32(grad, "adam_update");
  float* mp = f32(m, "adam_update");
  float* vp = f32(v, "adam_update");
  const std::int64_t n = param.numel();
#pragma omp parallel for simd schedule(static) if (n > kParallelThreshold)
  for (std::int64_t i = 0; i < n; ++i) nn::adam_element(p[i], g[i], mp[i], vp[i], step);
}

void Backend::rmsprop_update(const Tensor& param, const Tensor& grad, const Tensor& mean_square,
                             const Tensor& mean_grad, const Tensor& mom,
                             const nn::RmsPropStep& step) {
  require_same_size(param, grad, "rmsprop_update");
  require_same_size(param, mean_square, "rmsprop_update");
  require_same_size(param, mean_grad, "rmsprop_update");
  require_same_size(param, mom, "rmsprop_update");
  float* p = f32(param, "rmsprop_update");
  const float* g = f32(grad, "rmsprop_update");
  float* ms = f32(mean_square, "rmsprop_update");
  float* mg = f32(mean_grad, "rmsprop_update");
  float* mo = f32(mom, "rmsprop_update");
  const std::int64_t n = param.numel();
#pragma omp parallel for simd schedule(static) if (n > kParallelThreshold)
  for (std::int64_t i = 0; i < n; ++i) nn::rmsprop_element(p[i], g[i], ms[i], mg[i], mo[i], step);
}

void Backend::sgd_update(const Tensor& param, const Tensor& grad, const Tensor& buf,
                         const nn::SgdStep& step) {
  require_same_size(param, grad, "sgd_update");
  require_same_size(param, buf, "sgd_update");
  float* p = f32(param, "sgd_update");
  const float* g = f32(grad, "sgd_update");
  float* b = f32(buf, "sgd_update");
  const std::int64_t n = param.numel();
#pragma omp parallel for simd schedule(static) if (n > kParallelThreshold)
  for (std::int64_t i = 0; i < n; ++i) nn::sgd_element(p[i], g[i], b[i], step);
}

}  // namespace seedrl::cpu
