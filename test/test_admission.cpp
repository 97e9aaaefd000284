// What a SocketServer admits before a connection has authenticated, on every listener (plain TCP
// and Unix sockets here; TLS in test_tls.cpp): one deadline from the accept to the WELCOME however
// slowly a peer sends, a cap on connections awaiting their handshake that does not touch the
// actors' max_connections, per-address rates (a Unix peer's user id), a refusal log that stays
// within its rate and escapes what peers sent, a back-off when accept fails for lack of file
// descriptors, the open-file limit raised and respected, and no unauthenticated listener on an
// address other machines reach. (Also run under ThreadSanitizer in CI.)
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "seedrl/transport/protocol.hpp"
#include "seedrl/transport/remote_client.hpp"
#include "seedrl/transport/socket_server.hpp"
#include "support/process.hpp"
#include "support/transport_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_admission {

using namespace seedrl;
using namespace seedrl::test;
using namespace std::chrono_literals;
using protocol::ErrorCode;
using seedrl::testing::wait_until;

namespace {

SocketServerOptions logged(ServerLog& log, std::string listen = "127.0.0.1:0") {
  SocketServerOptions o = server_options(std::move(listen));
  o.log = log.sink();
  return o;
}

// Lines of the log that hold `part`, and those that sum up refusals ("N more connections were
// refused in a second").
int lines_with(ServerLog& log, const std::string& part) {
  std::lock_guard lock(log.mutex);
  int n = 0;
  for (const std::string& line : log.lines) n += line.find(part) != std::string::npos ? 1 : 0;
  return n;
}

// A HELLO's frame header and payload, apart.
std::pair<std::string, std::string> split_hello() {
  const std::string frame = hello_frame(kToken);
  return {frame.substr(0, protocol::kHeaderBytes), frame.substr(protocol::kHeaderBytes)};
}

std::string unique_socket_path(const char* name) {
  return (std::filesystem::temp_directory_path() / str_cat("seedrl_", name, "_", ::getpid()))
      .string();
}

}  // namespace

TEST_CASE("admission: a peer that sends its HELLO slowly is closed at the deadline from accept") {
  ServerLog log;
  FakeEndpoint endpoint;
  SocketServerOptions options = logged(log);
  options.handshake_timeout = 1s;
  SocketServer server(endpoint, options);
  server.start();
  RawConnection slow(server.address());
  const auto accepted = std::chrono::steady_clock::now();
  // Every byte arrives well within a per-read timeout, but the whole HELLO would take seconds.
  const auto [header, payload] = split_hello();
  REQUIRE(payload.size() > 30);
  REQUIRE(slow.send(header));
  std::optional<protocol::ErrorFrame> error;
  for (std::size_t i = 0; i < payload.size() && !error; ++i) {
    std::this_thread::sleep_for(100ms);
    if (!slow.send(payload.substr(i, 1))) break;
    error = slow.read_error(1ms);
  }
  if (!error) error = slow.read_error(5s);
  const auto waited = std::chrono::steady_clock::now() - accepted;
  REQUIRE(error.has_value());
  CHECK(error->code == ErrorCode::idle_timeout);
  CHECK(error->message == "no HELLO within 1 s of connecting");
  CHECK(waited < 2500ms);  // closed at 1 s (the sweep's period after it), not at the HELLO's end
  CHECK(endpoint.connects() == 0);
  // A well-behaved actor still gets in.
  RemoteClient client(client_options(server.address()));
  CHECK(client.connect(connect_request(11, 1)).is_ok());
}

TEST_CASE("admission: connections awaiting their handshake are capped apart from max_connections") {
  ServerLog log;
  FakeEndpoint endpoint;
  SocketServerOptions options = logged(log);
  options.max_pending_handshakes = 3;
  options.max_connections = 2;
  SocketServer server(endpoint, options);
  server.start();
  // Two actors fill max_connections; three silent peers fill the handshake cap.
  RemoteClient a(client_options(server.address())), b(client_options(server.address()));
  REQUIRE(a.connect(connect_request(11, 1)).is_ok());
  REQUIRE(b.connect(connect_request(12, 1)).is_ok());
  std::vector<std::unique_ptr<RawConnection>> silent;
  for (int i = 0; i < 3; ++i) silent.push_back(std::make_unique<RawConnection>(server.address()));
  CHECK(wait_until([&] { return server.stats().pending == 3; }, 5s));
  // The fourth is closed at accept, without an ERROR: nothing was read from it.
  RawConnection fourth(server.address());
  CHECK(fourth.closed_by_peer(5s));
  CHECK(server.stats().refused_at_accept == 1);
  CHECK(log.wait_for({"refused at accept: 3 connections are awaiting their handshake"}));
  // The actors kept their places and keep stepping.
  ClientBuffers buffers(1);
  CHECK(buffers.step(a, 1.0f).is_ok());
  CHECK(buffers.step(b, 2.0f).is_ok());
  // A silent peer that leaves frees its place for the next.
  silent.pop_back();
  CHECK(wait_until([&] { return server.stats().pending == 2; }, 5s));
  RawConnection next(server.address());
  CHECK_FALSE(next.closed_by_peer(300ms));
  CHECK(server.stats().refused_at_accept == 1);
}

