// train_locally: the whole SEED architecture in one process, wired and run to a frame budget.
//
//   actor threads (num_actors x envs_per_actor envs, LocalClient) ──▶ TrainingSession
//   (InferenceServer, Learner, progress, metrics, checkpoints; see training_session.hpp)
//
// With a logdir holding checkpoint.safetensors the run resumes from it: parameters, optimizer
// state, learner steps and the frame and episode counters continue. A checkpoint is also written
// at the end. Errors in any thread stop the run and are rethrown here.
#pragma once

#include <algorithm>
#include <memory>
#include <string_view>
#include <thread>
#include <vector>

#include "seedrl/acting/actor.hpp"
#include "seedrl/acting/builtin_actors.hpp"
#include "seedrl/acting/inference_client.hpp"
#include "seedrl/env/environment.hpp"
#include "seedrl/session/actor_threads.hpp"
#include "seedrl/session/training_session.hpp"

namespace seedrl {

/// The session's settings plus the in-process actors.
struct LocalTrainerOptions : TrainingSessionOptions {
  std::int32_t num_actors = 4;
  std::int32_t envs_per_actor = 8;
  std::int32_t evaluation_actors = 0;  ///< extra actors that act greedily and do not train

  LocalTrainerOptions() {
    server.max_batch = 0;  // all environments in one batch
  }

  /// max_batch <= 0 in `server` means all environments in one batch.
  void validate(std::string_view owner = "LocalTrainerOptions") const {
    SEEDRL_REQUIRE(num_actors >= 1, owner, ".num_actors must be >= 1, got ", num_actors);
    SEEDRL_REQUIRE(envs_per_actor >= 1, owner, ".envs_per_actor must be >= 1, got ",
                   envs_per_actor);
    SEEDRL_REQUIRE(evaluation_actors >= 0, owner, ".evaluation_actors must be >= 0, got ",
                   evaluation_actors);
    session().validate(owner);  // the session's fields are this struct's too
  }

  /// The session's part, with max_batch and max_slots sized for the actors.
  TrainingSessionOptions session() const {
    TrainingSessionOptions s = *this;
    const std::int32_t envs = (num_actors + evaluation_actors) * envs_per_actor;
    if (s.server.max_batch <= 0) s.server.max_batch = envs;
    s.server.max_slots = std::max(s.server.max_slots, envs);
    return s;
  }
};

/// Trains `agent` on environments from `make_env(actor, env_index)` until total_frames. The run
/// prints nothing unless options.messages says where its lines go (io::console_sink()).
template <Agent A, nn::Backend B, class MakeEnv>
TrainingResult train_locally(const A& agent, MakeEnv make_env, const LocalTrainerOptions& options) {
  using Env = std::invoke_result_t<MakeEnv, std::int32_t, std::int32_t>;
  static_assert(Environment<Env>, "make_env must return an Environment");
  options.validate();
  const Env probe = make_env(0, 0);
  TrainingSession<A, B> session(agent, step_spec(probe), options.session());

  std::vector<std::unique_ptr<Actor<Env, LocalClient>>> actors;
  const std::int32_t total_actors = options.num_actors + options.evaluation_actors;
  for (std::int32_t a = 0; a < total_actors; ++a) {
    std::vector<Env> envs;
    for (std::int32_t e = 0; e < options.envs_per_actor; ++e) envs.push_back(make_env(a, e));
    ActorOptions actor_options;
    actor_options.evaluation = a >= options.num_actors;
    actor_options.first_slot = a * options.envs_per_actor;
    actors.push_back(std::make_unique<Actor<Env, LocalClient>>(
        std::move(envs), LocalClient(session.server()), actor_options));
  }

  std::vector<std::thread> threads;
  auto stop_actors = [&](bool) {
    for (auto& actor : actors) actor->stop();
  };
  auto join_actors = [&] {
    for (std::thread& t : threads)
      if (t.joinable()) t.join();
  };
  try {
    // Actors start before the session runs the server: their first steps wait for it.
    start_actor_threads(session, actors, threads);
    TrainingHooks hooks;
    hooks.stop_sources = stop_actors;
    hooks.join_sources = join_actors;
    return session.run(hooks);
  } catch (...) {
    // Never leave threads running (or std::terminate on their destruction).
    stop_actors(false);
    session.server().stop();
    join_actors();
    throw;
  }
}

}  // namespace seedrl
