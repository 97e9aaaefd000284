// The layer normalisation kernels of the CUDA backend: a block per row for the moments and the
// input gradient (shared-memory reductions in double, as the CPU backend accumulates), a thread
// per feature for the scale and shift gradients.
#include "cuda_util.hpp"
#include "kernels.hpp"

namespace seedrl::cuda::kernels {
namespace {

constexpr unsigned kRowThreads = 256;

// The sum of `value` over the block, returned to every thread (blockDim.x == kRowThreads).
__device__ double block_sum(double value, double* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (unsigned stride = kRowThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
    __syncthreads();
  }
  const double total = shared[0];
  __syncthreads();  // shared is reused by the next reduction
  return total;
}

__global__ void layer_norm_forward_kernel(const float* x, const float* gamma, const float* beta,
                                          float* y, float* mean, float* rstd, std::int64_t f,
                                          float eps) {
  __shared__ double shared[kRowThreads];
  const std::int64_t r = blockIdx.x;
  const float* row = x + r * f;
  double sum = 0.0;
  for (std::int64_t i = threadIdx.x; i < f; i += kRowThreads) sum += row[i];
  const double mu = block_sum(sum, shared) / static_cast<double>(f);
  double squares = 0.0;
  for (std::int64_t i = threadIdx.x; i < f; i += kRowThreads) {
    const double d = row[i] - mu;
    squares += d * d;
  }
  const double inv = rsqrt(block_sum(squares, shared) / static_cast<double>(f) + eps);
  const float m = static_cast<float>(mu), s = static_cast<float>(inv);
  if (threadIdx.x == 0) {
    mean[r] = m;
    rstd[r] = s;
  }
  for (std::int64_t i = threadIdx.x; i < f; i += kRowThreads)
    y[r * f + i] = gamma[i] * ((row[i] - m) * s) + beta[i];
}

__global__ void layer_norm_input_grad_kernel(const float* x, const float* gy, const float* gamma,
                                             const float* mean, const float* rstd, float* gx,
                                             std::int64_t f) {
  __shared__ double shared[kRowThreads];
  const std::int64_t r = blockIdx.x;
  const float* row = x + r * f;
  const float* grow = gy + r * f;
  const float m = mean[r], s = rstd[r];
  double sum_g = 0.0, sum_gx = 0.0;
  for (std::int64_t i = threadIdx.x; i < f; i += kRowThreads) {
    const double g = grow[i] * gamma[i];
    sum_g += g;
    sum_gx += g * ((row[i] - m) * s);
  }
  const float mean_g = static_cast<float>(block_sum(sum_g, shared) / static_cast<double>(f));
  const float mean_gx = static_cast<float>(block_sum(sum_gx, shared) / static_cast<double>(f));
  for (std::int64_t i = threadIdx.x; i < f; i += kRowThreads) {
    const float xhat = (row[i] - m) * s;
    gx[r * f + i] = s * (grow[i] * gamma[i] - mean_g - xhat * mean_gx);
  }
}

__global__ void layer_norm_param_grad_kernel(const float* x, const float* gy, const float* mean,
                                             const float* rstd, float* dgamma, float* dbeta,
                                             std::int64_t rows, std::int64_t f) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= f) return;
  float sum_gamma = 0.0f, sum_beta = 0.0f;
  for (std::int64_t r = 0; r < rows; ++r) {
    const float g = gy[r * f + i];
    sum_gamma += g * ((x[r * f + i] - mean[r]) * rstd[r]);
    sum_beta += g;
  }
  dgamma[i] = sum_gamma;
  dbeta[i] = sum_beta;
}

}  // namespace

void layer_norm_forward(const float* x, const float* gamma, const float* beta, float* y,
                        float* mean, float* rstd, std::int64_t rows, std::int64_t f, float eps,
                        cudaStream_t stream) {
  if (rows <= 0) return;
  layer_norm_forward_kernel<<<static_cast<unsigned>(rows), kRowThreads, 0, stream>>>(
      x, gamma, beta, y, mean, rstd, f, eps);
  SEEDRL_CUDA_CHECK(cudaGetLastError());
}

void layer_norm_backward(const float* x, const float* gy, const float* gamma, const float* mean,
                         const float* rstd, float* gx, float* dgamma, float* dbeta,
                         std::int64_t rows, std::int64_t f, cudaStream_t stream) {
  constexpr unsigned threads = 128;
  layer_norm_param_grad_kernel<<<detail::blocks_for(f, threads), threads, 0, stream>>>(
      x, gy, mean, rstd, dgamma, dbeta, rows, f);
  SEEDRL_CUDA_CHECK(cudaGetLastError());
  if (gx == nullptr || rows <= 0) return;
  layer_norm_input_grad_kernel<<<static_cast<unsigned>(rows), kRowThreads, 0, stream>>>(
      x, gy, gamma, mean, rstd, gx, f);
  SEEDRL_CUDA_CHECK(cudaGetLastError());
}

}  // namespace seedrl::cuda::kernels
