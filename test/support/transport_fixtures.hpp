// Helpers for the transport tests: a scriptable InferenceEndpoint, a raw socket that speaks bytes
// (well-formed or not) to a SocketServer, the settings and buffers of a well-behaved actor, and a
// server log that a test waits on.
#pragma once

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "runtime_fixtures.hpp"
#include "seedrl/acting/inference_endpoint.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/experience/unroll.hpp"
#include "seedrl/transport/protocol.hpp"
#include "seedrl/transport/remote_client.hpp"
#include "seedrl/transport/socket_address.hpp"
#include "seedrl/transport/socket_server.hpp"

namespace seedrl::test {

/// Observations f32[2], 3 actions (and the fields `fields` declares, none by default). The action
/// for an environment is its observation's first value (mod 3), so a test sees that the bytes
/// arrived. With hold(true), steps wait until release().
class FakeEndpoint final : public InferenceEndpoint {
 public:
  explicit FakeEndpoint(std::int32_t max_slots = 64, std::vector<StepFieldSpec> fields = {})
      : spec_{{{2}, DType::f32}, {3}, std::move(fields)},
        owner_(static_cast<std::size_t>(max_slots), 0) {}

  const StepSpec& step_spec() const override { return spec_; }

  Status connect(const ConnectRequest& request, Connection* connection) override {
    std::lock_guard lock(mutex_);
    if (Status s = check_actor_spec(request.spec, spec_); !s.is_ok()) return s;
    const auto n = static_cast<std::size_t>(request.num_envs);
    for (std::size_t first = 0; first + n <= owner_.size(); ++first) {
      bool free = true;
      for (std::size_t s = first; s < first + n; ++s) free = free && owner_[s] == 0;
      if (!free) continue;
      const std::uint64_t id = ++last_id_;
      for (std::size_t s = first; s < first + n; ++s) owner_[s] = id;
      *connection = Connection{static_cast<std::int32_t>(first), request.num_envs, request.run_id,
                               request.evaluation, id};
      ++connects_;
      return Status::ok();
    }
    return Status::unavailable("no free slots");
  }

  void submit(StepRequest& request) override {
    std::unique_lock lock(mutex_);
    if (stopped_) {
      lock.unlock();
      request.on_complete(Status::closed("endpoint stopped"));
      return;
    }
    ++steps_;
    last_rewards_.assign(request.step.rewards.begin(), request.step.rewards.end());
    last_flags_.assign(request.step.flags.begin(), request.step.flags.end());
    last_fields_.clear();
    for (const Tensor& f : request.step.fields) last_fields_.push_back(f.clone());
    if (hold_) {
      held_.push_back(&request);
      changed_.notify_all();
      return;
    }
    lock.unlock();
    answer(request, Status::ok());
  }

  void disconnect(const Connection& connection) override {
    std::lock_guard lock(mutex_);
    for (auto& o : owner_)
      if (o == connection.id) o = 0;
    ++disconnects_;
    changed_.notify_all();
  }

