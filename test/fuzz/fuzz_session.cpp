// libFuzzer target for a SocketServer's session state machine (src/transport/socket_session*.cpp):
// each input is a byte stream an unauthenticated peer sends on one connection, split into
// chunks at points the input chooses, so that frames arrive in any order, cut anywhere, and
// reads see every split. Two servers (Unix sockets) listen: one of discrete actions with a
// legal-action mask declared beside the observation, one of box actions; the input's first byte
// picks one and seeds the split points.
//
// After every input the server must have closed the connection (the peer's end of stream reaches
// every phase), and every slot a HELLO reserved must be free again: a session that hangs or leaks
// its slots is a crash, as is a handler that throws, or any overread, overflow or undefined shift
// (AddressSanitizer and UndefinedBehaviorSanitizer).
//
// Built with clang (-fsanitize=fuzzer,address,undefined) by test/fuzz/CMakeLists.txt; the seed
// corpus (session_corpus) holds well-formed sessions of both servers.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "seedrl/acting/inference_endpoint.hpp"
#include "seedrl/transport/socket_server.hpp"
#include "session_fixtures.hpp"

namespace {

using namespace seedrl;
using namespace std::chrono_literals;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_session: %s\n", what);
  std::abort();
}

// Answers every step at once (actions 0, or the box's lower bound) and counts its slots.
class AnsweringEndpoint final : public InferenceEndpoint {
 public:
  explicit AnsweringEndpoint(StepSpec spec) : spec_(std::move(spec)) {}
  const StepSpec& step_spec() const override { return spec_; }
  Status connect(const ConnectRequest& request, Connection* connection) override {
    if (Status s = check_actor_spec(request.spec, spec_); !s.is_ok()) return s;
    std::lock_guard lock(mutex_);
    if (connected_ + request.num_envs > kSlots) return Status::unavailable("no free slots");
    *connection =
        Connection{connected_, request.num_envs, request.run_id, request.evaluation, ++next_id_};
    connected_ += request.num_envs;
    return Status::ok();
  }
  void submit(StepRequest& request) override {
    if (spec_.action.is_box()) {
      const std::span<float> box = request.actions.box();
      for (std::size_t i = 0; i < box.size(); ++i)
        box[i] = spec_.action.low[i % spec_.action.low.size()];
    } else {
      for (std::int32_t& a : request.actions.discrete()) a = 0;
    }
    request.on_complete(Status::ok());
  }
  void disconnect(const Connection& connection) override {
    std::lock_guard lock(mutex_);
    connected_ -= connection.num_envs;
  }
  std::int32_t connected() {
    std::lock_guard lock(mutex_);
    return connected_;
  }

 private:
  static constexpr std::int32_t kSlots = 1 << 20;
  const StepSpec spec_;
  std::mutex mutex_;
  std::int32_t connected_ = 0;
  std::uint64_t next_id_ = 0;
};

struct Listener {
  AnsweringEndpoint endpoint;
  std::unique_ptr<SocketServer> server;
  std::string path;

  Listener(StepSpec spec, const std::string& name)
      : endpoint(std::move(spec)),
        path(std::string("/tmp/seedrl_fuzz_") + name + "_" + std::to_string(::getpid())) {
    SocketServerOptions o;
    o.listen = "unix:" + path;
    o.token = fuzz_session::kToken;
    o.handshake_timeout = 2s;
    o.idle_timeout = 2s;
    o.shutdown_grace = 100ms;
    o.handshakes_per_second = 0.0;  // every input is admitted
    o.max_pending_handshakes = 0;
    // A handler that threw is served on by the server, but it is a bug: a crash here.
    o.log = [](const std::string& line) {
      if (line.find("internal error in a connection's handler") != std::string::npos) {
        std::fprintf(stderr, "fuzz_session: %s\n", line.c_str());
        std::abort();
      }
    };
    server = std::make_unique<SocketServer>(endpoint, o);
    server->start();
  }
};

Listener& listener(int which) {
  static Listener masked(fuzz_session::masked_spec(), "masked");
  static Listener box(fuzz_session::box_spec(), "box");
  return which == 0 ? masked : box;
}

int connect_to(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    fail("cannot connect to the server");
  return fd;
}

// Reads (and discards) what the server sends until it closes; false after the timeout.
bool read_until_closed(int fd, std::chrono::milliseconds timeout) {
  timeval tv{0, 20'000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  Listener& l = listener(data[0] & 1);
  // Split points: a chunk of 1 to 64 bytes, drawn from the second byte onwards.
  std::uint32_t state = data[1] * 2654435761u + 1;
  const std::uint8_t* stream = data + 2;
  std::size_t left = size - 2;
  const int fd = connect_to(l.path);
  while (left > 0) {
    state = state * 1664525u + 1013904223u;
    const std::size_t chunk = std::min<std::size_t>(left, 1 + (state >> 26));
    if (::send(fd, stream, chunk, MSG_NOSIGNAL) < 0) break;  // the server closed: fine
    stream += chunk;
    left -= chunk;
    if ((state & 0x300) == 0) std::this_thread::sleep_for(50us);  // a read in between, often
  }
  ::shutdown(fd, SHUT_WR);
  if (!read_until_closed(fd, 5s)) fail("the server did not close a connection whose peer ended");
  ::close(fd);
  // The session closes and frees what it reserved, whatever it was sent.
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (l.server->stats().active > 0 || l.endpoint.connected() > 0) {
    if (std::chrono::steady_clock::now() > deadline) fail("a session kept its slots");
    std::this_thread::sleep_for(100us);
  }
  return 0;
}
