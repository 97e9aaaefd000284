// The MinAtar recipes (examples/minatar_vtrace, minatar_ppo, minatar_r2d2; docs/results.md): the
// MinAtar torso (a 3x3 convolution of 16 channels, a linear layer of 128), 4 actor threads of 16
// environments, 5 M frames. The network's input channels and actions are the game's: set them
// with the game's specs (nn::NetworkOptions::minatar).
#pragma once

#include "seedrl/recipes/base.hpp"

namespace seedrl::recipes {

/// V-trace on MinAtar. Each change from vtrace_base() was measured (docs/results_log.md, under
/// the headings quoted).
inline Recipe<VTraceAgentOptions> minatar_vtrace() {
  Recipe<VTraceAgentOptions> r = vtrace_base();
  VTraceAgentOptions& a = r.agent;
  a.network = nn::NetworkOptions::minatar(0, 0);
  a.optimizer.kind = nn::OptimizerKind::adam;
  a.learning_rate.initial = 3e-3;
  // The rate decays linearly to a third of itself, not to 0: a Seaquest seed that learns to
  // surface late met a rate near 0, and 4 seeds of 10 ended on the 7-point plateau (2 of 10 with
  // the floor; Breakout 27.4 against 19.8; "The learning rate's floor").
  r.lr_floor = 1.0 / 3.0;
  // A horizon of about 200 frames, Seaquest's oxygen: what surfacing with a diver is worth lies
  // past the frames a dive has left, and with gamma 0.99 2 of 10 seeds had not learned it by 5 M
  // frames; at 0.995 every seed had, by 3 M ("The discount: 0.995").
  a.discount = 0.995f;
  // V-trace's lambda 0.95, not 1: at the longer horizon two of three Breakout seeds settled near
  // 20 by 10 M frames (26.3) and two Space Invaders seeds collapsed for a while; with 0.95
  // Breakout has 32.9 and every seed above 29 ("V-trace's lambda: 0.95").
  a.vtrace.lambda = 0.95f;
  // The entropy bonus counts at most 0.95 ln 6: a uniform policy leaves uniform at once, so a
  // sparse reward (Freeway) is found on every seed ("The entropy ceiling").
  a.loss.entropy_ceiling = 0.95f;
  // An entropy cost of 0.005, not 0.01: Freeway's policy stays wide at 0.01 (entropy 1.14 - 1.19
  // at 10 M frames) and its training return under gymnax's 58 (55.19 [54.43, 56.18]; the greedy
  // play of the same network 64.7); at 0.005 61.66 [60.98, 62.55], the other four games level
  // ("V-trace on MinAtar Freeway: the entropy cost").
  a.loss.entropy_cost = 0.005f;
  r.run.envs_per_actor = 16;
  // Two learner workers, each taking one micro-batch of 4 unrolls: with polling workers they pay
  // off even on 8 unrolls of 20 steps, and halves of the batch keep the kernels more efficient
  // than quarters (bench_pipeline on 2 cores: 82,000 - 97,000 frames/s on one thread, 103,000 -
  // 106,000 on four micro-batches, 115,000 - 117,000 on two; docs/performance.md).
  r.run.learner_workers = 2;
  r.run.micro_batches = 2;
  r.frames = 5'000'000;
  return r;
}

/// PPO on MinAtar, after gymnax-blines' MinAtar PPO (agents/*-MinAtar/ppo.yaml: 64 environments
/// x 128 steps a batch, 4 epochs of 8 minibatches, Adam 5e-4, clip 0.2, GAE lambda 0.95, entropy
/// 0.01, value cost 0.5, gradient norm 0.5). Unlike those, the rate decays linearly to 0 (theirs
/// stays constant after a 5% warm-up), the network is the other MinAtar examples' and the
/// discount 0.99 (theirs: an MLP of 2 x 256 on the flattened pixels, gamma 0.999). No observation
/// normalisation or reward scaling. One learner compute thread: two run Breakout at 31,600 frames/s
/// against 24,900 with the 2 cores to themselves, but several times slower than one when anything
/// else runs on the cores (the compute library's threads spin at their barriers while the thread
/// they wait for is descheduled; "PPO on MinAtar at 10 M frames").
inline Recipe<PpoAgentOptions> minatar_ppo() {
  Recipe<PpoAgentOptions> r = ppo_base();
  PpoAgentOptions& a = r.agent;
  a.network = nn::NetworkOptions::minatar(0, 0);
  a.batch_size = 64;
  a.epochs = 4;
  a.minibatch_size = 64 * 128 / 8;
  a.learning_rate.initial = 5e-4;
  a.loss.entropy_cost = 0.01f;
  a.normalization.observations = false;
  a.normalization.rewards = false;
  // PPO's own objective, the ratio clipped around the policy that acted, not ppo_base()'s
  // decoupled one: with it Breakout sat on a plateau near 6 from 1 M frames on every tuning seed
  // (6.0 at 3 M, seeds 1-5), with this one 19; the discount 0.999 of gymnax's recipe changed
  // nothing (5.9; docs/results_log.md, "PPO on MinAtar: the objective, not the discount").
  a.proximal_policy = false;
  r.run.num_actors = 4;
  r.run.envs_per_actor = 16;
  r.frames = 5'000'000;
  return r;
}

/// R2D2 on MinAtar: r2d2_base() on the MinAtar torso, unrolls of 20 after a burn-in of 10, new
/// sequences' priorities from the acting Q-values, two learner workers (bench_pipeline: 23,400 ->
/// 43,000 frames/s on 2 cores with the other changes of issue 19; docs/performance.md).
inline Recipe<R2D2AgentOptions> minatar_r2d2() {
  Recipe<R2D2AgentOptions> r = r2d2_base();
  R2D2AgentOptions& a = r.agent;
  const nn::NetworkOptions q = a.network;
  a.network = nn::NetworkOptions::minatar(0, 0);
  a.network.lstm_size = q.lstm_size;
  a.network.policy_value_heads = q.policy_value_heads;
  a.network.q_head = q.q_head;
  a.network.dueling = q.dueling;
  a.actor_priorities = true;
  r.run.envs_per_actor = 16;
  r.run.learner_workers = 2;
  r.run.server.burn_in = 10;
  return r;
}

}  // namespace seedrl::recipes
