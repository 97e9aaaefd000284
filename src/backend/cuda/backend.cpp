// cuda::Backend's whole-tensor operations: reductions, optimizer updates, the dueling head.
#include "seedrl/backend/cuda/backend.hpp"

#include <array>

#include "cuda_util.hpp"
#include "kernels.hpp"

namespace seedrl::cuda {
namespace {

float* f32(const Tensor& t, const char* what) {
  SEEDRL_REQUIRE(t.defined() && t.dtype() == DType::f32 && t.device() == Device::cuda, what,
                 ": expected a defined f32 CUDA tensor");
  return static_cast<float*>(t.raw_data());
}

template <class... Rest>
std::array<float*, 1 + sizeof...(Rest)> f32_same_size(const char* what, const Tensor& first,
                                                      const Rest&... rest) {
  SEEDRL_REQUIRE(((rest.numel() == first.numel()) && ...), what, ": tensor sizes differ (first is ",
                 first.shape(), ")");
  return {f32(first, what), f32(rest, what)...};
}

// Optimizer steps end here, so parameters are complete for readers on other threads' streams.
void finish_update() {
  SEEDRL_CUDA_CHECK(cudaStreamSynchronize(detail::stream()));
}

}  // namespace

double Backend::sum_of_squares(const Tensor& x) {
  const float* p = f32(x, "sum_of_squares");
  const Tensor result = Tensor::empty({2}, DType::f32, Device::cuda);  // one zeroed double
  double* d = static_cast<double*>(result.raw_data());
  kernels::sum_of_squares(p, x.numel(), d, detail::stream());
  double host = 0.0;
  SEEDRL_CUDA_CHECK(
      cudaMemcpyAsync(&host, d, sizeof(double), cudaMemcpyDeviceToHost, detail::stream()));
  SEEDRL_CUDA_CHECK(cudaStreamSynchronize(detail::stream()));
  return host;
}

void Backend::scale(const Tensor& x, float factor) {
  kernels::scale(f32(x, "scale"), x.numel(), factor, detail::stream());
}

void Backend::add_to(const Tensor& dst, const Tensor& src) {
  const auto [d, s] = f32_same_size("add_to", dst, src);
  kernels::add_to(d, s, dst.numel(), detail::stream());
}

void Backend::adam_update(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v,
                          const nn::AdamStep& step) {
  const auto [p, g, mp, vp] = f32_same_size("adam_update", param, grad, m, v);
  kernels::adam(p, g, mp, vp, param.numel(), step, detail::stream());
  finish_update();
}

void Backend::rmsprop_update(const Tensor& param, const Tensor& grad, const Tensor& mean_square,
                             const Tensor& mean_grad, const Tensor& mom,
                             const nn::RmsPropStep& step) {
  const auto [p, g, ms, mg, mo] =
      f32_same_size("rmsprop_update", param, grad, mean_square, mean_grad, mom);
  kernels::rmsprop(p, g, ms, mg, mo, param.numel(), step, detail::stream());
  finish_update();
}

void Backend::sgd_update(const Tensor& param, const Tensor& grad, const Tensor& buf,
                         const nn::SgdStep& step) {
  const auto [p, g, b] = f32_same_size("sgd_update", param, grad, buf);
  kernels::sgd(p, g, b, param.numel(), step, detail::stream());
  finish_update();
}

void Backend::dueling_forward(const Tensor& value, const Tensor& advantage, const Tensor& q) {
  SEEDRL_REQUIRE(
      advantage.rank() == 2 && q.shape() == advantage.shape() && value.numel() == advantage.dim(0),
      "dueling_forward: value [N, 1], advantage and q [N, A] expected, got ", value.shape(), ", ",
      advantage.shape(), ", ", q.shape());
  kernels::dueling_forward(f32(value, "dueling_forward"), f32(advantage, "dueling_forward"),
                           f32(q, "dueling_forward"), advantage.dim(0), advantage.dim(1),
                           detail::stream());
}

void Backend::dueling_backward(const Tensor& grad_q, const Tensor& grad_value,
                               const Tensor& grad_advantage) {
  SEEDRL_REQUIRE(grad_q.rank() == 2 && grad_advantage.shape() == grad_q.shape() &&
                     grad_value.numel() == grad_q.dim(0),
                 "dueling_backward: grad_q and grad_advantage [N, A], grad_value [N, 1] expected, "
                 "got ",
                 grad_q.shape(), ", ", grad_advantage.shape(), ", ", grad_value.shape());
  kernels::dueling_backward(f32(grad_q, "dueling_backward"), f32(grad_value, "dueling_backward"),
                            f32(grad_advantage, "dueling_backward"), grad_q.dim(0), grad_q.dim(1),
                            detail::stream());
}

}  // namespace seedrl::cuda
