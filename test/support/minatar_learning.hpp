// The MinAtar Breakout learning runs of the test suite, on any backend: V-trace and R2D2 with the
// settings of examples/minatar_vtrace and examples/minatar_r2d2 (constant learning rates, 300,000
// frames). test_local_trainer and test_r2d2_training run them on the CPU, test_cuda_conformance
// on the GPU, against the same thresholds. A policy that has not learned scores about 0.6 per
// episode.
#pragma once

#include <cstdint>

#include "seedrl/agents/r2d2.hpp"
#include "seedrl/agents/vtrace.hpp"
#include "seedrl/env/minatar/breakout.hpp"
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

/// V-trace on Breakout: examples/minatar_vtrace's settings with a constant learning rate.
template <class Backend>
TrainingResult vtrace_learns_breakout(std::int64_t frames = 300000) {
  VTraceAgentOptions o;
  o.network = nn::NetworkOptions::minatar(4, 6);
  o.network.seed = 1;
  o.batch_size = 8;
  o.loss = {0.5f, 0.01f};
  o.optimizer.kind = nn::OptimizerKind::adam;
  o.optimizer.adam.epsilon = 1e-8f;
  o.learning_rate = {3e-3, 0, 0.0};  // constant: the example decays over 5 M frames
  LocalTrainerOptions run = example_run_options(frames);
  run.envs_per_actor = 16;
  return train_locally<VTraceAgent, Backend>(VTraceAgent(o), breakout_for, run);
}

/// R2D2 on Breakout: examples/minatar_r2d2's settings (4 actors x 16 environments, unroll 20,
/// burn-in 10, LSTM 64) with a smaller replay and replay ratio 2 (twice the example's: faster per
/// frame).
template <class Backend>
TrainingResult r2d2_learns_breakout(std::int64_t frames = 300000) {
  R2D2AgentOptions o;
  o.network = nn::NetworkOptions::minatar(4, 6);
  o.network.lstm_size = 64;
  o.network.q_head = true;
  o.network.policy_value_heads = false;
  o.network.dueling = true;
  o.network.seed = 1;
  o.batch_size = 32;
  o.discount = 0.99f;
  o.n_step = 5;
  o.target_update_period = 250;
  o.replay_capacity = 10000;
  o.min_replay_size = 500;
  o.replay_ratio = 2.0;
  o.exploration_slots = 64;
  o.optimizer.adam.epsilon = 1e-6f;  // as examples/minatar_r2d2 (R2D2's 1e-3 learns slower)
  o.learning_rate = {1e-3, 0, 0.0};
  LocalTrainerOptions run;
  run.total_frames = frames;
  run.num_actors = 4;
  run.envs_per_actor = 16;
  run.server.unroll_length = 20;
  run.server.burn_in = 10;
  run.server.seed = 1;
  return train_locally<R2D2Agent, Backend>(R2D2Agent(o), breakout_for, run);
}

}  // namespace seedrl::test
