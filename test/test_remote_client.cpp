// RemoteClient and an Actor over it, against a SocketServer on this machine: refusals that
// retrying can or cannot fix, interrupt(), and an actor that finds a restarted server by itself and
// stops when training is finished. (Also run under ThreadSanitizer in CI.)
#include <doctest/doctest.h>

#include <thread>

#include "seedrl/runtime/actor.hpp"
#include "seedrl/transport/remote_client.hpp"
#include "seedrl/transport/socket_server.hpp"
#include "support/runtime_fixtures.hpp"
#include "support/transport_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_remote_client {

using namespace seedrl;
using namespace seedrl::test;
using namespace std::chrono_literals;
using protocol::ErrorCode;

// A client whose steps wait an hour: a test that ends one sooner shows that something else
// (an interrupt) ended it, with no assertion on elapsed time.
RemoteClientOptions patient_client_options(const SocketAddress& address) {
  RemoteClientOptions o = client_options(address);
  o.step_timeout = std::chrono::hours(1);
  return o;
}

TEST_CASE("RemoteClient: refusals that retrying cannot fix, and ones it can") {
  FakeEndpoint endpoint;
  SocketServer server(endpoint, server_options());
  server.start();
  RemoteClient wrong_token(client_options(server.address(), "guess"));
  const Status refused = wrong_token.connect(connect_request(11, 1));
  CHECK(refused.is_invalid_argument());
  CHECK(refused.message().find("unauthorized") != std::string::npos);
  CHECK_FALSE(wrong_token.connected());

  RemoteClient wrong_specs(client_options(server.address()));
  ConnectRequest r = connect_request(11, 1);
  r.action_spec = {5};
  CHECK(wrong_specs.connect(r).is_invalid_argument());

  const SocketAddress gone = server.address();
  server.stop();
  RemoteClientOptions patient = client_options(gone);
  patient.connect_timeout = std::chrono::hours(1);  // refused at once, not timed out
  RemoteClient nobody(patient);
  const Status s = nobody.connect(connect_request(11, 1));
  CHECK(s.is_unavailable());
  CHECK(s.message().find(gone.to_string()) != std::string::npos);
  ClientBuffers buffers(1);
  CHECK(buffers.step(nobody, 0.0f).is_unavailable());  // not connected

  CHECK_THROWS_AS(RemoteClient(RemoteClientOptions{"no-port", "", 1s, 1s}), Error);
  CHECK_THROWS_AS(RemoteClient(RemoteClientOptions{"127.0.0.1:1", "", 0ms, 1s}), Error);
}

TEST_CASE("RemoteClient: interrupt() ends a step the server holds, and later connects") {
  FakeEndpoint endpoint;
  SocketServer server(endpoint, server_options());
  server.start();
  RemoteClient client(patient_client_options(server.address()));
  REQUIRE(client.connect(connect_request(11, 1)).is_ok());
  endpoint.hold(true);
  Status status;
  std::thread stepping([&] {
    ClientBuffers buffers(1);
    status = buffers.step(client, 1.0f);
  });
  REQUIRE(endpoint.wait_for_held(1));
  client.interrupt();
  stepping.join();
  CHECK(status.is_closed());  // interrupted, not timed out
  CHECK(client.connect(connect_request(11, 1)).is_closed());
  endpoint.release();
}

namespace {

// Observations {t, 0}; episodes of 5 steps; the actions do not matter.
class CountingEnv {
 public:
  TensorSpec observation_spec() const { return {{2}, DType::f32}; }
  ActionSpec action_spec() const { return {3}; }
  void reset(const Tensor& observation) {
    t_ = 0;
    write(observation);
  }
  StepResult step(std::int32_t, const Tensor& observation) {
    ++t_;
    write(observation);
    return {1.0f, t_ >= 5, false};
  }

 private:
  void write(const Tensor& observation) const {
    observation.data<float>()[0] = static_cast<float>(t_);
    observation.data<float>()[1] = 0.0f;
  }
  int t_ = 0;
};
static_assert(Environment<CountingEnv>);

}  // namespace

TEST_CASE(
    "Actor over RemoteClient: finds a restarted server by itself, stops when training is "
    "finished") {
  FakeEndpoint endpoint;
  auto server = std::make_unique<SocketServer>(endpoint, server_options());
  server->start();
  const SocketAddress address = server->address();
  ActorOptions actor_options;
  actor_options.initial_backoff = 20ms;
  actor_options.max_backoff = 100ms;
  Actor<CountingEnv, RemoteClient> actor(std::vector<CountingEnv>(2),
                                         RemoteClient(client_options(address)), actor_options);
  Status result;
  std::thread running([&] { result = actor.run(); });
  auto wait_for = [](auto condition) {
    const auto start = std::chrono::steady_clock::now();
    while (!condition() && seconds_since(start) < 20.0) std::this_thread::sleep_for(5ms);
    return condition();
  };
  REQUIRE(wait_for([&] { return actor.stats().frames > 50; }));
  const std::uint64_t first_run = actor.run_id();

  server->stop(ErrorCode::shutting_down);
  server.reset();
  std::this_thread::sleep_for(200ms);  // the actor retries against a closed port meanwhile
  server = std::make_unique<SocketServer>(endpoint, server_options(address.to_string()));
  server->start();
  const std::int64_t frames = actor.stats().frames;
  REQUIRE(wait_for(
      [&] { return actor.stats().connections >= 2 && actor.stats().frames > frames + 50; }));
  CHECK(actor.run_id() != first_run);
  CHECK(actor.stats().episodes > 10);

  server->stop(ErrorCode::finished);
  running.join();
  CHECK(result.is_closed());
  CHECK(result.message().find("training is over") != std::string::npos);
}

TEST_CASE("Actor over RemoteClient: stop() interrupts a step the server holds") {
  FakeEndpoint endpoint;
  SocketServer server(endpoint, server_options());
  server.start();
  Actor<CountingEnv, RemoteClient> actor(std::vector<CountingEnv>(1),
                                         RemoteClient(patient_client_options(server.address())));
  endpoint.hold(true);
  Status result = Status::internal("not run");
  std::thread running([&] { result = actor.run(); });
  REQUIRE(endpoint.wait_for_held(1));
  actor.stop();
  running.join();  // the held step would last an hour: only the interrupt ends it
  CHECK(result.is_ok());
  endpoint.release();
}

}  // namespace test_remote_client
