// SocketServer with protocol version 2 over real sockets: a box endpoint serves RemoteClients
// rows of actions within its bounds, a HELLO with other actions or an endpoint whose box the
// protocol cannot carry is refused by name, and an actor of version 1 is told, in version 1, what
// is wrong. (Also run under ThreadSanitizer in CI.) The discrete protocol is
// test_socket_server.cpp.
#include <doctest/doctest.h>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <atomic>
#include <thread>

#include "seedrl/agents/ppo.hpp"
#include "seedrl/env/pendulum.hpp"
#include "seedrl/transport/remote_client.hpp"
#include "seedrl/transport/socket_server.hpp"
#include "support/runtime_fixtures.hpp"
#include "support/transport_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_socket_server_box {

using namespace seedrl;
using namespace seedrl::test;
using namespace std::chrono_literals;
using protocol::ErrorCode;

namespace {

// PPO's Gaussian MLP on Pendulum (observations f32[3], a torque in [-2, 2]) with std e, so that
// many draws fall outside the bounds and are clipped; batches of up to 8 environments.
PpoAgent pendulum_agent() {
  PpoAgentOptions o;
  o.network = nn::NetworkOptions::mlp(3, 0, {8}).gaussian(1);
  o.network.initial_log_std = 1.0f;
  o.network.seed = 11;
  o.batch_size = 2;
  return PpoAgent(o);
}

struct PendulumServer {
  PpoAgent agent = pendulum_agent();
  nn::Network<Backend> learner_net{agent.network_config()};
  SharedParameters parameters{learner_net.parameters()};
  UnrollQueue queue{256};
  InferenceServer<PpoAgent, Backend> server;
  PendulumServer()
      : server(agent, parameters, queue, Pendulum().observation_spec(), Pendulum().action_spec(),
               inference_options()) {
    server.start();
  }
  static InferenceServerOptions inference_options() {
    InferenceServerOptions o;
    o.max_slots = 8;
    o.max_batch = 8;
    o.unroll_length = 4;
    o.seed = 3;
    return o;
  }
};

ConnectRequest pendulum_request(std::int32_t envs, ActionSpec actions = Pendulum().action_spec()) {
  ConnectRequest r;
  r.run_id = 21;
  r.num_envs = envs;
  r.spec.observation = Pendulum().observation_spec();
  r.spec.action = std::move(actions);
  return r;
}

// A TCP connection for bytes no RawConnection reads (frames of another protocol version).
class OldActorConnection {
 public:
  explicit OldActorConnection(const SocketAddress& address) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(address.port);
    ::inet_pton(AF_INET, address.host.c_str(), &a.sin_addr);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  }
  ~OldActorConnection() { ::close(fd_); }
  OldActorConnection(const OldActorConnection&) = delete;
  OldActorConnection& operator=(const OldActorConnection&) = delete;

  bool send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  /// Everything the server sends until it closes (or 10 s pass).
  std::string read_until_closed() {
    std::string out;
    char buffer[4096];
    while (true) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 10'000) <= 0) return out;
      const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) return out;
      out.append(buffer, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_ = -1;
};

std::uint32_t u32_at(const std::string& bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i)
    v = (v << 8) | static_cast<std::uint8_t>(bytes[at + static_cast<std::size_t>(i)]);
  return v;
}

}  // namespace

TEST_CASE("SocketServer: actors of protocol versions 1 and 2 are told, in theirs, what is wrong") {
  FakeEndpoint endpoint;
  SocketServer server(endpoint, server_options());
  server.start();
  // HELLOs as older actors write them: version 2's without the field count at the end, version
  // 1's without the action kind byte either.
  const std::string hello = hello_frame(kToken);
  const std::size_t kind_at = hello.size() - 6;
  REQUIRE(hello[kind_at] == 0);  // discrete
  REQUIRE(hello.back() == 0);    // no declared fields
  std::string v2_hello = hello.substr(0, hello.size() - 1);
  v2_hello[0] = static_cast<char>(v2_hello[0] - 1);  // length
  v2_hello[4] = 2;                                   // version
  std::string v1_hello = v2_hello;
  v1_hello.erase(kind_at, 1);
  v1_hello[0] = static_cast<char>(v1_hello[0] - 1);
  v1_hello[4] = 1;
  for (const auto& [old_version, frame] : {std::pair{1, v1_hello}, std::pair{2, v2_hello}}) {
    const int version = old_version;  // a copy: clang 14 cannot capture a structured binding
    CAPTURE(version);
    std::string sent = frame;
    sent[8] = 42;  // sequence
    OldActorConnection actor(server.address());
    REQUIRE(actor.send(sent));
    const std::string answer = actor.read_until_closed();
    // One ERROR frame, with the old version's header and ERROR layout: the actor decodes it.
    REQUIRE(answer.size() >= protocol::kHeaderBytes + 4);
    CHECK(u32_at(answer, 0) + 4 == answer.size());
    CHECK(answer[4] == version);
    CHECK(answer[5] == static_cast<char>(protocol::FrameType::error));
    CHECK(u32_at(answer, 8) == 42);  // the HELLO's sequence
    protocol::ErrorFrame error;
    const std::string payload = answer.substr(protocol::kHeaderBytes);
    REQUIRE(protocol::decode_error(
                {reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()}, &error)
                .is_ok());
    CHECK(error.code == ErrorCode::unsupported_version);
    CHECK(error.message == str_cat("protocol version ", version,
                                   " is not supported: this server speaks version 4 (legal-action "
                                   "masks as bits); update the actor"));
  }
  CHECK(server.stats().refused == 2);
  CHECK(endpoint.connects() == 0);
}

