// SocketServer over real sockets on this machine: steps arrive intact, every kind of bad frame is
// refused without disturbing a good actor, limits and timeouts, faults and shutdown, Unix socket
// files. (Also run under ThreadSanitizer in CI.) The client side is test_remote_client.cpp.
#include <doctest/doctest.h>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "seedrl/agents/ppo.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/env/pendulum.hpp"
#include "seedrl/transport/remote_client.hpp"
#include "seedrl/transport/socket_server.hpp"
#include "support/runtime_fixtures.hpp"
#include "support/transport_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_socket_server {

using namespace seedrl;
using namespace seedrl::test;
using namespace std::chrono_literals;
using protocol::ErrorCode;

namespace {

std::string temp_socket_path(const char* name) {
  return (std::filesystem::temp_directory_path() /
          str_cat("seedrl_test_", ::getpid(), "_", name, ".sock"))
      .string();
}

// The HELLO and WELCOME exchange on a raw connection.
void handshake(RawConnection& raw, std::uint32_t envs = 1) {
  REQUIRE(raw.send(hello_frame(kToken, envs)));
  RawConnection::Frame welcome;
  REQUIRE(raw.read_frame(&welcome));
  REQUIRE(welcome.header.type == protocol::FrameType::welcome);
}

}  // namespace

TEST_CASE("SocketServer: a RemoteClient's steps arrive intact over TCP and a Unix socket") {
  for (const std::string& listen :
       {std::string("127.0.0.1:0"), "unix:" + temp_socket_path("intact")}) {
    CAPTURE(listen);
    FakeEndpoint endpoint;
    SocketServer server(endpoint, server_options(listen));
    server.start();
    RemoteClient client(client_options(server.address()));
    REQUIRE(client.connect(connect_request(11, 3)).is_ok());
    CHECK(client.connected());
    CHECK(client.first_slot() == 0);
    ClientBuffers buffers(3);
    for (int value : {0, 1, 2, 4, 5}) {
      REQUIRE(buffers.step(client, static_cast<float>(value)).is_ok());
      CHECK(buffers.actions == std::vector<std::int32_t>(3, value % 3));
    }
    CHECK(endpoint.last_rewards() == std::vector<float>(3, 0.25f));
    CHECK(endpoint.last_flags() == std::vector<std::uint8_t>(3, step_flags::kFirst));
    CHECK(endpoint.steps() == 5);
    client.disconnect();
    CHECK_FALSE(client.connected());
    REQUIRE(endpoint.wait_for_disconnects(1));
    CHECK(endpoint.free_slots() == 64);
    const SocketServerStats stats = server.stats();
    CHECK(stats.accepted == 1);
    CHECK(stats.handshakes == 1);
    CHECK(stats.steps == 5);
    CHECK(stats.refused == 0);
    CHECK(stats.bytes_received > 5 * (12 + 16 + 24));
    server.stop();
    if (server.address().is_unix()) CHECK_FALSE(std::filesystem::exists(server.address().path));
  }
}

