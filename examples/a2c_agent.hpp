// A2CAgent: an agent added to seedrl from outside the library, as docs/runtime.md ("Adding an
// agent") walks through: the synchronous advantage actor-critic (Mnih et al. 2016) on SEED's
// central inference. Three pieces:
//
//   A2CAgentOptions       AgentOptions plus the loss's costs
//   A2CAgent              the acting side: samples actions from the policy (seedrl::Agent)
//   Learner<A2CAgent, B>  the learning side: its data path and its loss, on seedrl::LearnerCore,
//                         which does the update, checkpoints and metrics
//
// The loss: n-step returns inside each unroll, G_t = r_{t+1} + gamma_t G_{t+1} bootstrapped from
// V(x_T), as the value target, and G_t - V(x_t) as the policy gradient's advantage. Unlike
// V-trace it does not correct for the policy lag (it assumes its unrolls are on-policy), so it
// stores no behaviour logits. Copy this file to start an agent of your own.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "seedrl/seedrl.hpp"

namespace a2c {

struct A2CAgentOptions : seedrl::AgentOptions {
  seedrl::ActorCriticLossOptions loss{0.5f, 0.01f};  ///< baseline and entropy costs

  void validate() const {
    AgentOptions::validate("A2CAgentOptions");
    SEEDRL_REQUIRE(network.policy_value_heads, "A2CAgentOptions.network needs policy_value_heads");
    loss.validate();
  }
};

class A2CAgent {
 public:
  static constexpr std::string_view kName = "a2c";  // checkpoints record it
  static constexpr bool kStoresLogits = false;      // on-policy: no behaviour policy needed

  explicit A2CAgent(A2CAgentOptions options) : options_(std::move(options)) { options_.validate(); }
  const A2CAgentOptions& options() const { return options_; }
  const seedrl::nn::NetworkOptions& network_config() const { return options_.network; }

  /// Samples each frame's action from softmax(logits) (outputs.logits [1, N, A]); evaluation
  /// slots take the most likely one.
  void select_actions(const seedrl::nn::NetworkOutputs& outputs,
                      std::span<const std::int32_t> /*slots*/,
                      std::span<const std::uint8_t> evaluation, std::span<std::int32_t> actions,
                      seedrl::Rng& rng) const {
    seedrl::math::sample_categorical(
        outputs.logits.reshape({outputs.logits.dim(1), outputs.logits.dim(2)}).matrix<float>(),
        evaluation, actions, rng);
  }

 private:
  A2CAgentOptions options_;
};

static_assert(seedrl::Agent<A2CAgent>);

}  // namespace a2c

namespace seedrl {

template <nn::Backend B>
class Learner<a2c::A2CAgent, B> final : public LearnerCore<B> {
 public:
  Learner(const a2c::A2CAgent& agent, const UnrollSpec& spec, UnrollQueue& unrolls)
      : LearnerCore<B>(a2c::A2CAgent::kName, agent.options(), spec, kMetrics),
        agent_(agent),
        unrolls_(unrolls) {}

  /// Waits for batch_size unrolls and trains on them; nothing once the queue is closed and empty.
  std::optional<LearnerStepStats> step() {
    const a2c::A2CAgentOptions& o = agent_.options();
    if (!unrolls_.pop_many(static_cast<std::size_t>(o.batch_size), unrolls_in_))
      return std::nullopt;
    // The data path: T + 1 steps of B unrolls through the network (on the backend's device).
    const auto in = this->pass().stack(unrolls_in_);
    const nn::NetworkOutputs& out =
        host_(this->network().forward(in.observations, in.initial_state, in.resets));
    const std::int64_t steps = this->spec().length - 1, batch = o.batch_size,
                       actions = this->spec().num_actions;
    const Transitions tr = this->pass().transitions(0, steps, o.max_abs_reward);
    const VTraceInputs v = vtrace_inputs(tr, out.values.data<float>(), o.discount);

    // The loss: n-step returns as targets (the boundaries' rewards and discounts come from
    // vtrace_inputs: an episode's end cuts the return, a truncation bootstraps from V).
    VTraceReturns targets{Eigen::ArrayXXf(steps, batch), Eigen::ArrayXXf(steps, batch)};
    for (std::int64_t b = 0; b < batch; ++b) {
      float g = v.bootstrap(b);
      for (std::int64_t t = steps - 1; t >= 0; --t)
        targets.vs(t, b) = g = v.rewards(t, b) + v.discounts(t, b) * g;
    }
    targets.pg_advantages = targets.vs - v.values;
    const auto logits = out.logits.reshape({(steps + 1) * batch, actions})
                            .template matrix<float>()
                            .topRows(steps * batch);
    const ActorCriticLoss loss =
        actor_critic_loss(logits, tr.actions, v.values, targets, o.loss, &tr.mask);

    this->pass().backward_policy_value(loss.grad_logits, loss.grad_values);
    const double values[] = {loss.total_loss, loss.mean_entropy};
    return this->finish_step(values, tr);
  }

 private:
  static constexpr MetricInfo kMetrics[] = {{"total_loss", Reduce::mean, "loss"},
                                            {"entropy", Reduce::mean, "entropy"}};

  const a2c::A2CAgent agent_;
  UnrollQueue& unrolls_;
  std::vector<std::unique_ptr<Unroll>> unrolls_in_;
  HostOutputs host_{B::device};  // the outputs on the host (no copy on the CPU backend)
};

}  // namespace seedrl
