#include "seedrl/algo/actor_critic_loss.hpp"

#include <algorithm>
#include <cmath>

namespace seedrl {

namespace {

void check_frames(const math::ConstMatrixRef& logits, const Eigen::ArrayXXi& actions,
                  const char* what) {
  SEEDRL_REQUIRE(logits.rows() == actions.rows() * actions.cols(), what, ": logits have ",
                 logits.rows(), " rows, expected T * B = ", actions.rows() * actions.cols(),
                 " for actions [", actions.rows(), ", ", actions.cols(), "]");
  for (Eigen::Index i = 0; i < actions.size(); ++i) {
    const int a = actions.data()[i];
    SEEDRL_REQUIRE(a >= 0 && a < logits.cols(), what, ": action ", a, " out of range [0, ",
                   logits.cols(), ")");
  }
}

// Row of frame (t, b) in the time-major logits.
Eigen::Index frame_row(Eigen::Index t, Eigen::Index b, Eigen::Index batch) {
  return t * batch + b;
}

// The averaging weight of every frame: mask(t, b) / sum(mask), or 1 / (T * B) without a mask.
Eigen::ArrayXXf frame_weights(Eigen::Index steps, Eigen::Index batch, const Eigen::ArrayXXf* mask) {
  if (mask == nullptr) {
    const auto n = static_cast<float>(std::max<Eigen::Index>(1, steps * batch));
    return Eigen::ArrayXXf::Constant(steps, batch, 1.0f / n);
  }
  SEEDRL_REQUIRE(mask->rows() == steps && mask->cols() == batch, "actor-critic loss: mask is [",
                 mask->rows(), ", ", mask->cols(), "], expected [", steps, ", ", batch, "]");
  SEEDRL_REQUIRE(mask->allFinite() && (*mask >= 0.0f).all(),
                 "actor-critic loss: mask entries must be finite and >= 0");
  const float count = mask->sum();
  return count > 0.0f ? Eigen::ArrayXXf(*mask / count) : Eigen::ArrayXXf::Zero(steps, batch);
}

LossAndGrad<RowMatrixXf> policy_gradient_from_log_probs(const RowMatrixXf& log_probs,
                                                        const Eigen::ArrayXXi& actions,
                                                        const Eigen::ArrayXXf& advantages,
                                                        const Eigen::ArrayXXf& weights) {
  const Eigen::Index steps = actions.rows(), batch = actions.cols();
  LossAndGrad<RowMatrixXf> out{0.0f, RowMatrixXf(log_probs.rows(), log_probs.cols())};
  double total = 0.0;
  for (Eigen::Index t = 0; t < steps; ++t) {
    for (Eigen::Index b = 0; b < batch; ++b) {
      const Eigen::Index row = frame_row(t, b, batch);
      const int a = actions(t, b);
      const float scaled = advantages(t, b) * weights(t, b);
      total -= static_cast<double>(log_probs(row, a)) * scaled;
      // d(-w log pi(a) A)/dlogits = -w A (one_hot(a) - pi)
      out.grad.row(row) = log_probs.row(row).array().exp() * scaled;
      out.grad(row, a) -= scaled;
    }
  }
  out.loss = static_cast<float>(total);
  return out;
}

// The entropy a frame's bonus counts, and whether it counts more of it (the gradient's gate).
struct Counted {
  double entropy;
  bool below;
};
Counted counted_entropy(float entropy, float ceiling_nats, bool has_ceiling) {
  if (!has_ceiling || entropy < ceiling_nats) return {entropy, true};
  return {ceiling_nats, false};
}

LossAndGrad<RowMatrixXf> entropy_from_log_probs(const RowMatrixXf& log_probs, float entropy_cost,
                                                float entropy_ceiling,
                                                const Eigen::ArrayXXf& weights,
                                                float* mean_entropy) {
  const Eigen::Index n = log_probs.rows(), batch = weights.cols();
  const Eigen::VectorXf entropy = math::entropy_from_log_probs(log_probs);
  const bool has_ceiling = entropy_ceiling < 1.0f;
  const float ceiling_nats =
      entropy_ceiling * std::log(static_cast<float>(std::max<Eigen::Index>(1, log_probs.cols())));
  LossAndGrad<RowMatrixXf> out{0.0f, RowMatrixXf(n, log_probs.cols())};
  Eigen::VectorXf upstream(n);
  double mean = 0.0, bonus = 0.0;
  for (Eigen::Index t = 0; t < weights.rows(); ++t) {
    for (Eigen::Index b = 0; b < batch; ++b) {
      const Eigen::Index row = frame_row(t, b, batch);
      const auto w = static_cast<double>(weights(t, b));
      const Counted c = counted_entropy(entropy(row), ceiling_nats, has_ceiling);
      mean += w * entropy(row);
      bonus += w * c.entropy;
      upstream(row) = c.below ? -entropy_cost * weights(t, b) : 0.0f;  // d(-cost mean H)/dH_i
    }
  }
  if (mean_entropy) *mean_entropy = static_cast<float>(mean);
  out.loss = -entropy_cost * static_cast<float>(bonus);
  math::entropy_backward(log_probs, upstream, out.grad);
  return out;
}

}  // namespace

/// log pi(a_t | x_t) of the actions taken, [T, B].
Eigen::ArrayXXf action_log_probs(const math::ConstMatrixRef& logits,
                                 const Eigen::ArrayXXi& actions) {
  check_frames(logits, actions, "action_log_probs");
  const RowMatrixXf log_probs = math::log_softmax(logits);
  Eigen::ArrayXXf out(actions.rows(), actions.cols());
  for (Eigen::Index t = 0; t < actions.rows(); ++t)
    for (Eigen::Index b = 0; b < actions.cols(); ++b)
      out(t, b) = log_probs(frame_row(t, b, actions.cols()), actions(t, b));
  return out;
}

/// -mean(log pi(a_t | x_t) * A_t) and its gradient w.r.t. the logits.
LossAndGrad<RowMatrixXf> policy_gradient_loss(const math::ConstMatrixRef& logits,
                                              const Eigen::ArrayXXi& actions,
                                              const Eigen::ArrayXXf& advantages) {
  check_frames(logits, actions, "policy_gradient_loss");
  SEEDRL_REQUIRE(advantages.rows() == actions.rows() && advantages.cols() == actions.cols(),
                 "policy_gradient_loss: advantages and actions differ in shape");
  return policy_gradient_from_log_probs(math::log_softmax(logits), actions, advantages,
                                        frame_weights(actions.rows(), actions.cols(), nullptr));
}

/// baseline_cost * 0.5 * mean((vs - values)^2) and its gradient w.r.t. the values; with a mask,
/// the mean is over the frames where it is non-zero (weighted by it).
LossAndGrad<Eigen::ArrayXXf> baseline_loss(const Eigen::ArrayXXf& values, const Eigen::ArrayXXf& vs,
                                           float baseline_cost, const Eigen::ArrayXXf* mask) {
  SEEDRL_REQUIRE(values.rows() == vs.rows() && values.cols() == vs.cols(),
                 "baseline_loss: values are [", values.rows(), ", ", values.cols(),
                 "] but targets are [", vs.rows(), ", ", vs.cols(), "]");
  const Eigen::ArrayXXf weights = frame_weights(values.rows(), values.cols(), mask);
  const Eigen::ArrayXXf error = values - vs;
  return {baseline_cost * 0.5f * (weights * error.square()).sum(), error * weights * baseline_cost};
}

/// -entropy_cost * mean(min(H, ceiling * ln A)) and its gradient w.r.t. the logits.
LossAndGrad<RowMatrixXf> entropy_loss(const math::ConstMatrixRef& logits, float entropy_cost,
                                      float entropy_ceiling) {
  ActorCriticLossOptions{.entropy_cost = entropy_cost, .entropy_ceiling = entropy_ceiling}.validate(
      "entropy_loss");
  const Eigen::Index n = logits.rows();
  return entropy_from_log_probs(math::log_softmax(logits), entropy_cost, entropy_ceiling,
                                frame_weights(n, 1, nullptr), nullptr);
}

/// The whole loss of the V-trace learner from the network outputs of the first T steps of an
/// unroll (logits [N, A], values [T, B]), the actions taken and the V-trace targets. An optional
/// mask [T, B] (1 = a real transition, 0 = none, e.g. an episode boundary) excludes frames from
/// every term; the means are then over the frames it keeps.
ActorCriticLoss actor_critic_loss(const math::ConstMatrixRef& logits,
                                  const Eigen::ArrayXXi& actions, const Eigen::ArrayXXf& values,
                                  const VTraceReturns& targets,
                                  const ActorCriticLossOptions& options,
                                  const Eigen::ArrayXXf* mask) {
  options.validate();
  check_frames(logits, actions, "actor_critic_loss");
  SEEDRL_REQUIRE(values.rows() == actions.rows() && values.cols() == actions.cols() &&
                     targets.vs.rows() == actions.rows() && targets.vs.cols() == actions.cols() &&
                     targets.pg_advantages.rows() == actions.rows() &&
                     targets.pg_advantages.cols() == actions.cols(),
                 "actor_critic_loss: values, vs, pg_advantages and actions must all be [",
                 actions.rows(), ", ", actions.cols(), "]");
  const RowMatrixXf log_probs = math::log_softmax(logits);
  const Eigen::ArrayXXf weights = frame_weights(actions.rows(), actions.cols(), mask);
  ActorCriticLoss out;
  auto policy = policy_gradient_from_log_probs(log_probs, actions, targets.pg_advantages, weights);
  auto entropy = entropy_from_log_probs(log_probs, options.entropy_cost, options.entropy_ceiling,
                                        weights, &out.mean_entropy);
  auto baseline = baseline_loss(values, targets.vs, options.baseline_cost, mask);
  out.policy_loss = policy.loss;
  out.baseline_loss = baseline.loss;
  out.entropy_loss = entropy.loss;
  out.total_loss = policy.loss + baseline.loss + entropy.loss;
  out.grad_logits = std::move(policy.grad);
  out.grad_logits += entropy.grad;
  out.grad_values = std::move(baseline.grad);
  return out;
}

ActorCriticTerms actor_critic_loss_terms(
    const Eigen::ArrayXXf& log_probs, const Eigen::ArrayXXf& entropy, const Eigen::ArrayXXf& values,
    const VTraceReturns& targets, const ActorCriticLossOptions& options,
    const Eigen::ArrayXXf* mask, const Eigen::ArrayXXf* max_entropy) {
  options.validate();
  const bool has_ceiling = options.has_entropy_ceiling();
  SEEDRL_REQUIRE(!has_ceiling || max_entropy != nullptr,
                 "actor_critic_loss_terms: entropy_ceiling ", options.entropy_ceiling,
                 " needs each frame's maximum entropy, which a Gaussian policy has not; use 1 for "
                 "box actions");
  const Eigen::Index steps = log_probs.rows(), batch = log_probs.cols();
  for (const Eigen::ArrayXXf* a : {&entropy, &values, &targets.vs, &targets.pg_advantages,
                                   has_ceiling ? max_entropy : &entropy}) {
    SEEDRL_REQUIRE(a->rows() == steps && a->cols() == batch,
                   "actor_critic_loss_terms: log_probs, entropy, values, vs and pg_advantages "
                   "must all be [",
                   steps, ", ", batch, "], got [", a->rows(), ", ", a->cols(), "]");
  }
  const Eigen::ArrayXXf weights = frame_weights(steps, batch, mask);
  ActorCriticTerms out;
  out.policy_loss = static_cast<float>(
      -(log_probs.cast<double>() * (targets.pg_advantages * weights).cast<double>()).sum());
  out.grad_log_probs = -targets.pg_advantages * weights;
  out.mean_entropy = static_cast<float>((entropy.cast<double>() * weights.cast<double>()).sum());
  out.grad_entropy = -options.entropy_cost * weights;
  double bonus = out.mean_entropy;
  if (has_ceiling) {
    bonus = 0.0;
    for (Eigen::Index t = 0; t < steps; ++t) {
      for (Eigen::Index b = 0; b < batch; ++b) {
        const Counted c =
            counted_entropy(entropy(t, b), options.entropy_ceiling * (*max_entropy)(t, b), true);
        bonus += static_cast<double>(weights(t, b)) * c.entropy;
        if (!c.below) out.grad_entropy(t, b) = 0.0f;
      }
    }
  }
  out.entropy_loss = -options.entropy_cost * static_cast<float>(bonus);
  auto baseline = baseline_loss(values, targets.vs, options.baseline_cost, mask);
  out.baseline_loss = baseline.loss;
  out.grad_values = std::move(baseline.grad);
  out.total_loss = out.policy_loss + out.baseline_loss + out.entropy_loss;
  return out;
}

}  // namespace seedrl