TEST_CASE(
    "SocketServer: every kind of bad frame is refused while a good actor keeps getting actions") {
  FakeEndpoint endpoint;
  std::vector<std::string> log;
  std::mutex log_mutex;
  SocketServerOptions options = server_options();
  options.log = [&](const std::string& line) {
    std::lock_guard lock(log_mutex);
    log.push_back(line);
  };
  SocketServer server(endpoint, options);
  server.start();
  const SocketAddress address = server.address();

  // The well-behaved actor: steps all along and checks every answer.
  std::atomic<bool> done{false};
  std::atomic<std::int64_t> good_steps{0}, bad_answers{0};
  std::thread good([&] {
    RemoteClient client(client_options(address));
    if (!client.connect(connect_request(99, 2)).is_ok()) {
      ++bad_answers;
      return;
    }
    ClientBuffers buffers(2);
    for (int i = 0; !done; ++i) {
      const Status s = buffers.step(client, static_cast<float>(i % 7));
      if (!s.is_ok() || buffers.actions[0] != (i % 7) % 3 || buffers.actions[1] != (i % 7) % 3)
        ++bad_answers;
      ++good_steps;
    }
  });
  while (good_steps < 10) std::this_thread::sleep_for(1ms);

  auto expect_refusal = [&](const std::string& what,
                            const std::function<void(RawConnection&)>& send,
                            std::optional<ErrorCode> code) {
    CAPTURE(what);
    const std::int64_t before = good_steps;
    RawConnection raw(address);
    send(raw);
    const auto error = raw.read_error();
    REQUIRE(error.has_value());
    if (code) CHECK(error->code == *code);
    CHECK_FALSE(error->message.empty());
    CHECK(raw.closed_by_peer());
    // The good actor was not disturbed and is still being served.
    while (good_steps < before + 5) std::this_thread::sleep_for(1ms);
    CHECK(bad_answers == 0);
  };

  Rng rng(2024);
  std::string random_bytes(256, '\0');
  for (char& c : random_bytes) c = static_cast<char>(rng.next_u64());
  expect_refusal(
      "random bytes", [&](RawConnection& raw) { raw.send(random_bytes); }, std::nullopt);

  const std::string hello = hello_frame(kToken);
  expect_refusal(
      "a truncated frame",
      [&](RawConnection& raw) {
        raw.send(hello.substr(0, hello.size() / 2));
        raw.shutdown_write();
      },
      ErrorCode::malformed);

  std::string huge_length = hello.substr(0, protocol::kHeaderBytes);
  std::memset(huge_length.data(), 0xff, 4);  // length field 2^32 - 1
  expect_refusal(
      "a length field of 2^32-1", [&](RawConnection& raw) { raw.send(huge_length); },
      ErrorCode::frame_too_large);

  expect_refusal(
      "a frame too large for the handshake",
      [&](RawConnection& raw) {
        std::string big;
        protocol::encode_header(big, protocol::FrameType::hello, 0, 10'000);
        raw.send(big);
      },
      ErrorCode::frame_too_large);

  expect_refusal(
      "an oversized STEP after the handshake",
      [&](RawConnection& raw) {
        handshake(raw);
        std::string big;
        protocol::encode_header(big, protocol::FrameType::step, 1, 1'000'000);
        raw.send(big);
      },
      ErrorCode::frame_too_large);

  expect_refusal(
      "a wrong token", [&](RawConnection& raw) { raw.send(hello_frame("wrong horse")); },
      ErrorCode::unauthorized);

  expect_refusal(
      "a newer version",  // answered in this server's version, which a newer actor reads
      [&](RawConnection& raw) {
        std::string newer = hello;
        newer[4] = static_cast<char>(protocol::kVersion + 1);
        raw.send(newer);
      },
      ErrorCode::unsupported_version);

  expect_refusal(
      "a step before the handshake", [&](RawConnection& raw) { raw.send(step_frame(1, 1.0f)); },
      ErrorCode::invalid_request);

  expect_refusal(
      "an observation of the wrong size",
      [&](RawConnection& raw) {
        handshake(raw);
        const std::vector<float> rewards{0.0f}, obs{1.0f, 2.0f, 3.0f};
        const std::vector<std::uint8_t> flags{step_flags::kFirst};
        std::string step;
        protocol::encode_step(step, 1, rewards, flags,
                              {reinterpret_cast<const std::uint8_t*>(obs.data()), 12});
        raw.send(step);
      },
      ErrorCode::invalid_request);

  expect_refusal(
      "another environment count than the handshake's",
      [&](RawConnection& raw) {
        handshake(raw, 1);
        raw.send(step_frame(2, 1.0f));
      },
      ErrorCode::invalid_request);

  expect_refusal(
      "a second HELLO",
      [&](RawConnection& raw) {
        handshake(raw);
        raw.send(hello);
      },
      ErrorCode::invalid_request);

  expect_refusal(
      "a server's frame from an actor",
      [&](RawConnection& raw) {
        std::string actions;
        const std::vector<std::int32_t> a{1};
        protocol::encode_actions(actions, 0, a);
        raw.send(actions);
      },
      ErrorCode::malformed);

  expect_refusal(
      "other observation specs",
      [&](RawConnection& raw) {
        protocol::Hello h;
        h.token = kToken;
        h.run_id = 5;
        h.num_envs = 1;
        h.spec.observation = {{4, 84, 84}, DType::u8};
        h.spec.action = ActionSpec::discrete(3);
        std::string frame;
        protocol::encode_hello(frame, h);
        raw.send(frame);
      },
      ErrorCode::invalid_request);

  expect_refusal(
      "nonzero reserved bits after a good handshake",
      [&](RawConnection& raw) {
        handshake(raw);
        std::string step = step_frame(1, 1.0f);
        step[6] = 1;
        raw.send(step);
      },
      ErrorCode::malformed);

  // A frame whose bytes trickle in, one at a time, is still accepted.
  {
    RawConnection raw(address);
    for (char c : hello) REQUIRE(raw.send(std::string(1, c)));
    RawConnection::Frame welcome;
    REQUIRE(raw.read_frame(&welcome));
    CHECK(welcome.header.type == protocol::FrameType::welcome);
  }

  // Still served after all of that: a count, not a rate (a sanitizer on a loaded machine is slow).
  for (int i = 0; good_steps <= 100 && i < 30'000; ++i) std::this_thread::sleep_for(1ms);
  done = true;
  good.join();
  CHECK(bad_answers == 0);
  CHECK(good_steps > 100);
  // Every refused connection gave its slots back; the good actor's two are free again as well.
  REQUIRE(endpoint.wait_for_disconnects(endpoint.connects()));
  CHECK(endpoint.free_slots() == 64);
  CHECK(server.stats().refused == 14);
  server.stop();
  std::lock_guard lock(log_mutex);
  const bool logged = std::any_of(log.begin(), log.end(), [](const std::string& l) {
    return l.find("refused (unauthorized)") != std::string::npos;
  });
  CHECK(logged);
}

TEST_CASE("SocketServer: silent connections time out, before and after the handshake") {
  FakeEndpoint endpoint;
  SocketServerOptions options = server_options();
  options.handshake_timeout = 150ms;
  options.idle_timeout = 250ms;
  SocketServer server(endpoint, options);
  server.start();
  {
    RawConnection raw(server.address());
    const auto error = raw.read_error(5s);
    REQUIRE(error.has_value());
    CHECK(error->code == ErrorCode::idle_timeout);
    CHECK(error->message.find("HELLO") != std::string::npos);
  }
  {
    RawConnection raw(server.address());
    handshake(raw);
    const auto error = raw.read_error(5s);
    REQUIRE(error.has_value());
    CHECK(error->code == ErrorCode::idle_timeout);
    REQUIRE(endpoint.wait_for_disconnects(1));
    CHECK(endpoint.free_slots() == 64);
  }
}

TEST_CASE("SocketServer: a first frame with a payload of a few bytes is refused, not fatal") {
  // (Found by fuzz_session: the receive buffer, not yet allocated, said it held 4 bytes, and an
  // empty payload was read from it too.)
  FakeEndpoint endpoint;
  SocketServer server(endpoint, server_options());
  server.start();
  for (const std::uint32_t payload : {0u, 1u, 3u, 4u}) {
    CAPTURE(payload);
    std::string frame;
    const std::uint32_t length = 8 + payload;
    frame.append(reinterpret_cast<const char*>(&length), 4);
    frame += std::string("\x04\x01\x00\x00\x01\x00\x00\x00", 8);  // version 4, HELLO, seq 1
    frame.append(payload, 'S');
    RawConnection raw(server.address());
    REQUIRE(raw.send(frame));
    const auto error = raw.read_error();
    REQUIRE(error.has_value());
    CHECK(error->code == ErrorCode::malformed);
  }
  RemoteClient client(client_options(server.address()));
  CHECK(client.connect(connect_request(11, 1)).is_ok());
}

TEST_CASE("SocketServer: connections beyond max_connections are told to retry later") {
  FakeEndpoint endpoint;
  SocketServerOptions options = server_options();
  options.max_connections = 1;
  SocketServer server(endpoint, options);
  server.start();
  CHECK(server.max_connections() == 1);
  // Connections that have not completed their handshake do not count: the limit is for actors.
  RawConnection idle_a(server.address()), idle_b(server.address());
  RawConnection first(server.address());
  handshake(first);
  RawConnection second(server.address());
  CHECK_FALSE(second.closed_by_peer(200ms));  // admitted: its HELLO decides
  REQUIRE(second.send(hello_frame(kToken)));
  const auto error = second.read_error();
  REQUIRE(error.has_value());
  CHECK(error->code == ErrorCode::unavailable);
  CHECK(error->message.find("connection limit of 1 reached") != std::string::npos);
  // The client maps it to unavailable: an Actor would retry after a back-off.
  RemoteClient client(client_options(server.address()));
  CHECK(client.connect(connect_request(11, 1)).is_unavailable());
}

TEST_CASE(
    "SocketServer: an actor that vanishes mid-step has its slots freed once the step is answered") {
  FakeEndpoint endpoint(4);
  SocketServer server(endpoint, server_options());
  server.start();
  endpoint.hold(true);
  {
    RawConnection raw(server.address());
    handshake(raw, 4);
    REQUIRE(raw.send(step_frame(4, 1.0f)));
    REQUIRE(endpoint.wait_for_held(1));
  }  // closed while its step is in flight
  CHECK(endpoint.free_slots() == 0);
  endpoint.release();
  REQUIRE(endpoint.wait_for_disconnects(1));
  CHECK(endpoint.free_slots() == 4);
  // The slots are usable again by a new actor.
  endpoint.hold(false);
  RemoteClient client(client_options(server.address()));
  REQUIRE(client.connect(connect_request(11, 4)).is_ok());
  ClientBuffers buffers(4);
  CHECK(buffers.step(client, 2.0f).is_ok());
  CHECK(buffers.actions[3] == 2);
}

TEST_CASE("SocketServer: stop tells actors to retry (shutting down) or to stop (finished)") {
  for (const ErrorCode reason : {ErrorCode::shutting_down, ErrorCode::finished}) {
    CAPTURE(protocol::name(reason));
    FakeEndpoint endpoint;
    SocketServer server(endpoint, server_options());
    server.start();
    RemoteClient idle(client_options(server.address()));
    REQUIRE(idle.connect(connect_request(1, 1)).is_ok());
    RemoteClient busy(client_options(server.address()));
    REQUIRE(busy.connect(connect_request(2, 1)).is_ok());
    endpoint.hold(true);
    Status busy_status;
    std::thread stepping([&] {
      ClientBuffers buffers(1);
      busy_status = buffers.step(busy, 1.0f);
    });
    REQUIRE(endpoint.wait_for_held(1));
    std::thread stopping([&] { server.stop(reason); });
    std::this_thread::sleep_for(50ms);
    endpoint.release();  // the step in flight comes back during stop: its actor hears why, too
    stopping.join();
    stepping.join();
    ClientBuffers buffers(1);
    const Status idle_status = buffers.step(idle, 1.0f);
    if (reason == ErrorCode::finished) {
      CHECK(idle_status.is_closed());
      CHECK(busy_status.is_closed());
    } else {
      CHECK(idle_status.is_unavailable());
      CHECK(busy_status.is_unavailable());
    }
    CHECK(idle_status.message().find(protocol::name(reason)) != std::string::npos);
    CHECK(endpoint.free_slots() == 64);
    // A new connection finds nobody listening.
    RemoteClient late(client_options(server.address()));
    CHECK(late.connect(connect_request(11, 1)).is_unavailable());
  }
}

TEST_CASE("SocketServer: stop does not wait past its grace for a step the endpoint holds") {
  FakeEndpoint endpoint;
  SocketServerOptions options = server_options();
  options.shutdown_grace = 100ms;
  auto server = std::make_unique<SocketServer>(endpoint, options);
  server->start();
  endpoint.hold(true);
  RawConnection raw(server->address());
  handshake(raw);
  REQUIRE(raw.send(step_frame(1, 1.0f)));
  REQUIRE(endpoint.wait_for_held(1));
  server->stop();  // returns although the endpoint still holds the step (else: the CTest timeout)
  server.reset();  // the session outlives its server until the endpoint answers
  CHECK(raw.closed_by_peer());
  CHECK(endpoint.free_slots() == 63);
  endpoint.stop();  // answers the step: the session frees its slot on this thread
  CHECK(endpoint.free_slots() == 64);
}

TEST_CASE(
    "SocketServer: Unix socket files: a stale one is replaced, a live one or another file "
    "refused") {
  FakeEndpoint endpoint;
  const std::string path = temp_socket_path("files");
  std::filesystem::remove(path);
  {  // a socket file nobody listens on, as a crashed server leaves behind
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
    ::close(fd);
    REQUIRE(std::filesystem::exists(path));
  }
  SocketServer server(endpoint, server_options("unix:" + path));
  server.start();  // replaces the stale file
  SocketServer second(endpoint, server_options("unix:" + path));
  CHECK_THROWS_WITH_AS(second.start(), doctest::Contains("a running server is using it"), Error);
  server.stop();
  CHECK_FALSE(std::filesystem::exists(path));

  std::ofstream(path) << "not a socket";
  SocketServer third(endpoint, server_options("unix:" + path));
  CHECK_THROWS_WITH_AS(third.start(), doctest::Contains("not a socket"), Error);
  CHECK(std::filesystem::exists(path));  // never deleted
  std::filesystem::remove(path);
}

TEST_CASE("SocketServer: bad settings and busy ports are errors that name them") {
  FakeEndpoint endpoint;
  SocketServer server(endpoint, server_options());
  server.start();
  SocketServer same_port(endpoint, server_options(server.address().to_string()));
  CHECK_THROWS_WITH_AS(same_port.start(), doctest::Contains(server.address().to_string().c_str()),
                       Error);
  SocketServerOptions bad = server_options();
  bad.max_frame_bytes = 100;
  CHECK_THROWS_WITH_AS(SocketServer(endpoint, bad), doctest::Contains("max_frame_bytes"), Error);
  bad = server_options("127.0.0.1:99999");
  CHECK_THROWS_WITH_AS(SocketServer(endpoint, bad), doctest::Contains("99999"), Error);
  bad = server_options();
  bad.io_threads = 0;
  CHECK_THROWS_WITH_AS(SocketServer(endpoint, bad), doctest::Contains("io_threads"), Error);
}

TEST_CASE("SocketAddress: the forms it reads and the ones it refuses") {
  CHECK(SocketAddress::parse("127.0.0.1:8686").port == 8686);
  CHECK(SocketAddress::parse("[::1]:9").host == "::1");
  CHECK(SocketAddress::parse("[::1]:9").to_string() == "[::1]:9");
  CHECK(SocketAddress::parse("learner.lan:1").host == "learner.lan");
  CHECK(SocketAddress::parse("unix:/tmp/x.sock").path == "/tmp/x.sock");
  CHECK(SocketAddress::parse("unix:/tmp/x.sock").to_string() == "unix:/tmp/x.sock");
  for (const char* bad :
       {"", "8686", "host:", ":80", "host:port", "host:65536", "::1:80", "unix:", "[::1:80"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(SocketAddress::parse(bad), Error);
  }
  CHECK_THROWS_AS(SocketAddress::parse("unix:/" + std::string(200, 'x')), Error);
}

}  // namespace test_socket_server
