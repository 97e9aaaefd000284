// Agent: what an algorithm brings to seedrl. An agent is a small copyable value holding its
// configuration; both sides of a run use it:
//
//   inference (InferenceServer)   network_config() builds the acting network; select_actions()
//                                 turns a batch of network outputs into actions
//   learning (Learner<Agent, B>)  the agent's learner: its loss and its data path, on the shared
//                                 LearnerCore (learner/learner_core.hpp)
//
// An agent's header defines the agent and includes its learner, so including it is enough to
// train it (train_locally, TrainingSession). What a type must provide:
//
//   struct MyAgentOptions : seedrl::AgentOptions { float my_cost = 0.5f; };
//   class MyAgent {
//    public:
//     static constexpr std::string_view kName = "my_agent";  // checkpoints record it
//     static constexpr bool kStoresLogits = true;   // unrolls keep the behaviour logits
//     const MyAgentOptions& options() const;        // derived from AgentOptions
//     const nn::NetworkOptions& network_config() const;
//     // For each frame i of a batch (outputs [1, N, ...]): actions[i], from the frame's slot
//     // (e.g. a per-slot exploration rate) and whether it is an evaluation slot (act greedily).
//     void select_actions(const nn::NetworkOutputs& outputs, std::span<const std::int32_t> slots,
//                         std::span<const std::uint8_t> evaluation,
//                         std::span<std::int32_t> actions, Rng& rng) const;
//   };
//   static_assert(seedrl::Agent<MyAgent>);
//
// An agent that also acts in box action spaces (ActionSpec::box: a Gaussian policy head,
// NetworkOptions::gaussian) provides, satisfying BoxAgent:
//
//     // For each frame i (outputs.mean, outputs.log_std [1, N, D]): its action, unbounded (the
//     // server clips it to the environment's bounds; the unroll keeps it as drawn).
//     void select_box_actions(const nn::NetworkOutputs& outputs,
//                             std::span<const std::uint8_t> evaluation, math::MatrixRef actions,
//                             Rng& rng) const;
//     // or the same with a last `const BoxActingContext&` (the bounds, the parameter version).
//
// An agent may also record the Q-values inference acted on in the unrolls' behaviour field (R2D2
// with actor priorities): `bool records_q_values() const` (records_q_values below).
//
// plus a specialisation Learner<MyAgent, B> (learner/learner.hpp says what it must offer);
// docs/runtime.md walks through adding one.
#pragma once

#include <concepts>
#include <cstdint>
#include <span>
#include <string_view>

#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/core/step_spec.hpp"
#include "seedrl/experience/normalization.hpp"
#include "seedrl/math/categorical.hpp"
#include "seedrl/math/distributions.hpp"
#include "seedrl/math/masked_categorical.hpp"
#include "seedrl/nn/learning_rate.hpp"
#include "seedrl/nn/network.hpp"
#include "seedrl/nn/optimizer.hpp"

namespace seedrl {

/// The settings every agent has: its network, how a learner step samples and scales its data,
/// and how it updates the parameters. Each agent's options derive from it (and may change the
/// defaults in their constructor).
struct AgentOptions {
  nn::NetworkOptions network;
  std::int64_t batch_size = 32;  ///< unrolls (sequences) per learner step
  float discount = 0.99f;
  float max_abs_reward = 0.0f;     ///< clip rewards to +-this for the loss; 0: no clipping
  nn::OptimizerOptions optimizer;  ///< Adam by default
  nn::LinearDecay learning_rate{0.00048, 0, 0.0};
  double max_grad_norm = 40.0;  ///< global-norm clipping; 0: none
  /// Running normalisation of observations and rewards, applied by inference
  /// (experience/normalization.hpp); off by default.
  NormalizationOptions normalization;

  /// Throws seedrl::Error naming the first bad setting as `owner`.field.
  void validate(std::string_view owner) const {
    network.validate(str_cat(owner, ".network"));
    SEEDRL_REQUIRE(batch_size > 0, owner, ".batch_size must be positive, got ", batch_size);
    SEEDRL_REQUIRE(discount >= 0.0f && discount <= 1.0f, owner, ".discount must be in [0, 1], got ",
                   discount);
    SEEDRL_REQUIRE(max_abs_reward >= 0.0f && std::isfinite(max_abs_reward), owner,
                   ".max_abs_reward must be finite and >= 0, got ", max_abs_reward);
    learning_rate.validate(str_cat(owner, ".learning_rate"));
    SEEDRL_REQUIRE(max_grad_norm >= 0.0 && std::isfinite(max_grad_norm), owner,
                   ".max_grad_norm must be finite and >= 0, got ", max_grad_norm);
    normalization.validate(owner);
  }
};

template <class A>
concept Agent = std::copy_constructible<A> &&
    requires(const A& agent, const nn::NetworkOutputs& outputs, std::span<const std::int32_t> slots,
             std::span<const std::uint8_t> evaluation, std::span<std::int32_t> actions, Rng& rng) {
  { A::kName } -> std::convertible_to<std::string_view>;
  { A::kStoresLogits } -> std::convertible_to<bool>;
  { agent.options() } -> std::convertible_to<const AgentOptions&>;
  { agent.network_config() } -> std::same_as<const nn::NetworkOptions&>;
  agent.select_actions(outputs, slots, evaluation, actions, rng);
};

/// What inference knows when it selects discrete actions beyond the network's outputs: the
/// batch's legal-action masks (the step field kActionMaskField, u8 [N, A] row-major; empty where
/// the environment declares none) and the action branches (ActionSpec::branched: the scores' A
/// columns are the branches side by side, and `actions` holds N rows of K, one per branch; empty
/// Branches: one branch of all A). An agent that honours masks and branches takes it as the last
/// argument of its select_actions.
struct ActingContext {
  std::span<const std::uint8_t> action_mask;
  math::Branches branches;

