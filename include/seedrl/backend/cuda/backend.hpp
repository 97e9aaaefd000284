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

#include "seedrl/algo/actor_critic_loss.hpp"
#include "seedrl/algo/vtrace.hpp"
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

struct Backend {
  static constexpr Device device = Device::cuda;

  using Linear = cuda::Linear;
  using Conv2d = cuda::Conv2d;
  using LSTM = cuda::LSTM;
  using ReLU = cuda::ReLU;
  using Flatten = cuda::Flatten;
  using Rescale = cuda::Rescale;

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
  /// backward (value [N, 1], advantage and q [N, A]).
  static void dueling_forward(const Tensor& value, const Tensor& advantage, const Tensor& q);
  static void dueling_backward(const Tensor& grad_q, const Tensor& grad_value,
                               const Tensor& grad_advantage);

  /// The V-trace learner's loss on the device, from a batch of unrolls of L = T + 1 steps of B
  /// columns: the network's logits [L, B, A] and values [L, B], and the unrolls' behaviour logits
  /// [L, B, A] (f32), actions [L, B] (i32), rewards [L, B] (f32) and flags [L, B] (u8), all on
  /// the device. The same math as vtrace_transitions + vtrace + actor_critic_loss with the
  /// episode-boundary mask (runtime/vtrace_learner.hpp): V-trace targets, then policy-gradient,
  /// baseline and entropy terms averaged over the transitions. Writes d total / d logits and
  /// d total / d values into grad_logits [L, B, A] and grad_values [L, B] (the last step's rows
  /// zero) and returns the terms (waits for them). Actions must be in [0, A).
  static VTraceLossTerms vtrace_loss(const Tensor& logits, const Tensor& values,
                                     const Tensor& behaviour_logits, const Tensor& actions,
                                     const Tensor& rewards, const Tensor& flags, float discount,
                                     float max_abs_reward, const VTraceOptions& vtrace,
                                     const ActorCriticLossOptions& loss, const Tensor& grad_logits,
                                     const Tensor& grad_values);
};

static_assert(nn::Backend<Backend>);

}  // namespace seedrl::cuda
