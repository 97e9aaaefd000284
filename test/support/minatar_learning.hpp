// The learning runs of the test suite shared between backends: MinAtar Breakout on any backend:
// V-trace and R2D2 with the settings of examples/minatar_vtrace and examples/minatar_r2d2 (constant
// learning rates, 300,000 frames). test_local_trainer and test_r2d2_training run them on the CPU,
// test_cuda_learners on the GPU, against the same thresholds. A policy that has not learned
// scores about 0.6 per episode.
#pragma once

#include <cstdint>

#include "seedrl/agents/r2d2.hpp"
#include "seedrl/agents/vtrace.hpp"
#include "seedrl/env/minatar/breakout.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"
#include "support/example_defaults.hpp"

namespace seedrl::test {

// 300,000 frames gave 6.2 and 6.2 (two runs, seed 1) on the CPU, and 2.0 - 2.2 with the example's
// earlier optimizer (RMSProp lr 6e-4, eps 1e-5 in the root).
inline constexpr double kVTraceBreakoutReturn = 3.0;
// 300,000 frames gave 4.5 and 3.6 (two runs) on the CPU, and 2.2 with the example's earlier
// optimizer (Adam lr 3e-4, eps 1e-3).
inline constexpr double kR2D2BreakoutReturn = 1.8;

inline MinAtarBreakout breakout_for(std::int32_t actor, std::int32_t env) {
  return MinAtarBreakout(static_cast<std::uint64_t>(1000 * actor + env));
}

/// V-trace on Breakout: examples/minatar_vtrace's network, loss and optimizer with a constant
/// learning rate, gamma 0.99 and lambda 1 (the thresholds were measured there; the example's
/// gamma 0.995 and lambda 0.95 were chosen on runs of millions of frames).
template <class Backend>
TrainingResult vtrace_learns_breakout(std::int64_t frames = 300000) {
  VTraceAgentOptions o;
  o.network = nn::NetworkOptions::minatar(4, 6);
  o.network.seed = 1;
  o.batch_size = 8;
  o.loss.baseline_cost = 0.5f;
  o.loss.entropy_cost = 0.01f;
  o.loss.entropy_ceiling = 0.95f;
  o.optimizer.kind = nn::OptimizerKind::adam;
  o.optimizer.adam.epsilon = 1e-8f;
  o.learning_rate = {3e-3, 0, 0.0};  // constant: the example decays over 5 M frames
  LocalTrainerOptions run = example_run_options(frames);
  run.envs_per_actor = 16;
  return train_locally<VTraceAgent, Backend>(VTraceAgent(o), breakout_for, run);
}

/// The R2D2 agent of the end-to-end tests (test_r2d2_training's Catch runs and Breakout below):
/// an LSTM of 32 and a dueling head on `network`, batch 32, 3-step targets, a small replay.
inline R2D2AgentOptions r2d2_test_options(nn::NetworkOptions network, std::int64_t slots) {
  R2D2AgentOptions o;
  o.network = std::move(network);
  o.network.lstm_size = 32;
  o.network.q_head = true;
  o.network.policy_value_heads = false;
  o.network.dueling = true;
  o.network.seed = 1;
  o.batch_size = 32;
  o.discount = 0.99f;
  o.n_step = 3;
  o.target_update_period = 100;
  o.replay_capacity = 5000;
  o.min_replay_size = 200;
  o.replay_ratio = 2.0;
  o.exploration_slots = slots;
  o.optimizer.adam.epsilon = 1e-6f;  // as examples/minatar_r2d2 (R2D2's 1e-3 learns slower)
  o.learning_rate = {1e-3, 0, 0.0};
  return o;
}

/// The runs of those tests: 4 actors x 8 environments, unrolls of `unroll` after `burn_in`.
inline LocalTrainerOptions r2d2_test_run(std::int64_t frames, std::int64_t unroll,
                                         std::int64_t burn_in) {
  LocalTrainerOptions r;
  r.total_frames = frames;
  r.num_actors = 4;
  r.envs_per_actor = 8;
  r.server.unroll_length = unroll;
  r.server.burn_in = burn_in;
  r.server.seed = 1;
  return r;
}

/// R2D2 on Breakout: examples/minatar_r2d2's settings (4 actors x 16 environments, unroll 20,
/// burn-in 10, LSTM 64) with a smaller replay and replay ratio 2 (twice the example's: faster per
/// frame).
template <class Backend>
TrainingResult r2d2_learns_breakout(std::int64_t frames = 300000) {
  R2D2AgentOptions o = r2d2_test_options(nn::NetworkOptions::minatar(4, 6), 64);
  o.network.lstm_size = 64;
  o.n_step = 5;
  o.target_update_period = 250;
  o.replay_capacity = 10000;
  o.min_replay_size = 500;
  LocalTrainerOptions run = r2d2_test_run(frames, 20, 10);
  run.envs_per_actor = 16;
  return train_locally<R2D2Agent, Backend>(R2D2Agent(o), breakout_for, run);
}

}  // namespace seedrl::test