  /// K >= 2 branches.
  bool branched() const { return branches.count() > 1; }
  /// `branches`, or one branch of `width` actions where there are none.
  math::Branches or_one(std::int64_t width) const {
    return branches.count() > 0 ? branches : math::Branches({width});
  }
};

/// How the policy-gradient agents (V-trace, PPO) act, for either kind of action; they derive
/// from it. In evaluation frames they take the most likely action (the Gaussian's mean).
struct StochasticPolicyActing {
  /// For each frame i of an inference batch (outputs.logits [1, N, A]): a sample from
  /// softmax(logits) (one per branch), or the most likely action in evaluation slots; with masks,
  /// among the legal actions only (math/masked_categorical.hpp).
  void select_actions(const nn::NetworkOutputs& outputs, std::span<const std::int32_t> slots,
                      std::span<const std::uint8_t> evaluation, std::span<std::int32_t> actions,
                      Rng& rng, const ActingContext& context = {}) const {
    (void)slots;
    const std::int64_t n = outputs.logits.dim(1), a = outputs.logits.dim(2);
    const auto logits = outputs.logits.reshape({n, a}).matrix<float>();
    if (context.action_mask.empty() && !context.branched()) {
      math::sample_categorical(logits, evaluation, actions, rng);
    } else {
      math::masked_sample(logits, context.action_mask, context.or_one(a), evaluation, actions, rng);
    }
  }

  /// Box actions (outputs.mean, outputs.log_std [1, N, D]): for each frame
  /// mean + exp(log_std) z, z ~ N(0, 1), or the mean in evaluation frames.
  void select_box_actions(const nn::NetworkOutputs& outputs,
                          std::span<const std::uint8_t> evaluation, math::MatrixRef actions,
                          Rng& rng) const {
    const std::int64_t n = outputs.mean.dim(1), d = outputs.mean.dim(2);
    const auto mean = outputs.mean.reshape({n, d}).matrix<float>();
    math::DiagGaussian::sample(mean, outputs.log_std.reshape({n, d}).matrix<float>(), actions, rng);
    for (std::int64_t i = 0; i < n; ++i)
      if (evaluation[static_cast<std::size_t>(i)]) actions.row(i) = mean.row(i);
  }
};

/// `agent`'s discrete actions for a batch, with the context where the agent takes it; masks or
/// branches for an agent that cannot honour them are refused by name rather than ignored.
template <Agent A>
void select_actions(const A& agent, const nn::NetworkOutputs& outputs,
                    std::span<const std::int32_t> slots, std::span<const std::uint8_t> evaluation,
                    std::span<std::int32_t> actions, Rng& rng, const ActingContext& context) {
  if constexpr (requires {
                  agent.select_actions(outputs, slots, evaluation, actions, rng, context);
                }) {
    agent.select_actions(outputs, slots, evaluation, actions, rng, context);
  } else {
    SEEDRL_REQUIRE(context.action_mask.empty(), "agent ", A::kName,
                   " does not act on legal-action masks, but the steps declare '", kActionMaskField,
                   "'");
    SEEDRL_REQUIRE(!context.branched(), "agent ", A::kName,
                   " does not act on action branches, but the actions are ",
                   context.branches.to_string(), " branches");
    agent.select_actions(outputs, slots, evaluation, actions, rng);
  }
}

/// Whether `agent`'s unrolls record, in their behaviour field, the Q-values inference acted on:
/// the optional `bool records_q_values() const` (R2D2's actor priorities); false without it.
template <class A>
bool records_q_values(const A& agent) {
  if constexpr (requires {
                  { agent.records_q_values() } -> std::convertible_to<bool>;
                }) {
    return agent.records_q_values();
  } else {
    return false;
  }
}

/// What inference knows when it selects box actions: the box, and the version of the parameters
/// that act (0: the learner has not updated yet). An agent that needs it (SAC: it scales its
/// squashed actions to the box, and acts at random before the first update) takes it as the last
/// argument of its select_box_actions.
struct BoxActingContext {
  std::span<const float> low, high;
  std::int64_t parameter_version = 0;
};

template <class A>
concept BoxAgent = Agent<A> &&(
    requires(const A& agent, const nn::NetworkOutputs& outputs,
             std::span<const std::uint8_t> evaluation, math::MatrixRef actions,
             Rng& rng) { agent.select_box_actions(outputs, evaluation, actions, rng); } ||
    requires(const A& agent, const nn::NetworkOutputs& outputs,
             std::span<const std::uint8_t> evaluation, math::MatrixRef actions, Rng& rng,
             const BoxActingContext& context) {
      agent.select_box_actions(outputs, evaluation, actions, rng, context);
    });

/// `agent`'s box actions for a batch, with the context where the agent takes it.
template <BoxAgent A>
void select_box_actions(const A& agent, const nn::NetworkOutputs& outputs,
                        std::span<const std::uint8_t> evaluation, math::MatrixRef actions, Rng& rng,
                        const BoxActingContext& context) {
  if constexpr (requires {
                  agent.select_box_actions(outputs, evaluation, actions, rng, context);
                }) {
    agent.select_box_actions(outputs, evaluation, actions, rng, context);
  } else {
    agent.select_box_actions(outputs, evaluation, actions, rng);
  }
}

}  // namespace seedrl