TEST_CASE("SocketServer: a box endpoint serves RemoteClients rows of actions within the bounds") {
  PendulumServer f;
  SocketServer server(f.server, server_options());
  server.start();
  RemoteClient client(client_options(server.address()));
  REQUIRE(client.connect(pendulum_request(2)).is_ok());

  Pendulum envs[2] = {Pendulum(1), Pendulum(2)};
  Tensor observations = Tensor::zeros({2, 3});
  std::vector<float> rewards(2, 0.0f), actions(2, 99.0f);
  std::vector<std::uint8_t> flags(2, step_flags::kFirst);
  for (std::int64_t e = 0; e < 2; ++e) envs[e].reset(observations[e]);
  int clipped = 0;
  constexpr int kSteps = 20;
  for (int t = 0; t < kSteps; ++t) {
    CAPTURE(t);
    REQUIRE(client.step({observations, rewards, flags, {}}, std::span<float>(actions)).is_ok());
    for (std::int64_t e = 0; e < 2; ++e) {
      const float a = actions[static_cast<std::size_t>(e)];
      CHECK(a >= -2.0f);
      CHECK(a <= 2.0f);
      clipped += a == -2.0f || a == 2.0f;
      const StepResult result = envs[e].step(
          std::span<const float>(&actions[static_cast<std::size_t>(e)], 1), observations[e]);
      rewards[static_cast<std::size_t>(e)] = result.reward;
      flags[static_cast<std::size_t>(e)] = 0;
    }
  }
  CHECK(clipped > 0);  // std e: draws beyond the bounds came back clipped, not refused
  // The discrete overload is the wrong one for this connection, and says so.
  std::vector<std::int32_t> discrete(2);
  const Status wrong =
      client.step({observations, rewards, flags, {}}, std::span<std::int32_t>(discrete));
  CHECK(wrong.is_invalid_argument());
  CHECK(wrong.message().find("box of 1 in [-2, 2]") != std::string::npos);
  CHECK(server.stats().steps == kSteps);
  client.disconnect();
  // The steps went into unrolls of T + 1 = 5 steps, overlapping by one: 4 per environment.
  const auto start = std::chrono::steady_clock::now();
  while (f.queue.size() < 8 && seconds_since(start) < 10.0) std::this_thread::sleep_for(1ms);
  CHECK(f.queue.size() == 8);
  std::vector<std::unique_ptr<Unroll>> unrolls;
  REQUIRE(f.queue.pop_many(1, unrolls));
  CHECK(unrolls.front()->actions.shape() == Shape{5, 1});
  server.stop();
}

TEST_CASE("SocketServer: a HELLO whose actions differ from a box endpoint's is refused by name") {
  PendulumServer f;
  SocketServer server(f.server, server_options());
  server.start();
  struct Case {
    const char* what;
    ActionSpec actions;
    const char* named;
  };
  const Case cases[] = {
      {"other bounds", ActionSpec::box(1, -1.0f, 1.0f), "actor actions are box of 1 in [-1, 1]"},
      {"one bound differs", ActionSpec::box({-2.0f}, {2.5f}), "box of 1 in [-2, 2.5]"},
      {"another dimension count", ActionSpec::box(2, -2.0f, 2.0f), "box of 2"},
      {"discrete actions", ActionSpec::discrete(3), "3 discrete actions"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    RemoteClient client(client_options(server.address()));
    const Status refused = client.connect(pendulum_request(1, c.actions));
    CHECK(refused.is_invalid_argument());
    CHECK(refused.message().find("invalid request") != std::string::npos);
    CHECK(refused.message().find(c.named) != std::string::npos);
    CHECK(refused.message().find("the server expects box of 1 in [-2, 2]") != std::string::npos);
    CHECK_FALSE(client.connected());
  }
  CHECK(server.stats().refused == 4);
  // And a box actor at a discrete learner.
  FakeEndpoint discrete;
  SocketServer discrete_server(discrete, server_options());
  discrete_server.start();
  RemoteClient client(client_options(discrete_server.address()));
  ConnectRequest box = connect_request(5, 1);
  box.spec.action = ActionSpec::box(1, -1.0f, 1.0f);
  const Status refused = client.connect(box);
  CHECK(refused.is_invalid_argument());
  CHECK(refused.message().find("the server expects 3 discrete actions") != std::string::npos);
  CHECK(discrete.connects() == 0);
}

TEST_CASE("SocketServer: an endpoint whose box the protocol cannot carry is refused by name") {
  struct WideEndpoint final : InferenceEndpoint {
    const StepSpec& step_spec() const override { return spec; }
    StepSpec spec{
        {{2}, DType::f32},
        ActionSpec::box(static_cast<std::int32_t>(protocol::kMaxActionDims) + 1, -1.0f, 1.0f),
        {}};
    Status connect(const ConnectRequest&, Connection*) override { return Status::ok(); }
    void submit(StepRequest& r) override { r.on_complete(Status::ok()); }
    void disconnect(const Connection&) override {}
  } endpoint;
  CHECK_THROWS_WITH_AS(SocketServer(endpoint, server_options()),
                       doctest::Contains("box actions of at most 256 dimensions"), Error);
}

}  // namespace test_socket_server_box
