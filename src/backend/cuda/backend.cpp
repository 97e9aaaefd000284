// cuda::Backend's whole-tensor operations: reductions, optimizer updates, the dueling head.
#include "seedrl/backend/cuda/backend.hpp"

#include <array>
#include <cmath>
#include <limits>

#include "../tensor_args.hpp"
#include "cuda_util.hpp"
#include "kernels.hpp"
#include "seedrl/core/step_flags.hpp"

namespace seedrl::cuda {
namespace {

constexpr Device kDevice = Device::cuda;
using backend::f32_on;
using backend::f32_same_size;

// Optimizer steps end here, so parameters are complete for readers on other threads' streams.
void finish_update() {
  SEEDRL_CUDA_CHECK(cudaStreamSynchronize(detail::stream()));
}

}  // namespace

double Backend::sum_of_squares(const Tensor& x) {
  const float* p = f32_on(kDevice, x, "sum_of_squares");
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
  kernels::scale(f32_on(kDevice, x, "scale"), x.numel(), factor, detail::stream());
}

void Backend::add_to(const Tensor& dst, const Tensor& src) {
  const auto [d, s] = f32_same_size(kDevice, "add_to", dst, src);
  kernels::add_to(d, s, dst.numel(), detail::stream());
}

void Backend::adam_update(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v,
                          const nn::AdamStep& step) {
  const auto [p, g, mp, vp] = f32_same_size(kDevice, "adam_update", param, grad, m, v);
  kernels::adam(p, g, mp, vp, param.numel(), step, detail::stream());
  finish_update();
}

void Backend::rmsprop_update(const Tensor& param, const Tensor& grad, const Tensor& mean_square,
                             const Tensor& mean_grad, const Tensor& mom,
                             const nn::RmsPropStep& step) {
  const auto [p, g, ms, mg, mo] =
      f32_same_size(kDevice, "rmsprop_update", param, grad, mean_square, mean_grad, mom);
  kernels::rmsprop(p, g, ms, mg, mo, param.numel(), step, detail::stream());
  finish_update();
}

void Backend::sgd_update(const Tensor& param, const Tensor& grad, const Tensor& buf,
                         const nn::SgdStep& step) {
  const auto [p, g, b] = f32_same_size(kDevice, "sgd_update", param, grad, buf);
  kernels::sgd(p, g, b, param.numel(), step, detail::stream());
  finish_update();
}

namespace {
kernels::DuelingBranches dueling_branches(std::span<const std::int64_t> branches,
                                          std::int64_t width, const char* who) {
  kernels::DuelingBranches out;
  if (branches.empty()) {
    out.count = 1;
    out.size[0] = static_cast<std::int32_t>(width);
    return out;
  }
  SEEDRL_REQUIRE(branches.size() <= static_cast<std::size_t>(kernels::DuelingBranches::kMax), who,
                 ": ", branches.size(), " branches; at most ", kernels::DuelingBranches::kMax);
  std::int64_t total = 0;
  out.count = static_cast<std::int32_t>(branches.size());
  for (std::size_t k = 0; k < branches.size(); ++k) {
    out.size[k] = static_cast<std::int32_t>(branches[k]);
    total += branches[k];
  }
  SEEDRL_REQUIRE(total == width, who, ": branches of ", total, " actions for ", width, " columns");
  return out;
}
}  // namespace

void Backend::dueling_forward(const Tensor& value, const Tensor& advantage, const Tensor& q,
                              std::span<const std::int64_t> branches) {
  SEEDRL_REQUIRE(
      advantage.rank() == 2 && q.shape() == advantage.shape() && value.numel() == advantage.dim(0),
      "dueling_forward: value [N, 1], advantage and q [N, A] expected, got ", value.shape(), ", ",
      advantage.shape(), ", ", q.shape());
  kernels::dueling_forward(
      f32_on(kDevice, value, "dueling_forward"), f32_on(kDevice, advantage, "dueling_forward"),
      f32_on(kDevice, q, "dueling_forward"), advantage.dim(0), advantage.dim(1),
      dueling_branches(branches, advantage.dim(1), "dueling_forward"), detail::stream());
}

void Backend::dueling_backward(const Tensor& grad_q, const Tensor& grad_value,
                               const Tensor& grad_advantage,
                               std::span<const std::int64_t> branches) {
  SEEDRL_REQUIRE(grad_q.rank() == 2 && grad_advantage.shape() == grad_q.shape() &&
                     grad_value.numel() == grad_q.dim(0),
                 "dueling_backward: grad_q and grad_advantage [N, A], grad_value [N, 1] expected, "
                 "got ",
                 grad_q.shape(), ", ", grad_advantage.shape(), ", ", grad_value.shape());
  kernels::dueling_backward(
      f32_on(kDevice, grad_q, "dueling_backward"), f32_on(kDevice, grad_value, "dueling_backward"),
      f32_on(kDevice, grad_advantage, "dueling_backward"), grad_q.dim(0), grad_q.dim(1),
      dueling_branches(branches, grad_q.dim(1), "dueling_backward"), detail::stream());
}

R2D2LossTerms Backend::r2d2_loss(const Tensor& q_online, const Tensor& q_target,
                                 const Tensor& actions, const Tensor& rewards, const Tensor& flags,
                                 const Tensor& weights, const R2D2LossConfig& config,
                                 const Tensor& grad_q, const Tensor& td_errors,
                                 const Tensor& priorities) {
  const char* what = "r2d2_loss";
  SEEDRL_REQUIRE(q_online.defined() && q_online.rank() == 3 && q_online.dim(0) >= 2,
                 "r2d2_loss: q_online must be [W, B, A] with W >= 2");
  SEEDRL_REQUIRE(config.n_step >= 1, "r2d2_loss: n_step must be >= 1, got ", config.n_step);
  SEEDRL_REQUIRE(config.burn_in >= 0, "r2d2_loss: burn_in must be >= 0, got ", config.burn_in);
  const std::int64_t window = q_online.dim(0), batch = q_online.dim(1);
  const Shape sequence{config.burn_in + window, batch};
  auto on_device = [&](const Tensor& t, const Shape& shape, DType dtype, const char* name) {
    require_tensor(t, shape, dtype, what, ": ", name);
    SEEDRL_REQUIRE(t.device() == Device::cuda, what, ": ", name, " must be on the GPU, it is on ",
                   t.device());
  };
  on_device(q_online, q_online.shape(), DType::f32, "q_online");
  on_device(q_target, q_online.shape(), DType::f32, "q_target");
  on_device(actions, sequence, DType::i32, "actions");
  on_device(rewards, sequence, DType::f32, "rewards");
  on_device(flags, sequence, DType::u8, "flags");
  if (weights.defined()) on_device(weights, {batch}, DType::f32, "weights");
  if (grad_q.defined()) on_device(grad_q, q_online.shape(), DType::f32, "grad_q");
  on_device(td_errors, {window - 1, batch}, DType::f32, "td_errors");
  on_device(priorities, {batch}, DType::f32, "priorities");

  const Tensor scratch =
      Tensor::empty({kernels::r2d2_scratch_rows(), window * batch}, DType::f32, Device::cuda);
  const Tensor sums = Tensor::empty({6}, DType::f32, Device::cuda);  // 3 zeroed doubles
  if (grad_q.defined()) grad_q.fill_zero();
  kernels::R2D2LossArgs args{};
  args.q_online = static_cast<const float*>(q_online.raw_data());
  args.q_target = static_cast<const float*>(q_target.raw_data());
  args.actions = static_cast<const std::int32_t*>(actions.raw_data());
  args.rewards = static_cast<const float*>(rewards.raw_data());
  args.flags = static_cast<const std::uint8_t*>(flags.raw_data());
  args.weights = weights.defined() ? static_cast<const float*>(weights.raw_data()) : nullptr;
  args.grad_q = grad_q.defined() ? static_cast<float*>(grad_q.raw_data()) : nullptr;
  args.td_errors = static_cast<float*>(td_errors.raw_data());
  args.priorities = static_cast<float*>(priorities.raw_data());
  args.burn_in = config.burn_in;
  args.steps = window - 1;
  args.batch = batch;
  args.actions_count = q_online.dim(2);
  args.n_step = config.n_step;
  args.discount = config.discount;
  args.rescale_epsilon = config.value_rescale_epsilon;
  args.priority_eta = config.priority_eta;
  args.max_abs_reward = config.max_abs_reward;
  args.value_rescaling = config.value_rescaling;
  args.last_flags = step_flags::kTerminated | step_flags::kTruncated;
  args.terminated_flag = step_flags::kTerminated;
  kernels::r2d2_loss(args, static_cast<float*>(scratch.raw_data()),
                     static_cast<double*>(sums.raw_data()), detail::stream());
  double host[3] = {};
  SEEDRL_CUDA_CHECK(cudaMemcpyAsync(host, sums.raw_data(), sizeof(host), cudaMemcpyDeviceToHost,
                                    detail::stream()));
  SEEDRL_CUDA_CHECK(cudaStreamSynchronize(detail::stream()));
  return {host[0], host[1], static_cast<std::int64_t>(host[2])};
}

VTraceLossTerms Backend::vtrace_loss(const Tensor& logits, const Tensor& values,
                                     const Tensor& behaviour_logits, const Tensor& actions,
                                     const Tensor& rewards, const Tensor& flags, float discount,
                                     float max_abs_reward, const VTraceOptions& vtrace,
                                     const ActorCriticLossOptions& loss, const Tensor& grad_logits,
                                     const Tensor& grad_values) {
  vtrace.validate();
  loss.validate();
  SEEDRL_REQUIRE(logits.defined() && logits.rank() == 3 && logits.dim(0) >= 2,
                 "vtrace_loss: logits must be [L, B, A] with L >= 2");
  const std::int64_t length = logits.dim(0), batch = logits.dim(1), num_actions = logits.dim(2);
  const Shape steps_by_batch{length, batch};
  const char* what = "vtrace_loss";
  auto on_device = [&](const Tensor& t, const Shape& shape, DType dtype, const char* name) {
    require_tensor(t, shape, dtype, what, ": ", name);
    SEEDRL_REQUIRE(t.device() == Device::cuda, what, ": ", name, " must be on the GPU, it is on ",
                   t.device());
  };
  on_device(logits, logits.shape(), DType::f32, "logits");
  on_device(values, steps_by_batch, DType::f32, "values");
  on_device(behaviour_logits, logits.shape(), DType::f32, "behaviour logits");
  on_device(actions, steps_by_batch, DType::i32, "actions");
  on_device(rewards, steps_by_batch, DType::f32, "rewards");
  on_device(flags, steps_by_batch, DType::u8, "flags");
  on_device(grad_logits, logits.shape(), DType::f32, "grad_logits");
  on_device(grad_values, steps_by_batch, DType::f32, "grad_values");

  const std::int64_t steps = length - 1;
  const Tensor scratch =
      Tensor::empty({kernels::vtrace_scratch_rows(), steps * batch}, DType::f32, Device::cuda);
  const Tensor sums = Tensor::empty({10}, DType::f32, Device::cuda);  // 5 zeroed doubles
  kernels::VTraceLossArgs args{};
  args.logits = static_cast<const float*>(logits.raw_data());
  args.values = static_cast<const float*>(values.raw_data());
  args.behaviour_logits = static_cast<const float*>(behaviour_logits.raw_data());
  args.actions = static_cast<const std::int32_t*>(actions.raw_data());
  args.rewards = static_cast<const float*>(rewards.raw_data());
  args.flags = static_cast<const std::uint8_t*>(flags.raw_data());
  args.grad_logits = static_cast<float*>(grad_logits.raw_data());
  args.grad_values = static_cast<float*>(grad_values.raw_data());
  args.steps = steps;
  args.batch = batch;
  args.actions_count = num_actions;
  args.discount = discount;
  args.max_abs_reward = max_abs_reward;
  args.clip_rho_threshold = vtrace.clip_rho_threshold;
  args.clip_pg_rho_threshold = vtrace.clip_pg_rho_threshold;
  args.lambda = vtrace.lambda;
  args.baseline_cost = loss.baseline_cost;
  args.entropy_cost = loss.entropy_cost;
  args.entropy_ceiling = loss.has_entropy_ceiling()
                             ? loss.entropy_ceiling * std::log(static_cast<float>(num_actions))
                             : std::numeric_limits<float>::infinity();
  args.last_flags = step_flags::kTerminated | step_flags::kTruncated;
  args.terminated_flag = step_flags::kTerminated;
  kernels::vtrace_loss(args, static_cast<float*>(scratch.raw_data()),
                       static_cast<double*>(sums.raw_data()), detail::stream());
  double host[5] = {};
  SEEDRL_CUDA_CHECK(cudaMemcpyAsync(host, sums.raw_data(), sizeof(host), cudaMemcpyDeviceToHost,
                                    detail::stream()));
  SEEDRL_CUDA_CHECK(cudaStreamSynchronize(detail::stream()));
  VTraceLossTerms terms;
  terms.policy_loss = host[0];
  terms.baseline_loss = host[1];
  terms.mean_entropy = host[2];
  terms.entropy_loss = -static_cast<double>(loss.entropy_cost) * host[4];
  terms.total_loss = terms.policy_loss + terms.baseline_loss + terms.entropy_loss;
  terms.transitions = static_cast<std::int64_t>(host[3]);
  return terms;
}

}  // namespace seedrl::cuda
