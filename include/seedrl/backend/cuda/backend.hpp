// seedrl::cuda::Backend: the GPU compute backend (cuBLAS GEMMs, cuDNN convolutions, seedrl's own
// kernels for the rest). Opt-in: include this header and link seedrl::cuda; the umbrella header
// <seedrl/seedrl.hpp> never includes it, and it never includes CUDA's headers.
//
// Select it as the Backend template argument of models, optimizers and agents, exactly like the
// CPU backend:
//   seedrl::nn::Network<seedrl::cuda::Backend> net(config);   // parameters on the GPU
//   const auto& out = net.forward(observations_on_gpu);
// Tensors the layers take and return live on Device::cuda; move data with Tensor::clone(device)
// or copy_from. See runtime.hpp for devices, streams, memory and TF32.
#pragma once

#include <span>

#include "seedrl/algo/actor_critic_loss.hpp"
#include "seedrl/algo/vtrace.hpp"
#include "seedrl/backend/cuda/graph.hpp"
#include "seedrl/backend/cuda/runtime.hpp"
#include "seedrl/backend/layers.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/nn/backend.hpp"
#include "seedrl/nn/update_rules.hpp"

namespace seedrl::cuda {

namespace detail {
/// Installs the CUDA DeviceRuntime (allocation, copies) for Device::cuda; idempotent, never
/// touches the GPU itself, so it is safe on machines without one.
bool register_runtime() noexcept;
}  // namespace detail

/// Fully connected layer: one cuBLAS SGEMM plus a fused bias/ReLU kernel; backward as two GEMMs
/// and a GEMV for the bias.
using Linear = backend::Linear<Device::cuda>;
/// cuDNN convolution on NHWC activations with the filter kept in cuDNN's NHWC layout (repacked
/// when the parameters change); algorithms are measured once per input shape
/// (cudnnFind*Algorithm) and cached.
using Conv2d = backend::Conv2d<Device::cuda>;
/// cuBLAS GEMMs (the input projection of the whole unroll at once, one recurrent GEMM per step)
/// plus one fused gate kernel per step, forward and backward through time.
using LSTM = backend::LSTM<Device::cuda>;
/// A block per row for the moments and the input gradient, a thread per feature for the scale
/// and shift gradients.
using LayerNorm = backend::LayerNorm<Device::cuda>;
using ReLU = backend::ReLU<Device::cuda>;
using Flatten = backend::Flatten;
using Rescale = backend::Rescale<Device::cuda>;

/// The terms of a V-trace actor-critic loss computed on the device (see Backend::vtrace_loss).
struct VTraceLossTerms {
  double policy_loss = 0.0;
  double baseline_loss = 0.0;
  double entropy_loss = 0.0;
  double total_loss = 0.0;
  double mean_entropy = 0.0;
  std::int64_t transitions = 0;
};

/// What R2D2's loss on the device needs besides the tensors (see Backend::r2d2_loss).
struct R2D2LossConfig {
  std::int64_t burn_in = 0;
  std::int64_t n_step = 5;
  double discount = 0.997;
  float max_abs_reward = 0.0f;  ///< 0: no clipping
  bool value_rescaling = true;
  double value_rescale_epsilon = 1e-3;
  double priority_eta = 0.9;
};

/// The scalar results of R2D2's loss on the device.
struct R2D2LossTerms {
  double loss = 0.0;       ///< (1/B) sum_b w_b sum_t 0.5 delta^2
  double raw_q_sum = 0.0;  ///< sum of the online Q of the transitions, in raw units
  std::int64_t transitions = 0;
};

struct Backend {
  static constexpr Device device = Device::cuda;

  using Linear = cuda::Linear;
  using Conv2d = cuda::Conv2d;
  using LSTM = cuda::LSTM;
  using LayerNorm = cuda::LayerNorm;
  using ReLU = cuda::ReLU;
  using Flatten = cuda::Flatten;
  using Rescale = cuda::Rescale;
  using R2D2LossConfig = cuda::R2D2LossConfig;
  /// Captured forwards (inference/graphed_forward.hpp replays the server's from one launch).
  using Graph = cuda::Graph;
  /// Uses of an input shape before its forward may be captured: past the convolutions'
  /// algorithm measurement (set_conv_measure_after), which must not happen inside a graph.
  static int graph_capture_after() { return conv_measure_after() + 2; }

