// Element-wise and small reduction kernels of the CUDA backend. The optimizer rules are the
// SEEDRL_HOST_DEVICE functions of nn/update_rules.hpp, shared with the CPU backend.
#include "cuda_util.hpp"
#include "kernels.hpp"

namespace seedrl::cuda::kernels {
namespace {

constexpr unsigned kThreads = 256;

// Grid-stride loop over [0, n).
#define SEEDRL_FOR_EACH(i, n)                                                                      \
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<std::int64_t>(blockDim.x) * gridDim.x)

__device__ inline float sigmoid(float x) {
  return 1.0f / (1.0f + expf(-x));
}

__device__ inline bool is_reset(const void* resets, bool u8, std::int64_t b) {
  if (resets == nullptr) return false;
  return u8 ? static_cast<const unsigned char*>(resets)[b] != 0
            : static_cast<const float*>(resets)[b] != 0.0f;
}

__global__ void fill_kernel(float* x, std::int64_t n, float value) {
  SEEDRL_FOR_EACH(i, n) x[i] = value;
}

__global__ void bias_activation_kernel(float* y, const float* bias, std::int64_t rows,
                                       std::int64_t cols, Act act) {
  SEEDRL_FOR_EACH(i, rows * cols) {
    const float v = y[i] + (bias != nullptr ? bias[i % cols] : 0.0f);
    y[i] = act == Act::relu ? (v < 0.0f ? 0.0f : v) : act == Act::tanh ? tanhf(v) : v;
  }
}

__global__ void tanh_backward_kernel(const float* y, const float* gy, float* gx, std::int64_t n) {
  SEEDRL_FOR_EACH(i, n) gx[i] = gy[i] * (1.0f - y[i] * y[i]);
}

__global__ void relu_forward_kernel(const float* x, float* y, std::int64_t n) {
  SEEDRL_FOR_EACH(i, n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

__global__ void relu_backward_kernel(const float* y, const float* gy, float* gx, std::int64_t n) {
  SEEDRL_FOR_EACH(i, n) gx[i] = y[i] > 0.0f ? gy[i] : 0.0f;
}

template <class T>
__global__ void rescale_kernel(const T* x, bool channels_first, std::int64_t n, std::int64_t c,
                               std::int64_t h, std::int64_t w, float scale, float* y) {
  SEEDRL_FOR_EACH(o, n * h * w * c) {
    std::int64_t src = o;
    if (channels_first) {
      const std::int64_t ci = o % c, wi = o / c % w, hi = o / (c * w) % h, ni = o / (c * w * h);
      src = ((ni * c + ci) * h + hi) * w + wi;
    }
    y[o] = static_cast<float>(x[src]) * scale;
  }
}

__global__ void oihw_to_ohwi_kernel(const float* src, float* dst, std::int64_t o, std::int64_t i,
                                    std::int64_t k, bool forward) {
  SEEDRL_FOR_EACH(idx, o * i * k * k) {
    // idx enumerates [o, i, ky, kx] (OIHW).
    const std::int64_t kx = idx % k, ky = idx / k % k, ii = idx / (k * k) % i,
                       oo = idx / (k * k * i);
    const std::int64_t ohwi = ((oo * k + ky) * k + kx) * i + ii;
    if (forward) {
      dst[ohwi] = src[idx];
    } else {
      dst[idx] = src[ohwi];
    }
  }
}

__global__ void masked_copy_kernel(const float* src, float* dst, const void* resets, bool u8,
                                   std::int64_t batch, std::int64_t hidden) {
  SEEDRL_FOR_EACH(i, batch * hidden) {
    const std::int64_t b = i / hidden;
    dst[i] = (src == nullptr || is_reset(resets, u8, b)) ? 0.0f : src[i];
  }
}

__global__ void zero_reset_rows_kernel(float* x, const void* resets, bool u8, std::int64_t batch,
                                       std::int64_t hidden) {
  SEEDRL_FOR_EACH(i, batch * hidden) {
    if (is_reset(resets, u8, i / hidden)) x[i] = 0.0f;
  }
}

__global__ void lstm_cell_forward_kernel(float* gates, const float* c_prev, float* c, float* h,
                                         std::int64_t batch, std::int64_t hidden) {
  SEEDRL_FOR_EACH(idx, batch * hidden) {
    const std::int64_t b = idx / hidden, j = idx % hidden;
    float* a = gates + b * 4 * hidden;
    const float i = sigmoid(a[j]);
    const float f = sigmoid(a[hidden + j]);
    const float g = tanhf(a[2 * hidden + j]);
    const float o = sigmoid(a[3 * hidden + j]);
    a[j] = i;
    a[hidden + j] = f;
    a[2 * hidden + j] = g;
    a[3 * hidden + j] = o;
    const float cell = f * c_prev[idx] + i * g;
    c[idx] = cell;
    h[idx] = o * tanhf(cell);
  }
}

__global__ void lstm_cell_backward_kernel(const float* gates, const float* c, const float* c_prev,
                                          const float* grad_h, const float* dh_next, float* dc_next,
                                          float* grad_gates, std::int64_t batch,
                                          std::int64_t hidden) {
  SEEDRL_FOR_EACH(idx, batch * hidden) {
    const std::int64_t b = idx / hidden, j = idx % hidden;
    const float* a = gates + b * 4 * hidden;
    float* da = grad_gates + b * 4 * hidden;
    const float i = a[j], f = a[hidden + j], g = a[2 * hidden + j], o = a[3 * hidden + j];
    const float dh = dh_next[idx] + (grad_h != nullptr ? grad_h[idx] : 0.0f);
    const float tanh_c = tanhf(c[idx]);
    const float dc = dh * o * (1.0f - tanh_c * tanh_c) + dc_next[idx];
    da[j] = dc * g * i * (1.0f - i);
    da[hidden + j] = dc * c_prev[idx] * f * (1.0f - f);
    da[2 * hidden + j] = dc * i * (1.0f - g * g);
    da[3 * hidden + j] = dh * tanh_c * o * (1.0f - o);
    dc_next[idx] = dc * f;
  }
}

__global__ void sum_of_squares_kernel(const float* x, std::int64_t n, double* result) {
  __shared__ double partial[kThreads];
  double sum = 0.0;
  SEEDRL_FOR_EACH(i, n) sum += static_cast<double>(x[i]) * x[i];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(result, partial[0]);
}

__global__ void scale_kernel(float* x, std::int64_t n, float factor) {
  SEEDRL_FOR_EACH(i, n) x[i] *= factor;
}

__global__ void add_to_kernel(float* dst, const float* src, std::int64_t n) {
  SEEDRL_FOR_EACH(i, n) dst[i] += src[i];
}

__global__ void adam_kernel(float* p, const float* g, float* m, float* v, std::int64_t n,
                            nn::AdamStep step) {
  SEEDRL_FOR_EACH(i, n) nn::adam_element(p[i], g[i], m[i], v[i], step);
}

__global__ void rmsprop_kernel(float* p, const float* g, float* ms, float* mg, float* mom,
                               std::int64_t n, nn::RmsPropStep step) {
  SEEDRL_FOR_EACH(i, n) nn::rmsprop_element(p[i], g[i], ms[i], mg[i], mom[i], step);
}

__global__ void sgd_kernel(float* p, const float* g, float* buf, std::int64_t n, nn::SgdStep step) {
  SEEDRL_FOR_EACH(i, n) nn::sgd_element(p[i], g[i], buf[i], step);
}

// One thread per row: the action counts are small (Atari: at most 18). Each branch of the row
// is centred on its own mean.
__global__ void dueling_forward_kernel(const float* v, const float* adv, float* q,
                                       std::int64_t rows, std::int64_t actions,
                                       DuelingBranches branches) {
  SEEDRL_FOR_EACH(r, rows) {
    const float* a = adv + r * actions;
    std::int64_t offset = 0;
    for (int b = 0; b < branches.count; ++b) {
      const std::int64_t size = branches.size[b];
      float mean = 0.0f;
      for (std::int64_t k = offset; k < offset + size; ++k) mean += a[k];
      mean /= static_cast<float>(size);
      for (std::int64_t k = offset; k < offset + size; ++k) q[r * actions + k] = v[r] + a[k] - mean;
      offset += size;
    }
  }
}

__global__ void dueling_backward_kernel(const float* gq, float* gv, float* gadv, std::int64_t rows,
                                        std::int64_t actions, DuelingBranches branches) {
  SEEDRL_FOR_EACH(r, rows) {
    const float* g = gq + r * actions;
    float total = 0.0f;
    std::int64_t offset = 0;
    for (int b = 0; b < branches.count; ++b) {
      const std::int64_t size = branches.size[b];
      float sum = 0.0f;
      for (std::int64_t k = offset; k < offset + size; ++k) sum += g[k];
      total += sum;
      const float mean = sum / static_cast<float>(size);
      for (std::int64_t k = offset; k < offset + size; ++k) gadv[r * actions + k] = g[k] - mean;
      offset += size;
    }
    gv[r] = total;
  }
}

#undef SEEDRL_FOR_EACH

// Launches `kernel` over n elements and checks the launch.
template <class Kernel, class... Args>
void launch(Kernel kernel, std::int64_t n, cudaStream_t stream, Args... args) {
  if (n <= 0) return;
  kernel<<<detail::blocks_for(n, kThreads), kThreads, 0, stream>>>(args...);
  SEEDRL_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void fill(float* x, std::int64_t n, float value, cudaStream_t stream) {
  launch(fill_kernel, n, stream, x, n, value);
}
void bias_activation(float* y, const float* bias, std::int64_t rows, std::int64_t cols, Act act,
                     cudaStream_t stream) {
  launch(bias_activation_kernel, rows * cols, stream, y, bias, rows, cols, act);
}
void tanh_backward(const float* y, const float* gy, float* gx, std::int64_t n,
                   cudaStream_t stream) {
  launch(tanh_backward_kernel, n, stream, y, gy, gx, n);
}
void relu_forward(const float* x, float* y, std::int64_t n, cudaStream_t stream) {
  launch(relu_forward_kernel, n, stream, x, y, n);
}
void relu_backward(const float* y, const float* gy, float* gx, std::int64_t n,
                   cudaStream_t stream) {
  launch(relu_backward_kernel, n, stream, y, gy, gx, n);
}
void rescale(const void* x, bool u8, bool channels_first, std::int64_t n, std::int64_t c,
             std::int64_t h, std::int64_t w, float scale, float* y, cudaStream_t stream) {
  if (u8) {
    launch(rescale_kernel<unsigned char>, n * c * h * w, stream,
           static_cast<const unsigned char*>(x), channels_first, n, c, h, w, scale, y);
  } else {
    launch(rescale_kernel<float>, n * c * h * w, stream, static_cast<const float*>(x),
           channels_first, n, c, h, w, scale, y);
  }
}
void oihw_to_ohwi(const float* src, float* dst, std::int64_t o, std::int64_t i, std::int64_t k,
                  cudaStream_t stream) {
  launch(oihw_to_ohwi_kernel, o * i * k * k, stream, src, dst, o, i, k, true);
}
void ohwi_to_oihw(const float* src, float* dst, std::int64_t o, std::int64_t i, std::int64_t k,
                  cudaStream_t stream) {
  launch(oihw_to_ohwi_kernel, o * i * k * k, stream, src, dst, o, i, k, false);
}
void masked_copy(const float* src, float* dst, const void* resets, bool resets_u8,
                 std::int64_t batch, std::int64_t hidden, cudaStream_t stream) {
  launch(masked_copy_kernel, batch * hidden, stream, src, dst, resets, resets_u8, batch, hidden);
}
void zero_reset_rows(float* x, const void* resets, bool resets_u8, std::int64_t batch,
                     std::int64_t hidden, cudaStream_t stream) {
  if (resets == nullptr) return;
  launch(zero_reset_rows_kernel, batch * hidden, stream, x, resets, resets_u8, batch, hidden);
}
void lstm_cell_forward(float* gates, const float* c_prev, float* c, float* h, std::int64_t batch,
                       std::int64_t hidden, cudaStream_t stream) {
  launch(lstm_cell_forward_kernel, batch * hidden, stream, gates, c_prev, c, h, batch, hidden);
}
void lstm_cell_backward(const float* gates, const float* c, const float* c_prev,
                        const float* grad_h, const float* dh_next, float* dc_next,
                        float* grad_gates, std::int64_t batch, std::int64_t hidden,
                        cudaStream_t stream) {
  launch(lstm_cell_backward_kernel, batch * hidden, stream, gates, c, c_prev, grad_h, dh_next,
         dc_next, grad_gates, batch, hidden);
}
void sum_of_squares(const float* x, std::int64_t n, double* result, cudaStream_t stream) {
  launch(sum_of_squares_kernel, n, stream, x, n, result);
}
void scale(float* x, std::int64_t n, float factor, cudaStream_t stream) {
  launch(scale_kernel, n, stream, x, n, factor);
}
void add_to(float* dst, const float* src, std::int64_t n, cudaStream_t stream) {
  launch(add_to_kernel, n, stream, dst, src, n);
}
void adam(float* p, const float* g, float* m, float* v, std::int64_t n, const nn::AdamStep& step,
          cudaStream_t stream) {
  launch(adam_kernel, n, stream, p, g, m, v, n, step);
}
void rmsprop(float* p, const float* g, float* mean_square, float* mean_grad, float* mom,
             std::int64_t n, const nn::RmsPropStep& step, cudaStream_t stream) {
  launch(rmsprop_kernel, n, stream, p, g, mean_square, mean_grad, mom, n, step);
}
void sgd(float* p, const float* g, float* buf, std::int64_t n, const nn::SgdStep& step,
         cudaStream_t stream) {
  launch(sgd_kernel, n, stream, p, g, buf, n, step);
}
void dueling_forward(const float* v, const float* adv, float* q, std::int64_t rows,
                     std::int64_t actions, const DuelingBranches& branches, cudaStream_t stream) {
  launch(dueling_forward_kernel, rows, stream, v, adv, q, rows, actions, branches);
}
void dueling_backward(const float* gq, float* gv, float* gadv, std::int64_t rows,
                      std::int64_t actions, const DuelingBranches& branches, cudaStream_t stream) {
  launch(dueling_backward_kernel, rows, stream, gq, gv, gadv, rows, actions, branches);
}

}  // namespace seedrl::cuda::kernels
