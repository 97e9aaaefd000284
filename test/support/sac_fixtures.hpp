// A small SAC agent and random windows of steps for the SAC learner's tests (test_sac_learner,
// test_mpi), and a bandit SAC solves through the whole runtime in a few seconds
// (test_sac_learner, test_run_logdir).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "seedrl/agents/sac.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/experience/unroll_store.hpp"

namespace seedrl::test::sac {

inline const ActionSpec kBox = ActionSpec::box(1, -2.0f, 2.0f);

/// SAC with networks of 8 units on observations f32 [2] and the box [-2, 2]: batch 8, replay ratio
/// 8 (one update per transition) after 8 transitions.
inline SacAgentOptions tiny_options() {
  SacAgentOptions o;
  o.sizes(2, 1);
  o.network.mlp_hidden = {8};
  o.network.seed = 3;
  o.critic_hidden = {8};
  o.batch_size = 8;
  o.learning_starts = 8;
  o.replay_capacity = 64;
  o.replay_ratio = 8.0;
  o.learning_rate = {1e-2, 0, 0.0};
  o.critic_learning_rate = {1e-2, 0, 0.0};
  o.temperature_learning_rate = {1e-2, 0, 0.0};
  o.tau = 0.1;
  return o;
}

/// Windows of n_step + 1 steps for `agent` (its observations f32 [2], kBox).
inline UnrollSpec spec_for(const SacAgent& agent) {
  InferenceServerOptions server;
  server.unroll_length = 1;
  server.burn_in = agent.options().n_step - 1;
  return make_unroll_spec(agent, StepSpec{{{2}, DType::f32}, kBox, {}}, server);
}

// `count` windows of random steps (observations, actions in the box, rewards), one episode end
// in five.
inline std::vector<std::unique_ptr<Unroll>> random_windows(const UnrollSpec& spec, int count,
                                                           std::uint64_t seed) {
  Rng rng(seed);
  UnrollStore store(1, spec);
  std::vector<std::unique_ptr<Unroll>> out;
  Tensor obs = Tensor::empty({2});
  float action = 0.0f;
  std::uint8_t flags = step_flags::kFirst;
  while (static_cast<int>(out.size()) < count) {
    obs.data<float>()[0] = static_cast<float>(rng.uniform(-1, 1));
    obs.data<float>()[1] = static_cast<float>(rng.uniform(-1, 1));
    action = static_cast<float>(rng.uniform(-2, 2));
    UnrollStep s;
    s.observation = obs;
    s.reward = is_first(flags) ? 0.0f : static_cast<float>(rng.uniform(-1, 1));
    s.flags = flags;
    s.set_action(&action);
    if (auto u = store.append(0, s)) out.push_back(std::move(u));
    flags = is_last(flags)        ? step_flags::kFirst
            : rng.uniform() < 0.1 ? step_flags::kTerminated
            : rng.uniform() < 0.1 ? step_flags::kTruncated
                                  : std::uint8_t{0};
  }
  return out;
}

/// A one-step bandit on the box [-1, 1]: reward -(a - 0.6)^2, every episode one step.
struct Bandit {
  TensorSpec observation_spec() const { return {{1}, DType::f32}; }
  ActionSpec action_spec() const { return ActionSpec::box(1, -1.0f, 1.0f); }
  void reset(const Tensor& obs) { obs.data<float>()[0] = 1.0f; }
  StepResult step(std::span<const float> action, const Tensor& obs) {
    obs.data<float>()[0] = 1.0f;
    const float d = action[0] - 0.6f;
    return {.reward = -d * d, .terminated = true, .truncated = false};
  }
};

/// SAC for the bandit: networks of 16 units, batch 32, one update per transition after 200.
inline SacAgentOptions bandit_options() {
  SacAgentOptions o;
  o.sizes(1, 1);
  o.network.mlp_hidden = {16};
  o.network.seed = 2;
  o.critic_hidden = {16};
  o.batch_size = 32;
  o.learning_starts = 200;
  o.replay_capacity = 5'000;
  o.replay_ratio = 32.0;
  o.learning_rate = {3e-3, 0, 0.0};
  o.critic_learning_rate = {3e-3, 0, 0.0};
  o.initial_alpha = 0.1f;
  return o;
}

}  // namespace seedrl::test::sac