  void hold(bool on) {
    std::lock_guard lock(mutex_);
    hold_ = on;
  }
  /// Answers every held step with `status`.
  void release(const Status& status = Status::ok()) {
    std::deque<StepRequest*> held;
    {
      std::lock_guard lock(mutex_);
      held.swap(held_);
    }
    for (StepRequest* r : held) answer(*r, status);
  }
  /// Answers held and later steps with closed, as a stopping InferenceServer does.
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopped_ = true;
    }
    release(Status::closed("endpoint stopped"));
  }
  bool wait_for_held(std::size_t count,
                     std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return held_.size() >= count; });
  }
  bool wait_for_disconnects(std::int64_t count,
                            std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return disconnects_ >= count; });
  }
  std::int64_t free_slots() const {
    std::lock_guard lock(mutex_);
    return std::count(owner_.begin(), owner_.end(), 0u);
  }
  std::int64_t steps() const {
    std::lock_guard lock(mutex_);
    return steps_;
  }
  std::int64_t connects() const {
    std::lock_guard lock(mutex_);
    return connects_;
  }
  std::int64_t disconnects() const {
    std::lock_guard lock(mutex_);
    return disconnects_;
  }
  std::vector<float> last_rewards() const {
    std::lock_guard lock(mutex_);
    return last_rewards_;
  }
  std::vector<std::uint8_t> last_flags() const {
    std::lock_guard lock(mutex_);
    return last_flags_;
  }
  /// Copies of the last step's declared fields, [num_envs, field...] each.
  std::vector<Tensor> last_fields() const {
    std::lock_guard lock(mutex_);
    return last_fields_;
  }

 private:
  static void answer(StepRequest& request, const Status& status) {
    if (status.is_ok()) {
      const float* obs = request.step.observations.data<float>();
      for (std::size_t e = 0; e < request.actions.size(); ++e) {
        request.actions.discrete()[e] = static_cast<std::int32_t>(obs[2 * e]) % 3;
      }
    }
    request.on_complete(status);
  }

  const StepSpec spec_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::uint64_t> owner_;
  std::uint64_t last_id_ = 0;
  bool hold_ = false, stopped_ = false;
  std::deque<StepRequest*> held_;
  std::int64_t steps_ = 0, connects_ = 0, disconnects_ = 0;
  std::vector<float> last_rewards_;
  std::vector<std::uint8_t> last_flags_;
  std::vector<Tensor> last_fields_;
};

/// A blocking socket for writing arbitrary bytes at a server and reading what comes back.
class RawConnection {
 public:
  explicit RawConnection(const SocketAddress& address) {
    if (address.is_unix()) {
      fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
      sockaddr_un a{};
      a.sun_family = AF_UNIX;
      std::strncpy(a.sun_path, address.path.c_str(), sizeof(a.sun_path) - 1);
      SEEDRL_REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0,
                     "raw connect: ", std::strerror(errno));
    } else {
      fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(address.port);
      ::inet_pton(AF_INET, address.host.c_str(), &a.sin_addr);
      SEEDRL_REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0,
                     "raw connect: ", std::strerror(errno));
      int one = 1;
      ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
  }
  ~RawConnection() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  /// False when the server has already closed (EPIPE / reset).
  bool send(std::string_view bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }
  void shutdown_write() { ::shutdown(fd_, SHUT_WR); }
  int fd() const { return fd_; }

  struct Frame {
    protocol::FrameHeader header;
    std::string payload;
  };
  /// Reads one frame; false on EOF, error or timeout.
  bool read_frame(Frame* frame, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::string header;
    if (!read_exact(protocol::kHeaderBytes, &header, timeout)) return false;
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(header.data());
    if (!protocol::decode_header({bytes, header.size()}, 1u << 30, &frame->header).is_ok())
      return false;
    return read_exact(frame->header.payload_bytes(), &frame->payload, timeout);
  }
  /// Reads the ERROR frame that should come next; its code, or nullopt.
  std::optional<protocol::ErrorFrame> read_error(
      std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    Frame f;
    if (!read_frame(&f, timeout) || f.header.type != protocol::FrameType::error)
      return std::nullopt;
    protocol::ErrorFrame e;
    if (!protocol::decode_error(
             {reinterpret_cast<const std::uint8_t*>(f.payload.data()), f.payload.size()}, &e)
             .is_ok()) {
      return std::nullopt;
    }
    return e;
  }
  /// True when the server closes the connection (EOF or reset) within the timeout.
  bool closed_by_peer(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    char c;
    while (true) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return false;
      const ssize_t n = ::recv(fd_, &c, 1, 0);
      if (n <= 0) return true;
    }
  }

 private:
  bool read_exact(std::size_t n, std::string* out, std::chrono::milliseconds timeout) {
    out->resize(n);
    std::size_t got = 0;
    while (got < n) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return false;
      const ssize_t r = ::recv(fd_, out->data() + got, n - got, 0);
      if (r <= 0) return false;
      got += static_cast<std::size_t>(r);
    }
    return true;
  }

  int fd_ = -1;
};

