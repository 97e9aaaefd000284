// RemoteClient and an Actor over it, against a SocketServer on this machine: refusals that
// retrying can or cannot fix, interrupt(), and an actor that finds a restarted server by itself and
// stops when training is finished. (Also run under ThreadSanitizer in CI.)
#include <doctest/doctest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <atomic>
#include <thread>

#include "seedrl/acting/actor.hpp"
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
  r.spec.action = {5};
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

  RemoteClientOptions no_port;
  no_port.address = "no-port";
  CHECK_THROWS_AS(RemoteClient{no_port}, Error);
  RemoteClientOptions no_time;
  no_time.address = "127.0.0.1:1";
  no_time.connect_timeout = 0ms;
  CHECK_THROWS_AS(RemoteClient{no_time}, Error);
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

namespace {

const ActionSpec kBox = ActionSpec::box({-1.0f, -0.5f}, {1.0f, 0.5f});

/// Observations f32[2] and box actions kBox: each environment's action is its observation
/// (so a test sees the floats arrive), clipped to the bounds unless `clip` is false.
class BoxEndpoint final : public InferenceEndpoint {
 public:
  explicit BoxEndpoint(bool clip = true) : clip_(clip) {}
  const StepSpec& step_spec() const override { return spec_; }
  Status connect(const ConnectRequest& request, Connection* connection) override {
    if (!(request.spec.observation == observation_spec()) || !(request.spec.action == kBox))
      return Status::invalid_argument("other specs");
    *connection = Connection{0, request.num_envs, request.run_id, request.evaluation, ++ids_};
    return Status::ok();
  }
  void submit(StepRequest& request) override {
    const float* obs = request.step.observations.data<float>();
    if (!request.actions.mismatch(kBox, request.step.num_envs()).empty()) {
      request.on_complete(Status::internal("BoxEndpoint: expected box actions"));
      return;
    }
    const std::span<float> box = request.actions.box();
    for (std::size_t i = 0; i < box.size(); ++i) {
      const std::size_t d = i % 2;
      box[i] = clip_ ? std::clamp(obs[i], kBox.low[d], kBox.high[d]) : obs[i];
    }
    ++steps_;
    request.on_complete(Status::ok());
  }
  void disconnect(const Connection&) override {}
  std::int64_t steps() const { return steps_; }

 private:
  bool clip_;
  const StepSpec spec_{{{2}, DType::f32}, kBox, {}};
  std::atomic<std::uint64_t> ids_{0};
  std::atomic<std::int64_t> steps_{0};
};

ConnectRequest box_request(std::int32_t envs) {
  ConnectRequest r = connect_request(31, envs);
  r.spec.action = kBox;
  return r;
}

}  // namespace

TEST_CASE("RemoteClient: box actions arrive as rows of D floats; the other overload is refused") {
  BoxEndpoint endpoint;
  SocketServer server(endpoint, server_options());
  server.start();
  RemoteClient client(client_options(server.address()));
  REQUIRE(client.connect(box_request(3)).is_ok());
  Tensor observations = Tensor::zeros({3, 2});
  const float values[6] = {0.5f, -0.25f, -1.0f, 0.5f, 3.0f, -7.0f};
  std::memcpy(observations.data<float>(), values, sizeof(values));
  std::vector<float> rewards(3, 0.0f), actions(6, 99.0f);
  std::vector<std::uint8_t> flags(3, step_flags::kFirst);
  REQUIRE(client.step({observations, rewards, flags, {}}, std::span<float>(actions)).is_ok());
  CHECK(actions == std::vector<float>{0.5f, -0.25f, -1.0f, 0.5f, 1.0f, -0.5f});

  // The discrete overload on a box connection, or rows of the wrong size: refused, and the
  // connection stays usable.
  std::vector<std::int32_t> discrete(3);
  const Status wrong =
      client.step({observations, rewards, flags, {}}, std::span<std::int32_t>(discrete));
  CHECK(wrong.is_invalid_argument());
  CHECK(wrong.message().find("carries box of 2 in [-1, 1] x [-0.5, 0.5]") != std::string::npos);
  CHECK(wrong.message().find("std::span<float>") != std::string::npos);
  std::vector<float> short_rows(5), too_many(8);
  CHECK(client.step({observations, rewards, flags, {}}, std::span<float>(short_rows))
            .is_invalid_argument());
  const Status rows = client.step({observations, rewards, flags, {}}, std::span<float>(too_many));
  CHECK(rows.is_invalid_argument());
  CHECK(rows.message().find("4 actions") != std::string::npos);
  CHECK(client.connected());
  observations.data<float>()[0] = -0.75f;
  REQUIRE(client.step({observations, rewards, flags, {}}, std::span<float>(actions)).is_ok());
  CHECK(actions[0] == -0.75f);
  CHECK(endpoint.steps() == 2);

  // A discrete connection refuses the box overload the same way.
  FakeEndpoint discrete_endpoint;
  SocketServer discrete_server(discrete_endpoint, server_options());
  discrete_server.start();
  RemoteClient discrete_client(client_options(discrete_server.address()));
  REQUIRE(discrete_client.connect(connect_request(11, 1)).is_ok());
  ClientBuffers buffers(1);
  std::vector<float> box(1);
  const Status not_box = discrete_client.step(
      {buffers.observations, buffers.rewards, buffers.flags, {}}, std::span<float>(box));
  CHECK(not_box.is_invalid_argument());
  CHECK(not_box.message().find("carries 3 discrete actions") != std::string::npos);
  CHECK(not_box.message().find("std::span<std::int32_t>") != std::string::npos);
  CHECK(buffers.step(discrete_client, 2.0f).is_ok());
  CHECK(buffers.actions[0] == 2);
}

