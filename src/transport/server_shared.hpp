// SocketServer::Shared: what a SocketServer shares with its sessions (src/transport only: Asio
// lives here, behind the public header's pimpl).
//
// Owned jointly, through shared_ptr, by the server and every session, so that a session whose
// step is still with the endpoint after stop() can finish on its own (socket_session.hpp).
//
// Thread-safety: `endpoint`, `options` and, once start() has returned, `address` are read by any
// thread; the members guarded by a mutex say which (SEEDRL_GUARDED_BY); `stopping`, `stop_reason`
// and the counters are atomics. The acceptors, the sweep timer, `work`, `threads` and `started`
// belong to start() and stop() (and, between them, to handlers on the I/O threads).
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

#include "asio.hpp"
#include "handshake_limiter.hpp"
#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/transport/socket_server.hpp"
#include "tls.hpp"

namespace seedrl {

namespace transport_detail {
class SocketSession;

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
  // A TLS listener's admission (flood control) and its refusals' log (handshake_limiter.hpp).
  transport_detail::HandshakeLimiter handshake_limiter{options.tls.max_pending_handshakes,
                                                       options.tls.handshakes_per_second,
                                                       options.tls.handshake_burst};
  transport_detail::RefusalLog refusal_log{10, [this](const std::string& line) { log(line); }};
  SocketAddress address;
  boost::asio::io_context io;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work;
  std::optional<boost::asio::ip::tcp::acceptor> tcp_acceptor;
  std::optional<boost::asio::local::stream_protocol::acceptor> unix_acceptor;
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

  void log(const std::string& line) const {
    if (options.log) options.log(line);
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
  bool admit_tls(boost::asio::ip::tcp::socket& socket,
                 transport_detail::HandshakeLimiter::Slot& slot);
  /// Every few milliseconds, asks each session to close if it waited too long (on its strand).
  void arm_sweep();
};

}  // namespace seedrl
