// The learners' loss math on the device.
//
// V-trace: the same math as algo/vtrace.hpp, algo/actor_critic_loss.hpp and
// agents/vtrace/learner.hpp's vtrace_transitions, in three kernels (per frame, per column, per
// frame) so the learner's logits and values never leave the GPU.
// R2D2: the same math as agents/r2d2/learner.hpp's evaluate() with algo/n_step_targets.hpp,
// algo/value_rescale.hpp and algo/sequence_priority.hpp, in two kernels (per window frame: the
// double-Q bootstrap; per sequence: transitions, n-step targets, TD errors, priority, loss and
// gradient).
#include "cuda_util.hpp"
#include "kernels.hpp"
#include "seedrl/algo/value_rescale_math.hpp"

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
    // Above the ceiling the bonus counts the ceiling, a constant: no entropy gradient.
    const bool below = entropy < a.entropy_ceiling;
    const float entropy_scale = below ? a.entropy_cost * w : 0.0f;
    for (std::int64_t j = 0; j < a.actions_count; ++j) {
      const float lp = logits[j] - lse;
      const float p = expf(lp);
      // d(-w A log pi(a))/dlogits = w A (pi - one_hot(a)); d(-cost w H)/dlogits = cost w pi (lp +
      // H)
      grad[j] = p * scaled - (j == action ? scaled : 0.0f) + entropy_scale * p * (lp + entropy);
    }
    const float error = a.values[i] - scratch[kVs * frames + i];
    a.grad_values[i] = error * w * a.baseline_cost;
    if (w > 0.0f) {
      atomicAdd(&sums[0], -static_cast<double>(scratch[kLogProbTaken * frames + i]) * scaled);
      atomicAdd(&sums[1], static_cast<double>(a.baseline_cost) * 0.5 * w * error * error);
      atomicAdd(&sums[2], static_cast<double>(w) * entropy);
      atomicAdd(&sums[4], static_cast<double>(w) * (below ? entropy : a.entropy_ceiling));
    }
  }
}

// R2D2 scratch rows, each [W * B] (W = steps + 1) or [steps * B].
enum R2D2Row { kBootstrap, kReward2, kDone, kQTaken, kMask2, kR2D2Rows };

// bootstrap[w] = h^-1(q_target[w, argmax_a q_online[w, a]]) for every window frame.
__global__ void r2d2_bootstrap(R2D2LossArgs a, float* scratch) {
  const std::int64_t frames = (a.steps + 1) * a.batch;
  for (std::int64_t w = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       w < frames; w += static_cast<std::int64_t>(blockDim.x) * gridDim.x) {
    const float* q = a.q_online + w * a.actions_count;
    std::int64_t best = 0;
    for (std::int64_t k = 1; k < a.actions_count; ++k) {
      if (q[k] > q[best]) best = k;  // the lowest index among ties, as greedy_actions
    }
    const float value = a.q_target[w * a.actions_count + best];
    scratch[kBootstrap * frames + w] =
        a.value_rescaling ? static_cast<float>(seedrl::detail::h_inverse(value, a.rescale_epsilon))
                          : value;
  }
}

// Everything per sequence: one thread walks its column.
__global__ void r2d2_sequences(R2D2LossArgs a, float* scratch, double* sums) {
  const std::int64_t frames = (a.steps + 1) * a.batch, b_size = a.batch, steps = a.steps;
  const float* bootstrap = scratch + kBootstrap * frames;
  float* rewards = scratch + kReward2 * frames;
  float* dones = scratch + kDone * frames;
  float* q_taken = scratch + kQTaken * frames;
  float* mask = scratch + kMask2 * frames;
  for (std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       j < b_size; j += static_cast<std::int64_t>(blockDim.x) * gridDim.x) {
    for (std::int64_t t = 0; t < steps; ++t) {
      const std::int64_t i = (a.burn_in + t) * b_size + j;  // row in the [L, B] arrays
      const std::int64_t w = t * b_size + j;                // row in the window's outputs
      const int action = a.actions[i];
      q_taken[w] = a.q_online[w * a.actions_count + action];
      if ((a.flags[i] & a.last_flags) != 0) {  // boundary: ends earlier windows with Q(x_t)
        rewards[w] = bootstrap[w];
        dones[w] = 1.0f;
        mask[w] = 0.0f;
        continue;
      }
      float r = a.rewards[i + b_size];
      if (a.max_abs_reward > 0.0f) r = fminf(fmaxf(r, -a.max_abs_reward), a.max_abs_reward);
      rewards[w] = r;
      dones[w] = (a.flags[i + b_size] & a.terminated_flag) != 0 ? 1.0f : 0.0f;
      mask[w] = 1.0f;
    }
    const double weight = a.weights != nullptr ? a.weights[j] : 1.0;
    double loss = 0.0, raw_q = 0.0, transitions = 0.0, sum_abs = 0.0, max_abs = 0.0;
    for (std::int64_t t = 0; t < steps; ++t) {
      const std::int64_t m = a.n_step < steps - t ? a.n_step : steps - t;
      double total = 0.0, discount = 1.0;
      for (std::int64_t k = 0; k < m; ++k) {
        total += discount * rewards[(t + k) * b_size + j];
        discount *= a.discount * (1.0 - static_cast<double>(dones[(t + k) * b_size + j]));
      }
      // q_next of step t + m - 1 is the bootstrap of the window frame after it.
      float target = static_cast<float>(total + discount * bootstrap[(t + m) * b_size + j]);
      if (a.value_rescaling)
        target = static_cast<float>(seedrl::detail::h(target, a.rescale_epsilon));
      const std::int64_t w = t * b_size + j;
      const float td = (q_taken[w] - target) * mask[w];
      a.td_errors[w] = td;
      sum_abs += fabs(static_cast<double>(td));
      max_abs = fmax(max_abs, fabs(static_cast<double>(td)));
      loss += 0.5 * static_cast<double>(td) * td;
      if (mask[w] > 0.0f) {
        raw_q += a.value_rescaling ? seedrl::detail::h_inverse(q_taken[w], a.rescale_epsilon)
                                   : q_taken[w];
        transitions += 1.0;
      }
      if (a.grad_q != nullptr) {
        const int action = a.actions[(a.burn_in + t) * b_size + j];
        a.grad_q[w * a.actions_count + action] =
            static_cast<float>(weight * td / static_cast<double>(b_size));
      }
    }
    a.priorities[j] = static_cast<float>(
        a.priority_eta * max_abs + (1.0 - a.priority_eta) * sum_abs / static_cast<double>(steps));
    atomicAdd(&sums[0], weight * loss / static_cast<double>(b_size));
    atomicAdd(&sums[1], raw_q);
    atomicAdd(&sums[2], transitions);
  }
}

}  // namespace

void r2d2_loss(const R2D2LossArgs& args, float* scratch, double* sums, cudaStream_t stream) {
  const std::int64_t frames = (args.steps + 1) * args.batch;
  if (args.steps <= 0 || args.batch <= 0) return;
  r2d2_bootstrap<<<detail::blocks_for(frames, kThreads), kThreads, 0, stream>>>(args, scratch);
  SEEDRL_CUDA_CHECK(cudaGetLastError());
  r2d2_sequences<<<detail::blocks_for(args.batch, kThreads), kThreads, 0, stream>>>(args, scratch,
                                                                                    sums);
  SEEDRL_CUDA_CHECK(cudaGetLastError());
}

std::int64_t r2d2_scratch_rows() {
  return kR2D2Rows;
}

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
