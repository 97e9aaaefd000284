// InferenceEndpoint: what an actor's client talks to. The InferenceServer implements it; a
// LocalClient calls it directly, and the socket front end (transport) calls it on behalf of
// remote actors. All members are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <thread>

#include "seedrl/core/action_buffer.hpp"
#include "seedrl/core/status.hpp"
#include "seedrl/core/step_record.hpp"
#include "seedrl/core/step_spec.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/core/tensor_spec.hpp"
#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/env/environment.hpp"

namespace seedrl {

struct ConnectRequest {
  std::uint64_t run_id = 0;   ///< fresh random id of this actor run (new after every reconnect)
  std::int32_t num_envs = 1;  ///< environments the actor steps together
  bool evaluation = false;    ///< act greedily and store nothing
  StepSpec spec;  ///< what the actor's environments' steps are: observation, actions, fields
  std::int32_t first_slot =
      -1;  ///< ask for slots [first_slot, first_slot + num_envs); -1: any free range
};

/// A connected actor: its environments occupy slots [first_slot, first_slot + num_envs). The
/// endpoint's receipt for a connect(); every step presents it. The endpoint trusts only what it
/// recorded itself: `id` must own the slots, and a slot restarts (zero recurrent state, partial
/// unroll dropped) when a step comes from another connection than the one it served last.
struct Connection {
  std::int32_t first_slot = -1;
  std::int32_t num_envs = 0;
  std::uint64_t run_id = 0;  ///< the actor run's id (ConnectRequest::run_id), for logs
  bool evaluation = false;
  std::uint64_t id = 0;  ///< assigned by the endpoint, unique per connect(); 0: none
  bool connected() const { return first_slot >= 0; }
};

/// One step of all of an actor's environments, in flight. The submitter owns it and keeps it, and
/// everything its views point to, alive until on_complete has been called.
struct StepRequest {
  Connection connection;
  StepRecord step;  ///< num_envs environments' step, on the CPU, as the endpoint's spec declares
  /// Room for the answer, filled before on_complete(ok): num_envs * ActionSpec::dims() values,
  /// environment e's at [e * dims, (e + 1) * dims): i32 discrete actions (one, or one per branch),
  /// or f32 box actions within the bounds.
  ActionBuffer actions;
  /// Called exactly once: from the endpoint's inference thread when the step is answered, or
  /// from submit() itself when it is refused. Must return quickly and must not block.
  std::function<void(const Status&)> on_complete;
};

/// Ok, or invalid_argument saying how the steps an actor connects with differ from a server's
/// (every part that differs: observations, actions, declared fields).
inline Status check_actor_spec(const StepSpec& actor, const StepSpec& server) {
  std::string differences;
  auto differ = [&](const char* part, const std::string& theirs, const std::string& ours) {
    differences += str_cat(differences.empty() ? "" : "; ", "actor ", part, " are ", theirs,
                           ", the server expects ", ours);
  };
  if (!(actor.observation == server.observation))
    differ("observations", actor.observation.to_string(), server.observation.to_string());
  if (!(actor.action == server.action))
    differ("actions", actor.action.to_string(), server.action.to_string());
  if (!(actor.fields == server.fields)) {
    differ("step fields", StepSpec::fields_to_string(actor.fields),
           StepSpec::fields_to_string(server.fields));
  }
  return differences.empty() ? Status::ok() : Status::invalid_argument(differences);
}

class InferenceEndpoint {
 public:
  virtual ~InferenceEndpoint() = default;

  /// The steps it serves: observation, actions and declared fields. Actors must have the same.
  virtual const StepSpec& step_spec() const = 0;
  TensorSpec observation_spec() const { return step_spec().observation; }
  ActionSpec action_spec() const { return step_spec().action; }

  /// Reserves slots for an actor. Fails with invalid_argument (wrong specs, too many envs, slots
  /// taken), unavailable (no free slots) or closed (the endpoint stopped).
  virtual Status connect(const ConnectRequest& request, Connection* connection) = 0;

  /// Submits one step asynchronously (see StepRequest). A step from a connection other than the
  /// one a slot served last restarts the slot (fresh recurrent state, partial unroll dropped). A
  /// bad request is answered with invalid_argument and disturbs no other actor.
  virtual void submit(StepRequest& request) = 0;

  /// Frees the actor's slots; its partial unrolls are dropped. Call it only when none of the
  /// connection's steps is in flight.
  virtual void disconnect(const Connection& connection) = 0;

  /// Synchronous step: submits and waits for the answer. The answer usually comes within
  /// microseconds (a batch is served once all connected environments wait), so the caller first
  /// yields its core for up to `spin` (letting the server and the other actors run) before it
  /// sleeps on a condition variable: a sleep and wake-up per step is the cost that limits
  /// in-process actors otherwise.
  Status step(const Connection& connection, const StepRecord& step, std::span<std::int32_t> actions,
              std::chrono::microseconds spin = std::chrono::microseconds(kDefaultSpinMicros)) {
    return step_and_wait({connection, step, ActionBuffer(actions), {}}, spin);
  }
  /// The same for box actions: `actions` holds num_envs * D values.
  Status step(const Connection& connection, const StepRecord& step, std::span<float> actions,
              std::chrono::microseconds spin = std::chrono::microseconds(kDefaultSpinMicros)) {
    return step_and_wait({connection, step, ActionBuffer(actions), {}}, spin);
  }

  static constexpr int kDefaultSpinMicros = 100;

 private:
  // Submits `request` (its on_complete is set here) and waits for the answer as step() describes.
  Status step_and_wait(StepRequest request, std::chrono::microseconds spin) {
    struct Wait {
      Mutex mutex;
      CondVar done;
      std::atomic<bool> finished{false};  // also read without the lock, while spinning
      bool sleeping SEEDRL_GUARDED_BY(mutex) = false;
      Status status SEEDRL_GUARDED_BY(mutex);
    } wait;
    request.on_complete = [w = &wait](const Status& status) {
      MutexLock lock(w->mutex);
      w->status = status;
      w->finished.store(true, std::memory_order_release);
      if (w->sleeping) w->done.notify_one();
    };
    submit(request);
    if (spin.count() > 0 && !wait.finished.load(std::memory_order_acquire)) {
      const auto deadline = std::chrono::steady_clock::now() + spin;
      do {
        std::this_thread::yield();
      } while (!wait.finished.load(std::memory_order_acquire) &&
               std::chrono::steady_clock::now() < deadline);
    }
    // Always through the mutex: on_complete may still hold it, and `wait` dies with this frame.
    MutexLock lock(wait.mutex);
    wait.sleeping = true;
    while (!wait.finished.load(std::memory_order_relaxed)) wait.done.wait(lock);
    return wait.status;
  }
};

}  // namespace seedrl
