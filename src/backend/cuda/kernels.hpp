// The CUDA backend's own kernels (kernels.cu), launched on the given stream. Pointers are device
// pointers; nothing here synchronises.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "seedrl/nn/update_rules.hpp"

namespace seedrl::cuda::kernels {

void fill(float* x, std::int64_t n, float value, cudaStream_t stream);
/// The activations the kernels fuse (the values of nn::Activation).
enum class Act : int { none = 0, relu = 1, tanh = 2 };
/// y[r, c] = act(y[r, c] + bias[c]) over a row-major [rows, cols] matrix; bias may be null.
void bias_activation(float* y, const float* bias, std::int64_t rows, std::int64_t cols, Act act,
                     cudaStream_t stream);
void relu_forward(const float* x, float* y, std::int64_t n, cudaStream_t stream);
/// gx = gy where y > 0, else 0 (y is the ReLU's output).
void relu_backward(const float* y, const float* gy, float* gx, std::int64_t n, cudaStream_t stream);
/// gx = gy (1 - y^2) (y is the tanh's output).
void tanh_backward(const float* y, const float* gy, float* gx, std::int64_t n, cudaStream_t stream);
/// Image batch [n, c, h, w] (channels_first) or [n, h, w, c], u8 or f32 -> f32 [n, h, w, c] *
/// scale.
void rescale(const void* x, bool u8, bool channels_first, std::int64_t n, std::int64_t c,
             std::int64_t h, std::int64_t w, float scale, float* y, cudaStream_t stream);
/// [o, i, k, k] <-> [o, k, k, i] (cuDNN's NHWC filter layout).
void oihw_to_ohwi(const float* src, float* dst, std::int64_t o, std::int64_t i, std::int64_t k,
                  cudaStream_t stream);
void ohwi_to_oihw(const float* src, float* dst, std::int64_t o, std::int64_t i, std::int64_t k,
                  cudaStream_t stream);

/// dst[b, :] = src[b, :] unless resets[b] is non-zero (then 0); src null means zeros, resets
/// null means no reset. resets are u8 or f32 (resets_u8).
void masked_copy(const float* src, float* dst, const void* resets, bool resets_u8,
                 std::int64_t batch, std::int64_t hidden, cudaStream_t stream);
/// x[b, :] = 0 where resets[b] is non-zero.
void zero_reset_rows(float* x, const void* resets, bool resets_u8, std::int64_t batch,
                     std::int64_t hidden, cudaStream_t stream);
/// One LSTM step after the GEMMs: gates [B, 4H] holds the pre-activations i, f, g, o and is
/// overwritten with the activations; c = f c_prev + i g; h = o tanh(c).
void lstm_cell_forward(float* gates, const float* c_prev, float* c, float* h, std::int64_t batch,
                       std::int64_t hidden, cudaStream_t stream);
/// The same step backwards: dh = dh_next + grad_h (grad_h may be null), dc = dh o (1 - tanh^2 c)
/// + dc_next; writes the pre-activation gradients and dc_next = dc f (in place).
void lstm_cell_backward(const float* gates, const float* c, const float* c_prev,
                        const float* grad_h, const float* dh_next, float* dc_next,
                        float* grad_gates, std::int64_t batch, std::int64_t hidden,
                        cudaStream_t stream);

/// Layer normalisation of each row of x [rows, f]: y = gamma (x - mean) rstd + beta, with
/// rstd = 1 / sqrt(var + eps); writes each row's mean and rstd [rows] for the backward.
void layer_norm_forward(const float* x, const float* gamma, const float* beta, float* y,
                        float* mean, float* rstd, std::int64_t rows, std::int64_t f, float eps,
                        cudaStream_t stream);
/// dgamma = sum over rows of gy x^, dbeta = sum over rows of gy (written, not accumulated), and
/// when gx is not null gx = rstd (g - mean(g) - x^ mean(g x^)) with g = gy gamma, x^ the
/// normalised input.
void layer_norm_backward(const float* x, const float* gy, const float* gamma, const float* mean,
                         const float* rstd, float* gx, float* dgamma, float* dbeta,
                         std::int64_t rows, std::int64_t f, cudaStream_t stream);

/// *result += sum x^2 (accumulated in double; *result is a device double).
void sum_of_squares(const float* x, std::int64_t n, double* result, cudaStream_t stream);
void scale(float* x, std::int64_t n, float factor, cudaStream_t stream);
void add_to(float* dst, const float* src, std::int64_t n, cudaStream_t stream);
void adam(float* p, const float* g, float* m, float* v, std::int64_t n, const nn::AdamStep& step,
          cudaStream_t stream);
void rmsprop(float* p, const float* g, float* mean_square, float* mean_grad, float* mom,
             std::int64_t n, const nn::RmsPropStep& step, cudaStream_t stream);
void sgd(float* p, const float* g, float* buf, std::int64_t n, const nn::SgdStep& step,
         cudaStream_t stream);
/// The sizes of a dueling head's action branches (passed to the kernels by value).
struct DuelingBranches {
  static constexpr int kMax = 64;
  std::int32_t count = 1;
  std::int32_t size[kMax] = {};
};
/// q[r, a] = v[r] + adv[r, a] - mean adv[r, a'] over the a' of a's branch.
void dueling_forward(const float* v, const float* adv, float* q, std::int64_t rows,
                     std::int64_t actions, const DuelingBranches& branches, cudaStream_t stream);
/// gv[r] = sum_a gq[r, a];  gadv[r, a] = gq[r, a] - mean gq[r, a'] over a's branch.
void dueling_backward(const float* gq, float* gv, float* gadv, std::int64_t rows,
                      std::int64_t actions, const DuelingBranches& branches, cudaStream_t stream);

/// Everything the device V-trace loss reads and writes (device pointers; L = steps + 1 rows of
/// B frames, A actions). Frame i = t * B + b of the first `steps` rows is a transition unless
/// flags[i] has a last-step bit; the reward is rewards[i + B] and the discount is 0 when
/// flags[i + B] has terminated_flag.
struct VTraceLossArgs {
  const float* logits;            // [L, B, A]
  const float* values;            // [L, B]
  const float* behaviour_logits;  // [L, B, A]
  const std::int32_t* actions;    // [L, B]
  const float* rewards;           // [L, B]
  const std::uint8_t* flags;      // [L, B]
  float* grad_logits;             // [L, B, A], rows of the first `steps` steps written
  float* grad_values;             // [L, B], the same
  std::int64_t steps, batch, actions_count;
  float discount, max_abs_reward, clip_rho_threshold, clip_pg_rho_threshold, lambda;
  float baseline_cost, entropy_cost;
  float entropy_ceiling;  // nats: the bonus counts a frame's entropy up to this (+inf: all of it)
  std::uint8_t last_flags, terminated_flag;
};
/// V-trace targets and the actor-critic loss with its gradients; sums (5 device doubles, zeroed
/// by the caller) receive the policy loss, the baseline loss, the weighted mean entropy, the
/// transition count and the weighted mean entropy the bonus counts (up to the ceiling). scratch
/// holds vtrace_scratch_rows() * steps * batch floats.
void vtrace_loss(const VTraceLossArgs& args, float* scratch, double* sums, cudaStream_t stream);
std::int64_t vtrace_scratch_rows();

/// What the device R2D2 loss reads and writes. The window is the last W = steps + 1 rows of the
/// L = burn_in + W rows of the unroll arrays; q_online and q_target are [W, B, A].
struct R2D2LossArgs {
  const float* q_online;        // [W, B, A]
  const float* q_target;        // [W, B, A]
  const std::int32_t* actions;  // [L, B]
  const float* rewards;         // [L, B]
  const std::uint8_t* flags;    // [L, B]
  const float* weights;         // [B] importance weights, or null (all 1)
  float* grad_q;                // [W, B, A] zeroed by the caller, or null (no gradient)
  float* td_errors;             // [steps, B]
  float* priorities;            // [B]
  std::int64_t burn_in, steps, batch, actions_count, n_step;
  double discount, rescale_epsilon, priority_eta;
  float max_abs_reward;
  bool value_rescaling;
  std::uint8_t last_flags, terminated_flag;
};
/// n-step double-Q targets (value rescaling optional), TD errors, sequence priorities, the
/// importance-weighted loss and its gradient w.r.t. Q; sums (3 device doubles, zeroed by the
/// caller) receive the loss, the sum of raw Q of the transitions, and the transition count.
/// scratch holds r2d2_scratch_rows() * (steps + 1) * batch floats.
void r2d2_loss(const R2D2LossArgs& args, float* scratch, double* sums, cudaStream_t stream);
std::int64_t r2d2_scratch_rows();

}  // namespace seedrl::cuda::kernels