  /// Set when a program includes this header: Storage and Tensor can then allocate on the GPU.
  static inline const bool runtime_registered = detail::register_runtime();

  /// Sum of squares of an f32 device tensor, accumulated in double (waits for the result).
  static double sum_of_squares(const Tensor& x);
  /// x *= factor.
  static void scale(const Tensor& x, float factor);
  /// dst += src (same size, f32).
  static void add_to(const Tensor& dst, const Tensor& src);

  // Optimizer updates over flat f32 device tensors of equal size; each returns once the update
  // is complete, so other threads may read the parameters (see nn/update_rules.hpp).
  static void adam_update(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v,
                          const nn::AdamStep& step);
  static void rmsprop_update(const Tensor& param, const Tensor& grad, const Tensor& mean_square,
                             const Tensor& mean_grad, const Tensor& mom,
                             const nn::RmsPropStep& step);
  static void sgd_update(const Tensor& param, const Tensor& grad, const Tensor& buf,
                         const nn::SgdStep& step);

  /// Dueling head: q[r, a] = value[r] + advantage[r, a] - mean_a advantage[r, a], and its
  /// backward (value [N, 1], advantage and q [N, A]). With action `branches` (their sizes, A in
  /// all; empty: one branch of A) the mean is over a's branch (branching dueling Q-networks).
  static void dueling_forward(const Tensor& value, const Tensor& advantage, const Tensor& q,
                              std::span<const std::int64_t> branches = {});
  static void dueling_backward(const Tensor& grad_q, const Tensor& grad_value,
                               const Tensor& grad_advantage,
                               std::span<const std::int64_t> branches = {});

  /// The V-trace learner's loss on the device, from a batch of unrolls of L = T + 1 steps of B
  /// columns: the network's logits [L, B, A] and values [L, B], and the unrolls' behaviour logits
  /// [L, B, A] (f32), actions [L, B] (i32), rewards [L, B] (f32) and flags [L, B] (u8), all on
  /// the device. The same math as vtrace_transitions + vtrace + actor_critic_loss with the
  /// episode-boundary mask (agents/vtrace/learner.hpp): V-trace targets, then policy-gradient,
  /// baseline and entropy terms averaged over the transitions. Writes d total / d logits and
  /// d total / d values into grad_logits [L, B, A] and grad_values [L, B] (the last step's rows
  /// zero) and returns the terms (waits for them). Actions must be in [0, A).
  static VTraceLossTerms vtrace_loss(const Tensor& logits, const Tensor& values,
                                     const Tensor& behaviour_logits, const Tensor& actions,
                                     const Tensor& rewards, const Tensor& flags, float discount,
                                     float max_abs_reward, const VTraceOptions& vtrace,
                                     const ActorCriticLossOptions& loss, const Tensor& grad_logits,
                                     const Tensor& grad_values);

  /// R2D2's loss on the device, the same math as Learner<R2D2Agent, B> on the host: for a batch
  /// of sequences of L = burn_in + W steps, the online and target networks' Q-values of the
  /// window, q_online and q_target [W, B, A], and the sequences' actions [L, B] (i32), rewards
  /// [L, B] (f32) and flags [L, B] (u8): double-Q bootstraps, n-step targets with value
  /// rescaling, TD errors (written to td_errors [W - 1, B]), sequence priorities (priorities
  /// [B]), the loss weighted by `weights` [B] (undefined: all 1) and, when grad_q is defined,
  /// its gradient w.r.t. the Q-values ([W, B, A], overwritten). All tensors on the device;
  /// actions must be in [0, A). Waits for the result.
  static R2D2LossTerms r2d2_loss(const Tensor& q_online, const Tensor& q_target,
                                 const Tensor& actions, const Tensor& rewards, const Tensor& flags,
                                 const Tensor& weights, const R2D2LossConfig& config,
                                 const Tensor& grad_q, const Tensor& td_errors,
                                 const Tensor& priorities);
};

static_assert(nn::Backend<Backend>);

}  // namespace seedrl::cuda