/// A HELLO for FakeEndpoint's specs.
inline std::string hello_frame(std::string token, std::uint32_t envs = 1,
                               std::uint64_t run_id = 7) {
  protocol::Hello h;
  h.token = std::move(token);
  h.run_id = run_id;
  h.num_envs = envs;
  h.spec = {{{2}, DType::f32}, ActionSpec::discrete(3), {}};
  std::string out;
  protocol::encode_hello(out, h);
  return out;
}

/// A STEP of `envs` observations {value, 0}.
inline std::string step_frame(std::uint32_t envs, float value, std::uint32_t sequence = 1) {
  std::vector<float> rewards(envs, 0.5f), obs(2 * envs, 0.0f);
  std::vector<std::uint8_t> flags(envs, step_flags::kFirst);
  for (std::uint32_t e = 0; e < envs; ++e) obs[2 * e] = value;
  std::string out;
  protocol::encode_step(
      out, sequence, rewards, flags,
      {reinterpret_cast<const std::uint8_t*>(obs.data()), obs.size() * sizeof(float)});
  return out;
}

/// The token the test servers expect.
inline constexpr const char* kToken = "correct horse";

/// A server on a free port (or `listen`) that expects kToken.
inline SocketServerOptions server_options(std::string listen = "127.0.0.1:0") {
  SocketServerOptions o;
  o.listen = std::move(listen);
  o.token = kToken;
  o.shutdown_grace = std::chrono::milliseconds(500);
  return o;
}

/// A client of `address` with generous time limits.
inline RemoteClientOptions client_options(const SocketAddress& address,
                                          std::string token = kToken) {
  RemoteClientOptions o;
  o.address = address.to_string();
  o.token = std::move(token);
  o.connect_timeout = std::chrono::seconds(5);
  o.step_timeout = std::chrono::seconds(10);
  return o;
}

/// A remote actor's buffers: observations {value, 0} per environment, reward 0.25.
struct ClientBuffers : StepBuffers {
  explicit ClientBuffers(std::int32_t envs) : StepBuffers(envs, 0.25f) {}
  using StepBuffers::step;
  Status step(RemoteClient& client, float value) {
    for (std::int64_t e = 0; e < observations.shape()[0]; ++e)
      observations.data<float>()[2 * e] = value;
    return client.step(record(), actions);
  }
};

// The server's log lines, kept for the test to wait on.
struct ServerLog {
  std::mutex mutex;
  std::vector<std::string> lines;
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& line) {
      std::lock_guard lock(mutex);
      lines.push_back(line);
    };
  }
  // Waits until `count` lines hold every one of `parts`.
  bool wait_for(std::vector<std::string> parts, int count = 1,
                std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard lock(mutex);
        int found = 0;
        for (const std::string& line : lines) {
          bool all = true;
          for (const std::string& p : parts) all = all && line.find(p) != std::string::npos;
          found += all ? 1 : 0;
        }
        if (found >= count) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }
  // The refusals of each kind of `said` said in their own line (one that holds the address and
  // the kind's text), and those summed up in "N more connections were refused" lines, once every
  // one of `total` is either said or summed (or at the timeout).
  struct Refusals {
    std::vector<int> said;
    int summed = 0;
    int total() const { return summed + std::accumulate(said.begin(), said.end(), 0); }
  };
  Refusals wait_for_refusals(const std::string& address, const std::vector<std::string>& said,
                             int total,
                             std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    Refusals r;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      r = Refusals{std::vector<int>(said.size(), 0), 0};
      {
        std::lock_guard lock(mutex);
        for (const std::string& line : lines) {
          if (const auto more = line.find(" more connection"); more != std::string::npos) {
            r.summed += std::stoi(line.substr(0, more));
            continue;
          }
          if (line.find(address) != 0) continue;
          for (std::size_t k = 0; k < said.size(); ++k) {
            if (line.find(said[k]) != std::string::npos) ++r.said[k];
          }
        }
      }
      if (r.total() >= total) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return r;
  }
  std::string text() {
    std::lock_guard lock(mutex);
    std::string all;
    for (const std::string& l : lines) all += l + "\n";
    return all;
  }
};

}  // namespace seedrl::test