TEST_CASE("admission: a field name with a line end is logged escaped") {
  ServerLog log;
  FakeEndpoint endpoint;
  SocketServer server(endpoint, logged(log));
  server.start();
  protocol::Hello hello;
  hello.token = kToken;
  hello.run_id = 7;
  hello.num_envs = 1;
  hello.spec = {{{2}, DType::f32}, ActionSpec::discrete(3), {}};
  // The encoder writes valid names only: write one of the same length, then forge its bytes.
  const std::string forged = "mask\nlearner: FORGED \x1b[2J";
  const std::string placeholder = "mask" + std::string(forged.size() - 4, 'a');
  hello.spec.fields.push_back({placeholder, {{3}, DType::u8}});
  std::string frame;
  protocol::encode_hello(frame, hello);
  const auto at = frame.find(placeholder);
  REQUIRE(at != std::string::npos);
  frame.replace(at, forged.size(), forged);
  RawConnection raw(server.address());
  REQUIRE(raw.send(frame));
  const auto error = raw.read_error();
  REQUIRE(error.has_value());
  CHECK(error->code == ErrorCode::malformed);
  REQUIRE(log.wait_for({"refused (malformed)"}));
  std::lock_guard lock(log.mutex);
  bool escaped = false;
  for (const std::string& line : log.lines) {
    CHECK(line.find('\n') == std::string::npos);
    CHECK(line.find('\x1b') == std::string::npos);
    const bool forged_alone =
        line.find("FORGED") != std::string::npos && line.find("\\x0a") == std::string::npos;
    CHECK_FALSE(forged_alone);
    escaped = escaped || line.find("mask\\x0alearner: FORGED \\x1b[2J") != std::string::npos;
  }
  CHECK(escaped);
}

TEST_CASE("admission: a loop of wrong tokens is logged at most 10 lines a second") {
  ServerLog log;
  FakeEndpoint endpoint;
  SocketServerOptions options = logged(log);
  options.handshakes_per_second = 0.0;  // no address limit: every attempt reaches its token
  SocketServer server(endpoint, options);
  server.start();
  const auto start = std::chrono::steady_clock::now();
  int attempts = 0;
  while (std::chrono::steady_clock::now() - start < 1500ms) {
    RawConnection raw(server.address());
    REQUIRE(raw.send(hello_frame("wrong")));
    const auto error = raw.read_error();
    REQUIRE(error.has_value());
    CHECK(error->code == ErrorCode::unauthorized);
    ++attempts;
  }
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start);
  CHECK(attempts > 50);
  // Every attempt is said or summed up (the last summary comes at the next sweep), and at most
  // 10 a second are said: 2 windows of a second at most began within the loop.
  CHECK(wait_until(
      [&] {
        const ServerLog::Refusals r =
            log.wait_for_refusals("127.0.0.1:", {"wrong token"}, attempts, 100ms);
        return r.total() == attempts;
      },
      5s));
  const int said = lines_with(log, "wrong token");
  CHECK(said <= 10 * (static_cast<int>(seconds.count()) + 2));
  CHECK(lines_with(log, " more connections were refused in a second") >= 1);
  // The right token still works.
  RemoteClient client(client_options(server.address()));
  CHECK(client.connect(connect_request(11, 1)).is_ok());
}

TEST_CASE("admission: a Unix socket's peers are rate-limited by user id") {
  ServerLog log;
  FakeEndpoint endpoint;
  SocketServerOptions options = logged(log, "unix:" + unique_socket_path("admission"));
  options.handshake_burst = 3;
  options.handshakes_per_second = 0.01;
  SocketServer server(endpoint, options);
  server.start();
  std::vector<std::unique_ptr<RawConnection>> flood;
  for (int i = 0; i < 10; ++i) flood.push_back(std::make_unique<RawConnection>(server.address()));
  int closed = 0;
  for (auto& raw : flood) closed += raw->closed_by_peer(300ms) ? 1 : 0;
  CHECK(closed == 7);
  CHECK(server.stats().refused_at_accept == 7);
  CHECK(log.wait_for({"unix connection", "refused at accept: more than 3 connections at once",
                      str_cat("from uid ", ::getuid())}));
}

