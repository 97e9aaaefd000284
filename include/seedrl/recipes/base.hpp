// The agents' starting points for the recipes (recipes/minatar.hpp, control.hpp, games.hpp): what
// every recipe of an agent shares, and what each family then changes.
#pragma once

#include "seedrl/agents/ppo.hpp"
#include "seedrl/agents/r2d2.hpp"
#include "seedrl/agents/vtrace.hpp"
#include "seedrl/recipes/recipe.hpp"

namespace seedrl::recipes {

/// The in-process run of the examples: 4 actor threads of 8 environments, unrolls of 20, a
/// checkpoint every 5 minutes.
inline LocalTrainerOptions examples_run() {
  LocalTrainerOptions run;
  run.num_actors = 4;
  run.envs_per_actor = 8;
  run.checkpoint_seconds = 300;
  run.server.unroll_length = 20;
  return run;
}

/// V-trace as the small discrete problems take it (CartPole, the games): an MLP of 64 x 64,
/// batches of 8 unrolls, RMSProp at 3e-3 (epsilon 1e-5 inside the root) decayed to 0 over the
/// run, entropy cost 0.01, lambda and the rho clips 1, gradient norm 40; 500 k frames.
inline Recipe<VTraceAgentOptions> vtrace_base() {
  Recipe<VTraceAgentOptions> r;
  VTraceAgentOptions& a = r.agent;
  a.network = nn::NetworkOptions::mlp(0, 0, {64, 64});
  a.batch_size = 8;
  a.optimizer.kind = nn::OptimizerKind::rmsprop;
  a.optimizer.rmsprop.epsilon = 1e-5f;
  a.learning_rate = {3e-3, 0, 0.0};
  a.loss.baseline_cost = 0.5f;
  a.loss.entropy_cost = 0.01f;
  r.run = examples_run();
  r.frames = 500'000;
  return r;
}

/// PPO as CleanRL's ppo_continuous_action has it (PpoAgentOptions' defaults: 16 unrolls of 128 =
/// 2,048 transitions a batch, 10 epochs of minibatches of 64, Adam 3e-4 with epsilon 1e-5 decayed
/// to 0, gradient norm 0.5, observations normalised and rewards scaled) with CleanRL's network
/// (separate 64 x 64 tanh MLPs for the policy and the value) and the decoupled objective
/// (PpoAgentOptions::proximal_policy), which did a little better on MuJoCo; 2 actor threads of 8
/// environments.
inline Recipe<PpoAgentOptions> ppo_base() {
  Recipe<PpoAgentOptions> r;
  PpoAgentOptions& a = r.agent;
  a.network = nn::NetworkOptions::mlp(0, 0, {64, 64});
  a.network.mlp_activation = nn::Activation::tanh;
  a.network.separate_value_torso = true;
  a.proximal_policy = true;
  r.run = examples_run();
  r.run.num_actors = 2;
  r.run.server.unroll_length = 128;
  r.frames = 500'000;
  return r;
}

/// R2D2 as the small problems take it (after R2D2 and seed_rl's r2d2, scaled down): a dueling Q
/// head on an LSTM of 64, batches of 32 sequences, Adam 1e-3 (epsilon 1e-6) held constant,
/// gradient norm 80, discount 0.99, 5-step double-Q targets, a target copy every 250 learner
/// steps, 20,000 sequences of prioritized replay (0.9, 0.6), learning from 500, one sequence
/// sampled per one inserted, Ape-X's per-slot epsilons (0.4, 7).
inline Recipe<R2D2AgentOptions> r2d2_base() {
  Recipe<R2D2AgentOptions> r;
  R2D2AgentOptions& a = r.agent;
  a.network = nn::NetworkOptions::mlp(0, 0, {64, 64});
  a.network.lstm_size = 64;
  a.network.policy_value_heads = false;
  a.network.q_head = true;
  a.network.dueling = true;
  a.batch_size = 32;
  a.discount = 0.99f;
  a.optimizer.adam.epsilon = 1e-6f;
  a.learning_rate = {1e-3, 0, 0.0};
  a.max_grad_norm = 80.0;
  a.target_update_period = 250;
  a.replay_capacity = 20'000;
  a.min_replay_size = 500;
  r.run = examples_run();
  r.frames = 5'000'000;
  r.lr_decay = false;
  return r;
}

}  // namespace seedrl::recipes
