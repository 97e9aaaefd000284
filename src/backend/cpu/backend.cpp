// The CPU backend's element-wise kernels and thread control.
#include "seedrl/backend/cpu/backend.hpp"

#include <omp.h>

#include <algorithm>
#include <array>

#include "../tensor_args.hpp"
#include "element_loops.hpp"
#include "seedrl/core/float_mode.hpp"

namespace seedrl::cpu {
namespace {

constexpr std::int64_t kParallelThreshold = 32768;

constexpr Device kDevice = Device::cpu;
using backend::f32_on;
using backend::f32_same_size;

template <class F>
void for_each_index(std::int64_t n, const F& body) {
  detail::for_each_index(n, kParallelThreshold, body);
}

}  // namespace

void set_num_threads(int n) {
  SEEDRL_REQUIRE(n >= 1, "set_num_threads: thread count must be >= 1, got ", n);
  omp_set_num_threads(n);
  // The team's threads take the calling thread's denormal mode (they may predate it).
  const bool flush = flush_denormals_enabled();
#pragma omp parallel num_threads(n)
  set_flush_denormals(flush);
}

int num_threads() {
  return omp_get_max_threads();
}

ScopedThreads::ScopedThreads(int n) : previous_(omp_get_max_threads()) {
  if (n != previous_) set_num_threads(n);
}

// The team of `previous_` threads kept the denormal mode it had: setting the count back is all.
ScopedThreads::~ScopedThreads() {
  if (omp_get_max_threads() != previous_) omp_set_num_threads(previous_);
}

double Backend::sum_of_squares(const Tensor& x) {
  const float* p = f32_on(kDevice, x, "sum_of_squares");
  const std::int64_t n = x.numel();
  return detail::sum_over_indices(n, kParallelThreshold, [p](std::int64_t i) {
    return static_cast<double>(p[i]) * static_cast<double>(p[i]);
  });
}

void Backend::scale(const Tensor& x, float factor) {
  float* p = f32_on(kDevice, x, "scale");
  for_each_index(x.numel(), [p, factor](std::int64_t i) { p[i] *= factor; });
}

void Backend::add_to(const Tensor& dst, const Tensor& src) {
  const auto ptr = f32_same_size(kDevice, "add_to", dst, src);
  for_each_index(dst.numel(), [d = ptr[0], s = ptr[1]](std::int64_t i) { d[i] += s[i]; });
}

void Backend::weighted_sum(float* out, std::span<const float* const> parts,
                           std::span<const float> weights, float scale, std::int64_t begin,
                           std::int64_t end) {
  SEEDRL_REQUIRE(!parts.empty() && parts.size() == weights.size(),
                 "weighted_sum: one weight per part, got ", parts.size(), " parts and ",
                 weights.size(), " weights");
  // Chunks of a local accumulator, so that `out` is written only after every part's elements
  // were read (it may be one of them), each pass vectorised.
  constexpr std::int64_t kChunk = 512;
  alignas(64) float acc[kChunk];
  for (std::int64_t first = begin; first < end; first += kChunk) {
    const std::int64_t size = std::min(kChunk, end - first);
    float* a = acc;
    const float* p0 = parts[0] + first;
    const float w0 = weights[0];
    detail::each_index_serial(0, size, [a, p0, w0](std::int64_t i) { a[i] = w0 * p0[i]; });
    for (std::size_t k = 1; k < parts.size(); ++k) {
      const float* pk = parts[k] + first;
      const float wk = weights[k];
      detail::each_index_serial(0, size, [a, pk, wk](std::int64_t i) { a[i] += wk * pk[i]; });
    }
    float* o = out + first;
    detail::each_index_serial(0, size, [a, o, scale](std::int64_t i) { o[i] = a[i] * scale; });
  }
}

void Backend::adam_update(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v,
                          const nn::AdamStep& step) {
  const auto ptr = f32_same_size(kDevice, "adam_update", param, grad, m, v);
  // `step` by value: stores through the parameter pointers cannot change it, so its terms are
  // computed once and the loop vectorises.
  for_each_index(param.numel(),
                 [p = ptr[0], g = ptr[1], mp = ptr[2], vp = ptr[3], step](std::int64_t i) {
                   nn::adam_element(p[i], g[i], mp[i], vp[i], step);
                 });
}

void Backend::rmsprop_update(const Tensor& param, const Tensor& grad, const Tensor& mean_square,
                             const Tensor& mean_grad, const Tensor& mom,
                             const nn::RmsPropStep& step) {
  const auto ptr =
      f32_same_size(kDevice, "rmsprop_update", param, grad, mean_square, mean_grad, mom);
  for_each_index(param.numel(), [p = ptr[0], g = ptr[1], ms = ptr[2], mg = ptr[3], mo = ptr[4],
                                 step](std::int64_t i) {
    nn::rmsprop_element(p[i], g[i], ms[i], mg[i], mo[i], step);
  });
}

void Backend::sgd_update(const Tensor& param, const Tensor& grad, const Tensor& buf,
                         const nn::SgdStep& step) {
  const auto ptr = f32_same_size(kDevice, "sgd_update", param, grad, buf);
  for_each_index(param.numel(), [p = ptr[0], g = ptr[1], b = ptr[2], step](std::int64_t i) {
    nn::sgd_element(p[i], g[i], b[i], step);
  });
}

namespace {
// Calls f(offset, size) for each branch of `branches` (one of `width` where it is empty).
template <class F>
void for_each_branch(std::span<const std::int64_t> branches, std::int64_t width, F f) {
  if (branches.empty()) return f(std::int64_t{0}, width);
  std::int64_t offset = 0;
  for (std::int64_t size : branches) {
    f(offset, size);
    offset += size;
  }
  SEEDRL_REQUIRE(offset == width, "dueling: branches of ", offset, " actions for ", width,
                 " columns");
}
}  // namespace

void Backend::dueling_forward(const Tensor& value, const Tensor& advantage, const Tensor& q,
                              std::span<const std::int64_t> branches) {
  const auto v = value.matrix<float>();
  const auto a = advantage.matrix<float>();
  auto out = q.matrix<float>();
  for_each_branch(branches, a.cols(), [&](std::int64_t offset, std::int64_t size) {
    const auto block = a.middleCols(offset, size);
    out.middleCols(offset, size) = (block.colwise() - block.rowwise().mean()).colwise() + v.col(0);
  });
}

void Backend::dueling_backward(const Tensor& grad_q, const Tensor& grad_value,
                               const Tensor& grad_advantage,
                               std::span<const std::int64_t> branches) {
  // dQ_j/dA_k = [j == k] - 1/|branch| within a branch and dQ_j/dV = 1.
  const auto g = grad_q.matrix<float>();
  grad_value.matrix<float>() = g.rowwise().sum();
  auto out = grad_advantage.matrix<float>();
  for_each_branch(branches, g.cols(), [&](std::int64_t offset, std::int64_t size) {
    const auto block = g.middleCols(offset, size);
    out.middleCols(offset, size) = block.colwise() - block.rowwise().mean();
  });
}

}  // namespace seedrl::cpu
