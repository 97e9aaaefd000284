// The V-trace actor-critic loss on the device: the same math as algo/vtrace.hpp,
// algo/actor_critic_loss.hpp and runtime/vtrace_learner.hpp's vtrace_transitions, in three
// kernels (per frame, per column, per frame) so the learner's logits and values never leave the
// GPU.
#include "cuda_util.hpp"
#include "kernels.hpp"

namespace seedrl::cuda::kernels {
namespace {

constexpr unsigned kThreads = 256;

// Per-frame scratch rows of `scratch` [kRows, T * B].
enum Row {
  kLogRho,
  kReward,
  kDiscount,
  kLogProbTaken,
  kEntropy,
  kLse,
  kVs,
  kAdvantage,
  kMask,
  kRows
};

__device__ float log_sum_exp(const float* row, std::int64_t n) {
  float m = row[0];
  for (std::int64_t j = 1; j < n; ++j) m = fmaxf(m, row[j]);
  float s = 0.0f;
  for (std::int64_t j = 0; j < n; ++j) s += expf(row[j] - m);
  return m + logf(s);
}

// Transitions, importance weights, log-probabilities and entropies of the first T steps.
__global__ void vtrace_frames(VTraceLossArgs a, float* scratch, double* sums) {
  const std::int64_t frames = a.steps * a.batch;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       i < frames; i += static_cast<std::int64_t>(blockDim.x) * gridDim.x) {
    const float* logits = a.logits + i * a.actions_count;
    const float* behaviour = a.behaviour_logits + i * a.actions_count;
    const int action = a.actions[i];
    const float lse = log_sum_exp(logits, a.actions_count);
    const float log_pi = logits[action] - lse;
    const float log_mu = behaviour[action] - log_sum_exp(behaviour, a.actions_count);
    float entropy = 0.0f;
    for (std::int64_t j = 0; j < a.actions_count; ++j) {
      const float lp = logits[j] - lse;
      entropy -= expf(lp) * lp;
    }
    const bool boundary = (a.flags[i] & a.last_flags) != 0;
    const float value = a.values[i];
    float reward = a.rewards[i + a.batch];
    if (a.max_abs_reward > 0.0f) reward = fminf(fmaxf(reward, -a.max_abs_reward), a.max_abs_reward);
    const bool terminated = (a.flags[i + a.batch] & a.terminated_flag) != 0;
    scratch[kLogRho * frames + i] = boundary ? 0.0f : log_pi - log_mu;
    scratch[kReward * frames + i] = boundary ? value : reward;
    scratch[kDiscount * frames + i] = boundary || terminated ? 0.0f : a.discount;
    scratch[kLogProbTaken * frames + i] = log_pi;
    scratch[kEntropy * frames + i] = entropy;
    scratch[kLse * frames + i] = lse;
    scratch[kMask * frames + i] = boundary ? 0.0f : 1.0f;
    if (!boundary) atomicAdd(&sums[3], 1.0);  // transitions
  }
}

// V-trace targets and policy-gradient advantages, one thread per column (backward in time).
__global__ void vtrace_columns(VTraceLossArgs a, float* scratch) {
  const std::int64_t frames = a.steps * a.batch;
  for (std::int64_t b = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       b < a.batch; b += static_cast<std::int64_t>(blockDim.x) * gridDim.x) {
    const float bootstrap = a.values[a.steps * a.batch + b];
    float acc = 0.0f;
    for (std::int64_t t = a.steps - 1; t >= 0; --t) {
      const std::int64_t i = t * a.batch + b;
      const float rho = expf(scratch[kLogRho * frames + i]);
      const float next_value = t + 1 < a.steps ? a.values[i + a.batch] : bootstrap;
      const float discount = scratch[kDiscount * frames + i];
      const float delta = fminf(a.clip_rho_threshold, rho) *
                          (scratch[kReward * frames + i] + discount * next_value - a.values[i]);
      acc = delta + discount * a.lambda * fminf(1.0f, rho) * acc;
      scratch[kVs * frames + i] = a.values[i] + acc;
    }
    for (std::int64_t t = 0; t < a.steps; ++t) {
      const std::int64_t i = t * a.batch + b;
      const float rho = expf(scratch[kLogRho * frames + i]);
      const float next_vs = t + 1 < a.steps ? scratch[kVs * frames + i + a.batch] : bootstrap;
      scratch[kAdvantage * frames + i] =
          fminf(a.clip_pg_rho_threshold, rho) *
          (scratch[kReward * frames + i] + scratch[kDiscount * frames + i] * next_vs - a.values[i]);
    }
  }
}

// Gradients w.r.t. logits and values (the bootstrap step's stay zero) and the loss terms.
__global__ void vtrace_gradients(VTraceLossArgs a, const float* scratch, double* sums) {
  const std::int64_t frames = a.steps * a.batch;
  const double count = sums[3];
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       i < frames; i += static_cast<std::int64_t>(blockDim.x) * gridDim.x) {
    const float w = count > 0.0 ? scratch[kMask * frames + i] / static_cast<float>(count) : 0.0f;
    const float scaled = scratch[kAdvantage * frames + i] * w;
    const float entropy = scratch[kEntropy * frames + i];
    const float lse = scratch[kLse * frames + i];
    const int action = a.actions[i];
    const float* logits = a.logits + i * a.actions_count;
    float* grad = a.grad_logits + i * a.actions_count;
    for (std::int64_t j = 0; j < a.actions_count; ++j) {
      const float lp = logits[j] - lse;
      const float p = expf(lp);
      // d(-w A log pi(a))/dlogits = w A (pi - one_hot(a)); d(-cost w H)/dlogits = cost w pi (lp +
      // H)
      grad[j] =
          p * scaled - (j == action ? scaled : 0.0f) + a.entropy_cost * w * p * (lp + entropy);
    }
    const float error = a.values[i] - scratch[kVs * frames + i];
    a.grad_values[i] = error * w * a.baseline_cost;
    if (w > 0.0f) {
      atomicAdd(&sums[0], -static_cast<double>(scratch[kLogProbTaken * frames + i]) * scaled);
      atomicAdd(&sums[1], static_cast<double>(a.baseline_cost) * 0.5 * w * error * error);
      atomicAdd(&sums[2], static_cast<double>(w) * entropy);
    }
  }
}

}  // namespace

void vtrace_loss(const VTraceLossArgs& args, float* scratch, double* sums, cudaStream_t stream) {
  const std::int64_t frames = args.steps * args.batch;
  if (frames <= 0) return;
  vtrace_frames<<<detail::blocks_for(frames, kThreads), kThreads, 0, stream>>>(args, scratch, sums);
  SEEDRL_CUDA_CHECK(cudaGetLastError());
  vtrace_columns<<<detail::blocks_for(args.batch, kThreads), kThreads, 0, stream>>>(args, scratch);
  SEEDRL_CUDA_CHECK(cudaGetLastError());
  vtrace_gradients<<<detail::blocks_for(frames, kThreads), kThreads, 0, stream>>>(args, scratch,
                                                                                  sums);
  SEEDRL_CUDA_CHECK(cudaGetLastError());
}

std::int64_t vtrace_scratch_rows() {
  return kRows;
}

}  // namespace seedrl::cuda::kernels