TEST_CASE("RemoteClient: a box request the protocol cannot carry throws before connecting") {
  BoxEndpoint endpoint;
  SocketServer server(endpoint, server_options());
  server.start();
  RemoteClient client(client_options(server.address()));
  ConnectRequest r = box_request(1);
  r.spec.action = ActionSpec::box(static_cast<std::int32_t>(protocol::kMaxActionDims) + 1, -1, 1);
  CHECK_THROWS_WITH_AS((void)client.connect(r), doctest::Contains("at most 256 dimensions"), Error);
  r.spec.action = ActionSpec::box({1.0f}, {1.0f});
  CHECK_THROWS_WITH_AS((void)client.connect(r), doctest::Contains("low < high"), Error);
  CHECK(server.stats().accepted == 0);
}

TEST_CASE("RemoteClient: a learner's box action outside the bounds is a server fault, not data") {
  BoxEndpoint endpoint(/*clip=*/false);
  SocketServer server(endpoint, server_options());
  server.start();
  RemoteClient client(client_options(server.address()));
  REQUIRE(client.connect(box_request(1)).is_ok());
  Tensor observations = Tensor::zeros({1, 2});
  std::vector<float> rewards(1, 0.0f), actions(2);
  std::vector<std::uint8_t> flags(1, step_flags::kFirst);
  observations.data<float>()[1] = 0.25f;
  REQUIRE(client.step({observations, rewards, flags, {}}, std::span<float>(actions)).is_ok());
  CHECK(actions[1] == 0.25f);
  observations.data<float>()[1] = 0.75f;  // beyond 0.5: the server refuses to send it
  const Status fault = client.step({observations, rewards, flags, {}}, std::span<float>(actions));
  CHECK(fault.is_unavailable());  // internal: the actor reconnects
  CHECK(fault.message().find("internal") != std::string::npos);
  CHECK(fault.message().find("dimension 1 is outside [-0.5, 0.5]") != std::string::npos);
  CHECK_FALSE(client.connected());
}

namespace {

/// A server of protocol version 1 on a free port: reads a HELLO, answers with `answer` (a
/// version-1 frame), then waits for the client to close.
class OldServer {
 public:
  explicit OldServer(std::string answer) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
    REQUIRE(::listen(fd_, 1) == 0);
    socklen_t size = sizeof(a);
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &size) == 0);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this, answer = std::move(answer)] {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      char buffer[4096];
      (void)::recv(c, buffer, sizeof(buffer), 0);  // the HELLO (its header would do)
      (void)::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
      while (::recv(c, buffer, sizeof(buffer), 0) > 0) {
      }
      ::close(c);
    });
  }
  ~OldServer() {
    ::shutdown(fd_, SHUT_RDWR);  // wakes an accept that never came
    thread_.join();
    ::close(fd_);
  }
  OldServer(const OldServer&) = delete;
  OldServer& operator=(const OldServer&) = delete;
  SocketAddress address() const { return SocketAddress::parse(str_cat("127.0.0.1:", port_)); }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
};

}  // namespace

