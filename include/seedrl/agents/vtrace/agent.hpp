// VTraceAgent: the IMPALA actor-critic trained with V-trace (Espeholt et al. 2018) as SEED RL
// runs it. The agent holds the configuration both sides need; its inference side samples actions
// from the policy (softmax over discrete actions, or a diagonal Gaussian over box actions), its
// learning side is Learner<VTraceAgent, Backend> (agents/vtrace/learner.hpp, included at the end
// of this header: including it is enough to train the agent).
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string_view>

#include "seedrl/agent/acting.hpp"
#include "seedrl/agent/agent.hpp"
#include "seedrl/algo/actor_critic_loss.hpp"
#include "seedrl/algo/vtrace.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/math/categorical.hpp"
#include "seedrl/nn/network.hpp"

namespace seedrl {

/// Defaults are seed_rl's V-trace learner flags (AgentOptions: batch 32, discount 0.99, Adam at
/// 0.00048), except the gradient clipping (IMPALA's 40).
struct VTraceAgentOptions : AgentOptions {
  VTraceOptions vtrace;  ///< rho_bar, rho_bar_pg, lambda (all 1)
  ActorCriticLossOptions loss{0.5f, 0.0033391318945337044f};  ///< baseline and entropy costs
  /// The mean policy lag (learner steps) a step's data may have before the learner takes more
  /// unrolls a step: with N actor slots the lag is about N / (2 batch_size), so a fixed batch lets
  /// it grow with the actors (learner/lag_bounded_batch.hpp). 0: always batch_size.
  double target_policy_lag = 16.0;
  /// The most unrolls a step takes then: batch_size times this (a power of two is reached first).
  std::int64_t max_batch_multiple = 64;

  void validate(std::string_view owner = "VTraceAgentOptions") const {
    AgentOptions::validate(owner);
    SEEDRL_REQUIRE(network.policy_value_heads, owner, ".network needs policy_value_heads");
    SEEDRL_REQUIRE(target_policy_lag >= 0.0 && std::isfinite(target_policy_lag), owner,
                   ".target_policy_lag must be >= 0 (0: a fixed batch), got ", target_policy_lag);
    SEEDRL_REQUIRE(max_batch_multiple >= 1 && max_batch_multiple <= 4096, owner,
                   ".max_batch_multiple must be in [1, 4096], got ", max_batch_multiple);
    vtrace.validate(str_cat(owner, ".vtrace"));
    loss.validate(str_cat(owner, ".loss"));
  }
};

class VTraceAgent : public StochasticPolicyActing {
 public:
  static constexpr std::string_view kName = "vtrace";
  /// Inference stores the behaviour policy's logits with every step: V-trace needs mu(a|x).
  static constexpr bool kStoresLogits = true;

  explicit VTraceAgent(VTraceAgentOptions options) : options_(std::move(options)) {
    options_.validate();
  }

  const VTraceAgentOptions& options() const { return options_; }
  const nn::NetworkOptions& network_config() const { return options_.network; }
  /// Evaluation actors take the most likely action.
  static ActingOptions evaluation_acting() { return {ActionMode::greedy}; }

 private:
  VTraceAgentOptions options_;
};

static_assert(BoxAgent<VTraceAgent>);

}  // namespace seedrl
