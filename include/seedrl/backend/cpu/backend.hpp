// seedrl::cpu::Backend: the CPU compute backend (oneDNN primitives, Eigen for the rest).
//
// Select it as the Backend template argument of models, optimizers and agents:
//   seedrl::nn::Network<seedrl::cpu::Backend> net(config);
#pragma once

#include <span>

#include "seedrl/backend/cpu/conv2d.hpp"
#include "seedrl/backend/cpu/elementwise_layers.hpp"
#include "seedrl/backend/cpu/layer_norm.hpp"
#include "seedrl/backend/cpu/linear.hpp"
#include "seedrl/backend/cpu/lstm.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/nn/backend.hpp"
#include "seedrl/nn/update_rules.hpp"

namespace seedrl::cpu {

/// Sets how many threads oneDNN and seedrl's CPU kernels use for calls made from the calling
/// thread (an OpenMP setting: each thread of the host program has its own). n >= 1. The team's
/// threads also take the calling thread's denormal mode (core/float_mode.hpp).
void set_num_threads(int n);
/// Threads the calling thread's CPU kernels will use.
int num_threads();

/// For its lifetime, the calling thread's CPU kernels use `n` threads (n >= 1); then the count it
/// found is back. Cheap where the count is already n (nothing is called); for n = 1 no team is
/// started. For short forwards beside other busy threads (Policy::act): a team there waits at
/// its barriers for whichever of its threads another process has descheduled.
class ScopedThreads {
 public:
  explicit ScopedThreads(int n);
  ~ScopedThreads();
  ScopedThreads(const ScopedThreads&) = delete;
  ScopedThreads& operator=(const ScopedThreads&) = delete;

 private:
  int previous_;
};

struct Backend {
  static constexpr Device device = Device::cpu;

  using Linear = cpu::Linear;
  using Conv2d = cpu::Conv2d;
  using LSTM = cpu::LSTM;
  using LayerNorm = cpu::LayerNorm;
  using ReLU = cpu::ReLU;
  using Flatten = cpu::Flatten;
  using Rescale = cpu::Rescale;

  /// Threads for this backend's work issued from the calling thread (see cpu::set_num_threads).
  static void set_num_threads(int n) { cpu::set_num_threads(n); }
  /// The same for a scope: the count the calling thread had comes back at its end.
  using ScopedThreads = cpu::ScopedThreads;

  /// Sum of squares of an f32 tensor, accumulated in double.
  static double sum_of_squares(const Tensor& x);
  /// x *= factor.
  static void scale(const Tensor& x, float factor);
  /// dst += src (same shape, f32).
  static void add_to(const Tensor& dst, const Tensor& src);
  /// out[i] = scale * (weights[0] parts[0][i] + weights[1] parts[1][i] + ...) for i in
  /// [begin, end), the parts added in order; `out` may be one of the parts. On one thread: the
  /// learner's workers split the range between them (LearnerCore::gradients).
  static void weighted_sum(float* out, std::span<const float* const> parts,
                           std::span<const float> weights, float scale, std::int64_t begin,
                           std::int64_t end);

  // Optimizer updates over flat f32 tensors of equal size (see nn/update_rules.hpp).
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
};

static_assert(nn::Backend<Backend>);

}  // namespace seedrl::cpu
