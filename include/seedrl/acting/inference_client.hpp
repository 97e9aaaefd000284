// The InferenceClient concept and LocalClient, the in-process client.
//
// An actor talks to inference only through a client:
//
//   struct MyClient {
//     seedrl::Status connect(const seedrl::ConnectRequest&);
//     seedrl::Status step(const seedrl::StepRecord& step, std::span<std::int32_t> actions);
//     void disconnect();
//   };
//   static_assert(seedrl::InferenceClient<MyClient>);
//
// A client that also serves box actions (ActionSpec::box) has the same step() with
// `std::span<float> actions` (num_envs * D values) and satisfies BoxInferenceClient.
//
// A status that is closed() means the server shut down: the actor stops. unavailable() means the
// connection was lost: the actor reconnects (with a new run id) after a back-off. A client may
// also have a thread-safe `void interrupt()` that makes a step in progress return: Actor::stop()
// calls it when it exists (RemoteClient has one; LocalClient's steps end when the server stops).
#pragma once

#include <chrono>
#include <concepts>
#include <span>

#include "seedrl/acting/inference_endpoint.hpp"

namespace seedrl {

template <class C>
concept InferenceClient = requires(C& client, const ConnectRequest& request, const StepRecord& step,
                                   std::span<std::int32_t> actions) {
  { client.connect(request) } -> std::same_as<Status>;
  { client.step(step, actions) } -> std::same_as<Status>;
  client.disconnect();
};

/// A client that can also step environments with box actions (num_envs * D floats).
template <class C>
concept BoxInferenceClient = InferenceClient<C> &&
    requires(C& client, const StepRecord& step, std::span<float> actions) {
  { client.step(step, actions) } -> std::same_as<Status>;
};

/// Connects an actor to an InferenceServer in the same process: observations (and declared
/// fields) are read straight from the actor's buffers into the inference batch (one copy),
/// actions written straight back.
/// One client per actor; not shared between threads.
///
/// Waiting for actions: the client yields its core for a short while before it sleeps (see
/// InferenceEndpoint::step), but only while answers come about that fast: it keeps a moving
/// average of its waits and stops yielding when they are much longer (a large model, a busy
/// server), so that actors never take cycles from a long inference batch.
class LocalClient {
 public:
  explicit LocalClient(InferenceEndpoint& endpoint) : endpoint_(&endpoint) {}

  Status connect(const ConnectRequest& request) {
    if (connection_.connected()) disconnect();
    return endpoint_->connect(request, &connection_);
  }
  Status step(const StepRecord& step, std::span<std::int32_t> actions) {
    return timed_step(step, actions);
  }
  Status step(const StepRecord& step, std::span<float> actions) {
    return timed_step(step, actions);
  }
  void disconnect() {
    if (!connection_.connected()) return;
    endpoint_->disconnect(connection_);
    connection_ = {};
  }
  const Connection& connection() const { return connection_; }

 private:
  template <class Action>
  Status timed_step(const StepRecord& step, std::span<Action> actions) {
    if (!connection_.connected()) return Status::unavailable("LocalClient: not connected");
    const auto start = std::chrono::steady_clock::now();
    const bool spin = average_wait_us_ < 2.0 * InferenceEndpoint::kDefaultSpinMicros;
    Status status = endpoint_->step(
        connection_, step, actions,
        std::chrono::microseconds(spin ? InferenceEndpoint::kDefaultSpinMicros : 0));
    const double waited =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    average_wait_us_ += 0.1 * (waited - average_wait_us_);
    return status;
  }

  InferenceEndpoint* endpoint_;
  Connection connection_;
  double average_wait_us_ = 0.0;  ///< moving average of step() waits
};

static_assert(BoxInferenceClient<LocalClient>);

}  // namespace seedrl
