// The recipes of the control tasks (docs/results.md): CartPole and Catch with V-trace
// (examples/cartpole_vtrace), Pendulum and the MuJoCo locomotion tasks with PPO and V-trace
// (pendulum_ppo, mujoco_ppo; --agent vtrace) and with SAC (pendulum_sac, mujoco_sac). The networks
// are MLPs; the observation size and the actions are the environment's (a box action's Gaussian:
// NetworkOptions::gaussian).
#pragma once

#include "seedrl/agents/sac.hpp"
#include "seedrl/recipes/base.hpp"

namespace seedrl::recipes {

/// V-trace on CartPole-v1 (and bsuite Catch): vtrace_base() as it is.
inline Recipe<VTraceAgentOptions> cartpole_vtrace() {
  return vtrace_base();
}

/// PPO on the MuJoCo locomotion tasks: ppo_base() (CleanRL's settings) for 1 M steps.
inline Recipe<PpoAgentOptions> mujoco_ppo() {
  Recipe<PpoAgentOptions> r = ppo_base();
  r.frames = 1'000'000;
  return r;
}

/// PPO on Pendulum-v1, 500 k steps: gamma 0.9 (the reward is immediate: a short horizon learns
/// faster), Adam 1e-3 (RL Baselines3 Zoo's tuned PPO on Pendulum), one shared ReLU torso and the
/// original objective: at this rate the MuJoCo settings (two tanh torsos, decoupled PPO) were
/// unstable on Pendulum (docs/results_log.md).
inline Recipe<PpoAgentOptions> pendulum_ppo() {
  Recipe<PpoAgentOptions> r = ppo_base();
  PpoAgentOptions& a = r.agent;
  a.discount = 0.9f;
  a.learning_rate.initial = 1e-3;
  a.network.mlp_activation = nn::Activation::relu;
  a.network.separate_value_torso = false;
  a.proximal_policy = false;
  return r;
}

/// V-trace on a PPO recipe's task (pendulum_ppo and mujoco_ppo --agent vtrace): the same network,
/// discount, rate, gradient clip, normalisation and value and entropy costs, lambda as V-trace's
/// (the rho clips stay 1); V-trace learns from each transition once, so it takes more, smaller
/// updates than PPO: unrolls of 16 in batches of 8.
inline Recipe<VTraceAgentOptions> vtrace_from(const Recipe<PpoAgentOptions>& ppo) {
  Recipe<VTraceAgentOptions> r;
  static_cast<AgentOptions&>(r.agent) = ppo.agent;
  r.agent.vtrace.lambda = ppo.agent.lambda;
  r.agent.loss.baseline_cost = ppo.agent.loss.value_cost;
  r.agent.loss.entropy_cost = ppo.agent.loss.entropy_cost;
  r.agent.batch_size = 8;
  r.run = ppo.run;
  r.run.server.unroll_length = 16;
  r.frames = ppo.frames;
  r.lr_decay = ppo.lr_decay;
  r.lr_floor = ppo.lr_floor;
  return r;
}

inline Recipe<VTraceAgentOptions> mujoco_vtrace() {
  return vtrace_from(mujoco_ppo());
}
inline Recipe<VTraceAgentOptions> pendulum_vtrace() {
  return vtrace_from(pendulum_ppo());
}

/// SAC on the MuJoCo locomotion tasks: SacAgentOptions' defaults (CleanRL's sac_continuous_action)
/// for 1 M steps, with one actor of one environment, transitions of one step (unroll_length 1),
/// and the rates held constant. Each checkpoint keeps the replay beside it, so that a run of hours
/// stopped and resumed from its logdir goes on sampling what it had (Hopper: about 260 bytes a
/// transition, 260 MB a generation at 1 M; --no-checkpoint-replay to save the space).
inline Recipe<SacAgentOptions> mujoco_sac() {
  Recipe<SacAgentOptions> r;
  r.agent.checkpoint_replay = true;
  r.run.num_actors = 1;
  r.run.envs_per_actor = 1;
  r.run.checkpoint_seconds = 300;
  r.run.server.unroll_length = 1;
  r.frames = 1'000'000;
  r.lr_decay = false;
  return r;
}

/// SAC on Pendulum-v1: mujoco_sac() for 20 k steps, learning from 1,000 random ones.
inline Recipe<SacAgentOptions> pendulum_sac() {
  Recipe<SacAgentOptions> r = mujoco_sac();
  r.agent.learning_starts = 1'000;
  r.frames = 20'000;
  return r;
}

}  // namespace seedrl::recipes