TEST_CASE("RemoteClient: learners of protocol versions 1 and 2 are refused for good, naming both") {
  // What a version-1 server answers this version's HELLO: an ERROR in version 1.
  std::string error;
  protocol::encode_error(error,
                         {ErrorCode::unsupported_version,
                          "frame header: protocol version 3; this server speaks version 1"},
                         0, /*version=*/1);
  // A version-1 WELCOME (observations f32[2], 3 actions, slot 0, 64 MiB frames), as if it had
  // accepted: its version alone is enough to give up; and a version-2 one.
  auto u32 = [](std::uint32_t v) {
    std::string b(4, '\0');
    for (std::size_t i = 0; i < 4; ++i) b[i] = static_cast<char>(v >> (8 * i));
    return b;
  };
  const std::string welcome = u32(8 + 18) + std::string("\x01\x02\x00\x00", 4) + u32(0) +
                              std::string("\x00\x01", 2) + u32(2) + u32(3) + u32(0) +
                              u32(64u << 20);
  const std::string welcome_v2 = u32(8 + 19) + std::string("\x02\x02\x00\x00", 4) + u32(0) +
                                 std::string("\x00\x01", 2) + u32(2) + std::string(1, '\0') +
                                 u32(3) + u32(0) + u32(64u << 20);
  struct Case {
    const char* what;
    std::string answer;
    int version;
    const char* quoted;  // what the client repeats of the server's answer
  };
  const Case cases[] = {
      {"ERROR", error, 1,
       "(it says: unsupported version: frame header: protocol version 3; this "
       "server speaks version 1)"},
      {"WELCOME", welcome, 1, "update the learner"},
      {"version 2 WELCOME", welcome_v2, 2, "(legal-action masks as bits); update the learner"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    OldServer old(c.answer);
    RemoteClient client(client_options(old.address()));
    const Status refused = client.connect(connect_request(11, 1));
    CHECK(refused.is_invalid_argument());  // an Actor gives up rather than retrying forever
    CHECK(refused.message().find(str_cat("speaks protocol version ", c.version,
                                         "; this client speaks version 4")) != std::string::npos);
    CHECK(refused.message().find(c.quoted) != std::string::npos);
    CHECK_FALSE(client.connected());
  }
}

namespace {

// Observations {0.1 t, -0.2}, within kBox; checks that each action it gets is the observation it
// wrote last (BoxEndpoint echoes them); episodes of 6 steps.
class EchoBoxEnv {
 public:
  explicit EchoBoxEnv(std::atomic<int>* mismatches) : mismatches_(mismatches) {}
  TensorSpec observation_spec() const { return {{2}, DType::f32}; }
  ActionSpec action_spec() const { return kBox; }
  void reset(const Tensor& observation) {
    t_ = 0;
    write(observation);
  }
  StepResult step(std::span<const float> action, const Tensor& observation) {
    if (action.size() != 2 || action[0] != last_[0] || action[1] != last_[1]) ++*mismatches_;
    ++t_;
    write(observation);
    return {1.0f, t_ >= 6, false};
  }

 private:
  void write(const Tensor& observation) {
    last_[0] = 0.1f * static_cast<float>(t_);
    last_[1] = -0.2f;
    observation.data<float>()[0] = last_[0];
    observation.data<float>()[1] = last_[1];
  }
  std::atomic<int>* mismatches_;
  int t_ = 0;
  float last_[2] = {0.0f, 0.0f};
};
static_assert(BoxEnvironment<EchoBoxEnv>);

}  // namespace

TEST_CASE("Actor over RemoteClient: box environments step with the actions the learner sent") {
  BoxEndpoint endpoint;
  SocketServer server(endpoint, server_options());
  server.start();
  std::atomic<int> mismatches{0};
  std::vector<EchoBoxEnv> envs;
  for (int e = 0; e < 2; ++e) envs.emplace_back(&mismatches);
  Actor<EchoBoxEnv, RemoteClient> actor(std::move(envs),
                                        RemoteClient(client_options(server.address())));
  Status result = Status::internal("not run");
  std::thread running([&] { result = actor.run(); });
  const auto start = std::chrono::steady_clock::now();
  while (actor.stats().episodes < 10 && seconds_since(start) < 20.0)
    std::this_thread::sleep_for(5ms);
  actor.stop();
  running.join();
  CHECK(result.is_ok());
  CHECK(actor.stats().episodes >= 10);
  CHECK(endpoint.steps() > 30);
  CHECK(mismatches == 0);
}

}  // namespace test_remote_client