TEST_CASE("admission: accept backs off while the process is out of file descriptors") {
  // UndefinedBehaviorSanitizer checks a virtual call's object by writing its memory to a pipe():
  // with no descriptor left that fails, and it reports every shared_ptr call in the I/O threads as
  // a call on an object of the wrong type. The release and ThreadSanitizer runs keep this test.
  if (std::string_view(SEEDRL_TEST_SANITIZERS).find("undefined") != std::string_view::npos) {
    MESSAGE("UndefinedBehaviorSanitizer needs file descriptors of its own; not run in this build");
    return;
  }
  ServerLog log;
  FakeEndpoint endpoint;
  SocketServer server(endpoint, logged(log));
  server.start();
  const SocketAddress address = server.address();
  // Sockets made while descriptors remain; they connect once none do, and the kernel completes
  // their handshakes in the listen queue, where every accept() now fails with EMFILE.
  std::vector<int> sockets;
  for (int i = 0; i < 4; ++i) sockets.push_back(::socket(AF_INET, SOCK_STREAM, 0));
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved) == 0);
  int highest = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd"))
    highest = std::max(highest, std::stoi(entry.path().filename().string()));
  rlimit tight = saved;
  tight.rlim_cur = static_cast<rlim_t>(highest + 1);
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &tight) == 0);
  // The limit is on descriptor numbers: fill the gaps below it too.
  std::vector<int> fillers;
  for (int fd; (fd = ::open("/dev/null", O_RDONLY)) >= 0;) fillers.push_back(fd);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(address.port);
  ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  for (int fd : sockets) REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  std::this_thread::sleep_for(1s);
  const std::int64_t failures = server.stats().refused_at_accept;
  for (int fd : fillers) ::close(fd);
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &saved) == 0);
  // Retrying at once would have failed millions of times in that second; the back-off (5 ms,
  // doubling to a second) allows a handful.
  CHECK(failures >= 2);
  CHECK(failures <= 12);
  CHECK(log.wait_for({"accept failed: ", "accepting again in "}));
  // With descriptors back, the queued connections are accepted and an actor connects.
  CHECK(wait_until([&] { return server.stats().accepted >= 4; }, 5s));
  RemoteClient client(client_options(address));
  CHECK(client.connect(connect_request(11, 1)).is_ok());
  for (int fd : sockets) ::close(fd);
}

TEST_CASE("admission: start raises the open-file limit and keeps max_connections below it") {
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved) == 0);
  if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < 400) {
    MESSAGE("the hard open-file limit is below 400; nothing to test");
    return;
  }
  rlimit low = saved;
  low.rlim_cur = 100;
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
  {
    ServerLog log;
    FakeEndpoint endpoint;
    SocketServer server(endpoint, logged(log));
    server.start();
    rlimit now{};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &now) == 0);
    CHECK(now.rlim_cur == saved.rlim_max);  // the soft limit raised to the hard one
    if (saved.rlim_max == RLIM_INFINITY || saved.rlim_max >= 2048)
      CHECK(server.max_connections() == 1024);
  }
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &saved) == 0);
  // A hard limit of 300, in a child process (a hard limit, once lowered, stays so): 1024
  // connections do not fit, and the server says how many do.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    rlimit capped{300, 300};
    if (::setrlimit(RLIMIT_NOFILE, &capped) != 0) ::_exit(2);
    ServerLog log;
    FakeEndpoint endpoint;
    SocketServer server(endpoint, logged(log));
    server.start();
    const bool lowered = server.max_connections() > 0 && server.max_connections() < 300 - 64 - 64;
    const bool said =
        log.wait_for({"max_connections lowered from 1024 to ", "the open-file limit is 300"});
    server.stop();
    ::_exit(lowered && said ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("admission: no listener on an address other machines reach without authentication") {
  FakeEndpoint endpoint;
  SocketServerOptions options = server_options("0.0.0.0:0");
  options.token.clear();
  {
    SocketServer server(endpoint, options);
    CHECK_THROWS_WITH_AS(server.start(),
                         doctest::Contains("will not listen on 0.0.0.0:0 (0.0.0.0, reachable from "
                                           "other machines) without authentication"),
                         Error);
  }
  options.allow_unauthenticated = true;  // --insecure-no-auth
  {
    SocketServer server(endpoint, options);
    CHECK_NOTHROW(server.start());
  }
  options.allow_unauthenticated = false;
  options.token = kToken;
  {
    SocketServer server(endpoint, options);
    CHECK_NOTHROW(server.start());
  }
  // Loopback and Unix sockets stay open to the local actors without a token.
  options.token.clear();
  options.listen = "127.0.0.1:0";
  {
    SocketServer server(endpoint, options);
    CHECK_NOTHROW(server.start());
  }
  options.listen = "unix:" + unique_socket_path("noauth");
  {
    SocketServer server(endpoint, options);
    CHECK_NOTHROW(server.start());
  }
}

}  // namespace test_admission
