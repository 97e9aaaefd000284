// PpoAgent: proximal policy optimisation (Schulman et al. 2017) in SEED's shape: actors only step
// environments, inference samples from the current policy centrally and records the behaviour
// policy with every step, and the learner runs several epochs of shuffled minibatches over each
// batch of unrolls. Discrete actions use a softmax policy; box actions (ActionSpec::box) a
// diagonal Gaussian whose draws the server clips to the environment's bounds.
//
// The learning side is Learner<PpoAgent, Backend> (agents/ppo/learner.hpp, included at the end
// of this header).
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string_view>

#include "seedrl/agent/acting.hpp"
#include "seedrl/agent/agent.hpp"
#include "seedrl/algo/ppo_loss.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/math/categorical.hpp"
#include "seedrl/math/distributions.hpp"
#include "seedrl/nn/network.hpp"

namespace seedrl {

/// Defaults are CleanRL's ppo_continuous_action (the MuJoCo settings of Schulman et al.):
/// 2048 transitions per batch (16 unrolls of 128 with InferenceServerOptions.unroll_length 128),
/// 10 epochs of minibatches of 64, GAE lambda 0.95, clip 0.2 with the value clipped too, Adam at
/// 3e-4 (eps 1e-5; the examples decay it linearly to 0 over the run), gradients clipped to a norm
/// of 0.5, observations normalised and rewards scaled by inference (experience/normalization.hpp).
struct PpoAgentOptions : AgentOptions {
  PpoLossOptions loss;       ///< clip, value clip, value and entropy costs, advantage normalisation
  float lambda = 0.95f;      ///< GAE(lambda)
  std::int64_t epochs = 10;  ///< passes over each batch
  std::int64_t minibatch_size = 64;  ///< transitions per update
  /// Unrolls with a step acted by parameters more than this many updates older than the
  /// learner's are dropped (and counted: the metric dropped_unrolls); 0: no bound. The default
  /// is about three batches' worth of updates at the default sizes.
  std::int64_t max_policy_lag = 1000;
  /// Decoupled PPO (Hilton et al. 2021, "Batch size-invariance for policy optimization"): the
  /// ratio is clipped around the proximal policy, the learner's at the start of each batch, and
  /// each transition's policy term is weighted by min(pi_prox / mu, max_behaviour_weight) for the
  /// behaviour policy mu that acted. In SEED the actors act while the learner trains, so a batch
  /// was acted by parameters about one batch of updates old, and clipped around mu itself (false:
  /// the original objective, the default) part of it starts outside the trust region. Measured
  /// (docs/results.md): a little better on MuJoCo (mujoco_ppo turns it on), unstable on Pendulum
  /// at a learning rate of 1e-3.
  bool proximal_policy = false;
  float max_behaviour_weight = 1.0f;  ///< cap of pi_prox / mu (proximal_policy)
  /// Inference waits while the learner trains on a batch (experience/acting_gate.hpp): each batch
  /// is acted by the parameters the last one left, as in synchronous PPO (CleanRL, gymnax), and
  /// the policy lag is the batch's own updates, not SEED's 2 - 3 batches. The control that
  /// measures what the lag costs; the actors idle while the learner works.
  bool synchronous = false;

  PpoAgentOptions() {
    batch_size = 16;
    learning_rate = {3e-4, 0, 0.0};
    optimizer.adam.epsilon = 1e-5f;
    max_grad_norm = 0.5;
    normalization.observations = true;
    normalization.rewards = true;
  }

  void validate(std::string_view owner = "PpoAgentOptions") const {
    AgentOptions::validate(owner);
    SEEDRL_REQUIRE(network.policy_value_heads, owner, ".network needs policy_value_heads");
    SEEDRL_REQUIRE(network.lstm_size == 0, owner,
                   ".network: PPO trains feed-forward networks (lstm_size 0), got "
                   "lstm_size ",
                   network.lstm_size);
    loss.validate(str_cat(owner, ".loss"));
    SEEDRL_REQUIRE(lambda >= 0.0f && lambda <= 1.0f, owner, ".lambda must be in [0, 1], got ",
                   lambda);
    SEEDRL_REQUIRE(epochs >= 1, owner, ".epochs must be >= 1, got ", epochs);
    SEEDRL_REQUIRE(minibatch_size >= 1, owner, ".minibatch_size must be >= 1, got ",
                   minibatch_size);
    SEEDRL_REQUIRE(std::isfinite(max_behaviour_weight) && max_behaviour_weight > 0.0f, owner,
                   ".max_behaviour_weight must be positive and finite, got ", max_behaviour_weight);
    SEEDRL_REQUIRE(max_policy_lag >= 0, owner, ".max_policy_lag must be >= 0, got ",
                   max_policy_lag);
  }
};

class PpoAgent : public StochasticPolicyActing {
 public:
  static constexpr std::string_view kName = "ppo";
  /// Inference records the behaviour policy: PPO's ratio is against it.
  static constexpr bool kStoresLogits = true;
  /// The unroll queue holds one learner batch: actors run at most about a batch ahead of the
  /// learner (TrainingSessionOptions::unroll_queue_capacity).
  static constexpr std::int64_t kQueuedBatches = 1;

  explicit PpoAgent(PpoAgentOptions options) : options_(std::move(options)) { options_.validate(); }

  const PpoAgentOptions& options() const { return options_; }
  const nn::NetworkOptions& network_config() const { return options_.network; }
  /// Evaluation actors take the most likely action (the Gaussian's mean).
  static ActingOptions evaluation_acting() { return {ActionMode::greedy}; }

 private:
  PpoAgentOptions options_;
};

static_assert(BoxAgent<PpoAgent>);

}  // namespace seedrl
