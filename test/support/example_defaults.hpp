// The settings of examples/cartpole_vtrace, for tests that train a small agent in process
// (CartPole, Catch) on either backend.
#pragma once

#include <string>
#include <utility>

#include "seedrl/agents/vtrace.hpp"
#include "seedrl/env/catch.hpp"
#include "seedrl/env/flatten_observation.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"

namespace seedrl::test {

/// examples/cartpole_vtrace's agent: batch 8, RMSProp 3e-3 decaying to 0 over `frames`.
inline VTraceAgentOptions example_vtrace_options(nn::NetworkOptions network, std::int64_t frames) {
  VTraceAgentOptions o;
  o.network = std::move(network);
  o.network.seed = 1;
  o.batch_size = 8;
  o.loss.baseline_cost = 0.5f;
  o.loss.entropy_cost = 0.01f;
  o.optimizer.kind = nn::OptimizerKind::rmsprop;
  o.learning_rate = {3e-3, frames / (8 * 20), 0.0};
  return o;
}

/// examples/cartpole_vtrace's run: 4 actors x 8 environments, unrolls of 20.
inline LocalTrainerOptions example_run_options(std::int64_t frames, std::string logdir = {}) {
  LocalTrainerOptions r;
  r.total_frames = frames;
  r.num_actors = 4;
  r.envs_per_actor = 8;
  r.server.unroll_length = 20;
  r.server.seed = 1;
  r.logdir = std::move(logdir);
  return r;
}

/// bsuite Catch with its board flattened for the MLP, a seed per (actor, environment).
inline FlattenObservation<Catch> make_catch(std::int32_t actor, std::int32_t env) {
  return FlattenObservation(Catch(static_cast<std::uint64_t>(100 * actor + env)));
}

}  // namespace seedrl::test
