// Instantiates seedrl's class templates that hold a lock, so that clang's thread-safety analysis
// (-Wthread-safety, see core/thread_annotations.hpp) checks their code: clang analyses a template
// only where it is instantiated. Compiled, never run: CI builds the target
// seedrl_thread_safety_check with clang (scripts/run-tests.sh). The classes that are no templates
// (RequestBatcher, EpisodeStats, SharedParameters, the transport in src/) and the templates the
// library instantiates itself (InferenceServer, TrainingSession, ReplayBuffer<Unroll>: see
// src/runtime/) are analysed where the library is compiled.
#include <chrono>
#include <memory>

#include "seedrl/acting/actor.hpp"
#include "seedrl/acting/inference_client.hpp"
#include "seedrl/agents/r2d2.hpp"
#include "seedrl/agents/vtrace.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/env/cartpole.hpp"
#include "seedrl/experience/bounded_queue.hpp"
#include "seedrl/experience/episode_stats.hpp"
#include "seedrl/experience/unroll_codec.hpp"
#include "seedrl/inference/inference_server.hpp"
#include "seedrl/inference/request_batcher.hpp"
#include "seedrl/replay/replay_buffer.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/training_session.hpp"
#include "seedrl/shared/shared_parameters.hpp"
#include "seedrl/transport/remote_client.hpp"

namespace seedrl {

template class BoundedQueue<int>;
template class BoundedQueue<std::unique_ptr<Unroll>>;  // UnrollQueue's base (UnrollPool: a class)
template class Actor<CartPole, LocalClient>;
template class Actor<CartPole, RemoteClient>;  // a client with interrupt()

namespace thread_safety_check {

// Member templates are not instantiated with their class: use them once.
void member_templates(BoundedQueue<int>& queue, const ReplayBuffer<Unroll>& replay) {
  (void)queue.pop_for(std::chrono::milliseconds(1));
  (void)queue.pop_for(std::chrono::duration<double>(0.001));
  (void)replay.all_items([](const Unroll&) { return true; });
}

}  // namespace thread_safety_check
}  // namespace seedrl
