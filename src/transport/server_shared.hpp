// SocketServer::Shared: what a SocketServer shares with its sessions (src/transport only: Asio
// lives here, behind the public header's pimpl).
//
// Owned jointly, through shared_ptr, by the server and every session, so that a session whose
// step is still with the endpoint after stop() can finish on its own (socket_session.hpp).
//
// Thread-safety: `endpoint`, `options` and, once start() has returned, `address` and
// `max_connections` are read by any thread; the members guarded by a mutex say which
// (SEEDRL_GUARDED_BY); `stopping`, `stop_reason` and the counters are atomics. The acceptors, the
// sweep timer, `work`, `threads` and `started` belong to start() and stop() (and, between them, to
// handlers on the I/O threads).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "admission.hpp"
#include "asio.hpp"
#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/transport/socket_server.hpp"
#include "tls.hpp"

namespace seedrl {

namespace transport_detail {
class SocketSession;

/// How the log starts a line about a handler that threw (a bug; the server goes on).
inline constexpr const char* kHandlerFault = "internal error in a connection's handler: ";

/// The steady clock in nanoseconds: the sweep and the sessions' deadlines compare these.
inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace transport_detail

struct SocketServer::Shared : std::enable_shared_from_this<SocketServer::Shared> {
  using Strand = boost::asio::strand<boost::asio::io_context::executor_type>;

  Shared(InferenceEndpoint& endpoint_, SocketServerOptions options_)
      : endpoint(endpoint_),
        options(std::move(options_)),
        spec(endpoint_.step_spec()),
        sweep_strand(boost::asio::make_strand(io)),
        sweep_timer(sweep_strand) {}

  InferenceEndpoint& endpoint;
  const SocketServerOptions options;
  const StepSpec spec;  // the endpoint's, read once
  // The TLS context of a TLS listener (options.tls), built once; read by the accept loop.
  std::optional<boost::asio::ssl::context> tls;
  // Admission before authentication (flood control) and the log of refusals before a WELCOME
  // (admission.hpp).
  transport_detail::AdmissionLimiter admission{
      options.max_pending_handshakes, options.handshakes_per_second, options.handshake_burst};
  transport_detail::RefusalLog refusal_log{kRefusalLinesPerSecond,
                                           [this](const std::string& line) { log(line); }};
  static constexpr int kRefusalLinesPerSecond = 10;
  // options.max_connections, or less where the open-file limit leaves less room (start()).
  std::int32_t max_connections = 0;
  SocketAddress address;
  boost::asio::io_context io;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work;
  std::optional<boost::asio::ip::tcp::acceptor> tcp_acceptor;
  std::optional<boost::asio::local::stream_protocol::acceptor> unix_acceptor;
  // After a failed accept (out of file descriptors, say), the acceptor waits this long before it
  // tries again, doubling up to a second; a success resets it. Accept handlers only.
  std::optional<boost::asio::steady_timer> accept_retry;
  std::chrono::milliseconds accept_backoff{0};
  Strand sweep_strand;  // the sweep's handler and stop()'s cancel never run at once
  boost::asio::steady_timer sweep_timer;
  std::vector<std::thread> threads;
  bool started = false;

  Mutex post_mutex;
  bool io_done SEEDRL_GUARDED_BY(post_mutex) = false;  // the I/O threads are gone: no more posts

  std::atomic<bool> stopping{false};
  std::atomic<bool> sweeping{true};  // false once stop() cancels the sweep timer
  std::atomic<protocol::ErrorCode> stop_reason{protocol::ErrorCode::shutting_down};

  mutable Mutex sessions_mutex;
  CondVar sessions_changed;
  std::unordered_map<std::uint64_t, std::weak_ptr<transport_detail::SocketSession>> sessions
      SEEDRL_GUARDED_BY(sessions_mutex);
  std::uint64_t next_session SEEDRL_GUARDED_BY(sessions_mutex) = 0;

  std::atomic<std::int64_t> accepted{0}, handshakes{0}, refused{0}, refused_at_accept{0}, steps{0},
      bytes_received{0}, bytes_sent{0};
  std::atomic<std::int32_t> connected{0};  // sessions past their WELCOME (max_connections)

  /// Every line the server says, with what a peer sent escaped (admission.hpp).
  void log(const std::string& line) const {
    if (options.log) options.log(transport_detail::escape_peer_text(line));
  }
  /// A line about a connection refused before its WELCOME: a flood of them says a few a second.
  void log_refusal(const std::string& line) { refusal_log(line, std::chrono::steady_clock::now()); }

  /// Counts a session that completed its handshake against max_connections; false when the
  /// limit is reached (then nothing is counted).
  bool count_connection() {
    std::int32_t n = connected.load();
    do {
      if (n >= max_connections) return false;
    } while (!connected.compare_exchange_weak(n, n + 1));
    return true;
  }

  /// Queues `handler` on `strand`; false once the I/O threads are gone.
  template <class Handler>
  bool post(const Strand& strand, Handler&& handler) SEEDRL_EXCLUDES(post_mutex) {
    MutexLock lock(post_mutex);
    if (io_done) return false;
    boost::asio::post(strand, std::forward<Handler>(handler));
    return true;
  }

  /// The ERROR code that tells an actor what an endpoint's status means for it.
  protocol::ErrorCode code_for(const Status& status) const {
    using protocol::ErrorCode;
    switch (status.code()) {
      case Status::Code::invalid_argument:
        return ErrorCode::invalid_request;
      case Status::Code::unavailable:
      case Status::Code::deadline_exceeded:
        return ErrorCode::unavailable;
      case Status::Code::closed:
        return stopping ? stop_reason.load() : ErrorCode::shutting_down;
      case Status::Code::ok:
      case Status::Code::internal:
        break;
    }
    return ErrorCode::internal;
  }

  /// A session that closed: it no longer counts against max_connections, and stop() stops
  /// waiting for it.
  void forget(std::uint64_t id) SEEDRL_EXCLUDES(sessions_mutex) {
    {
      MutexLock lock(sessions_mutex);
      sessions.erase(id);
    }
    sessions_changed.notify_all();
  }

  std::vector<std::shared_ptr<transport_detail::SocketSession>> live_sessions()
      SEEDRL_EXCLUDES(sessions_mutex) {
    std::vector<std::shared_ptr<transport_detail::SocketSession>> out;
    MutexLock lock(sessions_mutex);
    for (auto& [id, weak] : sessions)
      if (auto s = weak.lock()) out.push_back(std::move(s));
    return out;
  }

  /// Accepts connections on `acceptor` (on the I/O threads) until it is closed.
  template <class Protocol>
  void accept(typename Protocol::acceptor& acceptor);
  /// After a failed accept: says why (rate-limited) and accepts again after the back-off.
  template <class Protocol>
  void accept_after_error(typename Protocol::acceptor& acceptor,
                          const boost::system::error_code& ec);
  /// A new connection's admission (admission.hpp): false when it was refused and closed.
  template <class Socket>
  bool admit(Socket& socket, const std::string& peer, const std::string& peer_address,
             transport_detail::AdmissionLimiter::Slot& slot);
  /// Every few milliseconds, asks each session to close if it waited too long (on its strand).
  void arm_sweep();
};

}  // namespace seedrl
