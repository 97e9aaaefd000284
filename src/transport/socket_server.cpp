// SocketServer: listening and stopping; accepting is accept_loop.cpp's, the connections
// themselves are SocketSessions (socket_session.hpp), and what they all share is
// SocketServer::Shared (server_shared.hpp).
//
//   start(): bind, listen ─▶ accept loop (an I/O thread) ─▶ one SocketSession per connection,
//            on a strand of its own ─▶ sweep timer: deadlines of every session
//   stop():  close the acceptors ─▶ every session hears why ─▶ up to shutdown_grace for steps in
//            flight ─▶ force_close the rest ─▶ join the I/O threads ─▶ late completions run here
//
// Thread-safety: as socket_server.hpp says, every member may be called from any thread; the first
// stop() does the work and later ones return at once. The accept loop and the sweep run on the
// I/O threads and reach sessions only by posting to their strands.
#include "seedrl/transport/socket_server.hpp"

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>

#include "seedrl/core/error.hpp"
#include "seedrl/core/thread_name.hpp"
#include "server_shared.hpp"
#include "socket_session.hpp"

namespace seedrl {

namespace asio = boost::asio;
using boost::system::error_code;
using protocol::ErrorCode;
using transport_detail::kHandlerFault;
using transport_detail::now_ns;
using transport_detail::SocketSession;

void SocketServerOptions::validate(std::string_view owner) const {
  (void)SocketAddress::parse(listen);
  SEEDRL_REQUIRE(token.size() <= protocol::kMaxTokenBytes, owner, ": token has ", token.size(),
                 " bytes; at most ", protocol::kMaxTokenBytes, " are allowed");
  SEEDRL_REQUIRE(max_frame_bytes >= protocol::kMinMaxFrameBytes, owner, ": max_frame_bytes ",
                 max_frame_bytes, " is below the minimum of ", protocol::kMinMaxFrameBytes);
  SEEDRL_REQUIRE(max_connections > 0, owner, ": max_connections must be positive, got ",
                 max_connections);
  SEEDRL_REQUIRE(idle_timeout.count() > 0, owner, ": idle_timeout must be positive");
  SEEDRL_REQUIRE(handshake_timeout.count() > 0, owner, ": handshake_timeout must be positive");
  SEEDRL_REQUIRE(shutdown_grace.count() >= 0, owner, ": shutdown_grace must be >= 0");
  SEEDRL_REQUIRE(io_threads >= 1 && io_threads <= 256, owner, ": io_threads must be 1 to 256, got ",
                 io_threads);
  SEEDRL_REQUIRE(max_pending_handshakes >= 0, owner,
                 ".max_pending_handshakes must be >= 0 (0: no cap), got ", max_pending_handshakes);
  SEEDRL_REQUIRE(std::isfinite(handshakes_per_second) && handshakes_per_second >= 0.0, owner,
                 ".handshakes_per_second must be finite and >= 0 (0: no limit), got ",
                 handshakes_per_second);
  SEEDRL_REQUIRE(handshake_burst >= 1, owner, ".handshake_burst must be >= 1, got ",
                 handshake_burst);
  tls.validate(owner);
  SEEDRL_REQUIRE(!tls.enabled() || !SocketAddress::parse(listen).is_unix(), owner,
                 ": TLS is for TCP listeners; '", listen,
                 "' is a Unix socket, which never leaves this machine");
}

std::string SocketServerOptions::mode() const {
  if (!tls.enabled())
    return SocketAddress::parse(listen).is_unix() ? "plain (Unix socket)"
                                                  : "plain TCP, no encryption";
  return str_cat("TLS ", name(tls.min_version), tls.min_version == TlsVersion::tls12 ? "+" : "",
                 tls.client_ca.empty()            ? ", no client certificates"
                 : tls.require_client_certificate ? ", client certificates required"
                                                  : ", client certificates verified when sent");
}

// ---- SocketServer ----

void SocketServer::Shared::arm_sweep() {
  const auto period = std::clamp(std::min(options.idle_timeout, options.handshake_timeout) / 4,
                                 std::chrono::milliseconds(10), std::chrono::milliseconds(250));
  sweep_timer.expires_after(period);
  sweep_timer.async_wait([this](const error_code& ec) {
    // Cancelled by stop(), or stop() came after the timer fired but before this ran (then the
    // cancel found no wait to cancel: without the flag the sweep would re-arm forever and the
    // I/O threads would never return).
    if (ec || !sweeping) return;
    const std::int64_t now = now_ns();
    for (auto& session : live_sessions())
      asio::post(session->strand(), [session, now] { session->sweep(now); });
    refusal_log.tick(std::chrono::steady_clock::now());  // the sum of a flood's unsaid lines
    arm_sweep();
  });
}

SocketServer::SocketServer(InferenceEndpoint& endpoint, SocketServerOptions options) {
  options.validate();
  endpoint.step_spec().validate("SocketServer: the endpoint's step spec");
  const ActionSpec actions = endpoint.action_spec();
  SEEDRL_REQUIRE(!actions.is_box() || actions.low.size() <= protocol::kMaxActionDims,
                 "SocketServer: the endpoint serves ", actions.to_string(),
                 "; the protocol carries box actions of at most ", protocol::kMaxActionDims,
                 " dimensions");
  shared_ = std::make_shared<Shared>(endpoint, std::move(options));
  shared_->address = SocketAddress::parse(shared_->options.listen);
  if (shared_->options.tls.enabled())
    shared_->tls.emplace(transport_detail::make_server_context(shared_->options.tls));
}

SocketServer::~SocketServer() {
  stop();
}

namespace {

// The open files this process has now (Linux's /proc/self/fd; 0 where it cannot tell).
int open_files() {
  std::error_code error;
  int n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error))
    ++n;
  return error ? 0 : n;
}

// Raises the open-file soft limit to the hard limit and returns max_connections, lowered (with a
// line saying so) where the limit leaves less room: every connection is a descriptor, and so are
// the connections awaiting their handshake, the files a run writes (checkpoints, metrics) and the
// libraries' own.
std::int32_t connection_budget(const SocketServerOptions& options, const std::string& where,
                               const std::function<void(const std::string&)>& say) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return options.max_connections;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  if (limit.rlim_cur == RLIM_INFINITY) return options.max_connections;
  constexpr std::int64_t kReserved = 64;  // the run's files, the libraries', stdio
  const std::int64_t room = static_cast<std::int64_t>(limit.rlim_cur) - open_files() - kReserved -
                            options.max_pending_handshakes;
  SEEDRL_REQUIRE(room >= 1, "SocketServer: cannot listen on ", where, ": the open-file limit of ",
                 limit.rlim_cur, " (ulimit -n; hard limit ", limit.rlim_max,
                 ") leaves no room for actor connections");
  if (room >= options.max_connections) return options.max_connections;
  say(str_cat("max_connections lowered from ", options.max_connections, " to ", room, " on ", where,
              ": the open-file limit is ", limit.rlim_cur,
              " (raise the hard limit, ulimit -Hn, for more)"));
  return static_cast<std::int32_t>(room);
}

// A socket file at `path`: a stale one from a crashed server is removed; one a running server
// answers on, or any other kind of file, is an error.
void clear_unix_path(asio::io_context& io, const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return;
  SEEDRL_REQUIRE(S_ISSOCK(info.st_mode), "SocketServer: cannot listen on unix:", path,
                 ": the path exists and is not a socket");
  asio::local::stream_protocol::socket probe(io);
  error_code ec;
  probe.connect(asio::local::stream_protocol::endpoint(path), ec);
  SEEDRL_REQUIRE(ec, "SocketServer: cannot listen on unix:", path,
                 ": a running server is using it");
  SEEDRL_REQUIRE(::unlink(path.c_str()) == 0 || errno == ENOENT,
                 "SocketServer: cannot listen on unix:", path,
                 ": cannot remove the stale socket file: ", std::strerror(errno));
}

}  // namespace

void SocketServer::start() {
  Shared& s = *shared_;
  SEEDRL_REQUIRE(!s.started, "SocketServer::start: already started");
  const std::string where = s.address.to_string();
  s.max_connections =
      connection_budget(s.options, where, [&s](const std::string& line) { s.log(line); });
  error_code ec;
  auto check = [&](const char* step) {
    SEEDRL_REQUIRE(!ec, "SocketServer: cannot listen on ", where, ": ", step, ": ", ec.message());
  };
  if (s.address.is_unix()) {
    clear_unix_path(s.io, s.address.path);
    const asio::local::stream_protocol::endpoint endpoint(s.address.path);
    auto& acceptor = s.unix_acceptor.emplace(s.io);
    acceptor.open(endpoint.protocol(), ec);
    check("open");
    acceptor.bind(endpoint, ec);
    check("bind");
    acceptor.listen(asio::socket_base::max_listen_connections, ec);
    check("listen");
    s.accept<asio::local::stream_protocol>(acceptor);
  } else {
    asio::ip::tcp::resolver resolver(s.io);
    const auto results = resolver.resolve(
        s.address.host, std::to_string(s.address.port),
        asio::ip::tcp::resolver::passive | asio::ip::tcp::resolver::numeric_service, ec);
    check("resolve");
    SEEDRL_REQUIRE(!results.empty(), "SocketServer: cannot listen on ", where,
                   ": the host resolves to no address");
    const asio::ip::tcp::endpoint endpoint = results.begin()->endpoint();
    const bool authenticated =
        !s.options.token.empty() ||
        (s.options.tls.enabled() && s.options.tls.require_client_certificate);
    SEEDRL_REQUIRE(
        authenticated || endpoint.address().is_loopback() || s.options.allow_unauthenticated,
        "SocketServer: will not listen on ", where, " (", endpoint.address().to_string(),
        ", reachable from other machines) without authentication: anyone who can reach the port "
        "could feed the learner. Give a token (SocketServerOptions::token; --token-file or "
        "SEEDRL_TOKEN) or mutual TLS (tls.client_ca with tls.require_client_certificate; "
        "--tls-ca --require-client-cert), or allow it knowingly (allow_unauthenticated; "
        "--insecure-no-auth)");
    auto& acceptor = s.tcp_acceptor.emplace(s.io);
    acceptor.open(endpoint.protocol(), ec);
    check("open");
    // A restarted learner rebinds its port at once, despite connections of its previous run in
    // TIME_WAIT.
    acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    check("SO_REUSEADDR");
    acceptor.bind(endpoint, ec);
    check("bind");
    acceptor.listen(asio::socket_base::max_listen_connections, ec);
    check("listen");
    s.address.port = acceptor.local_endpoint().port();
    s.accept<asio::ip::tcp>(acceptor);
  }
  s.accept_retry.emplace(s.io);
  s.work.emplace(s.io.get_executor());
  s.arm_sweep();
  s.started = true;
  for (int i = 0; i < s.options.io_threads; ++i) {
    s.threads.emplace_back([&s] {
      set_thread_name("seedrl-io");
      // A handler that throws is a bug, not a reason to end the learner: say it and serve on
      // (its session is closed at its deadline by the sweep).
      for (;;) {
        try {
          s.io.run();
          return;
        } catch (const std::exception& e) {
          s.log(str_cat(kHandlerFault, e.what()));
        }
      }
    });
  }
  s.log(str_cat("listening on ", s.address.to_string(), " (", s.options.mode(), ")"));
}

void SocketServer::stop(ErrorCode reason) {
  Shared& s = *shared_;
  if (s.stopping.exchange(true)) {
    // Already stopped (or stopping on another thread, which finishes the job).
    return;
  }
  s.stop_reason = reason;
  if (!s.started) return;

  // 1. No new connections; every session hears why (or will, when its step comes back).
  asio::post(s.io, [&s] {
    error_code ignored;
    if (s.tcp_acceptor) s.tcp_acceptor->close(ignored);
    if (s.unix_acceptor) s.unix_acceptor->close(ignored);
    if (s.accept_retry) s.accept_retry->cancel();
  });
  for (auto& session : s.live_sessions()) {
    asio::post(session->strand(), [session, reason] { session->shutdown(reason); });
  }
  // 2. Give them shutdown_grace to finish.
  {
    const auto deadline = deadline_after(s.options.shutdown_grace);
    MutexLock lock(s.sessions_mutex);
    while (!s.sessions.empty()) {
      if (s.sessions_changed.wait_until(lock, deadline) == std::cv_status::timeout) break;
    }
  }
  // 3. Close the rest; the I/O threads return once nothing is left to do.
  for (auto& session : s.live_sessions()) {
    asio::post(session->strand(), [session] { session->force_close(); });
  }
  s.sweeping = false;
  asio::post(s.sweep_strand, [&s] { s.sweep_timer.cancel(); });
  s.work.reset();
  for (std::thread& t : s.threads) t.join();
  s.threads.clear();
  {
    MutexLock lock(s.post_mutex);
    s.io_done = true;
  }
  // Completions posted between the threads' return and io_done run here (they only free slots).
  s.io.restart();
  s.io.poll();
  if (s.address.is_unix()) ::unlink(s.address.path.c_str());
  s.log(str_cat("stopped listening on ", s.address.to_string(), " (", protocol::name(reason), ")"));
}

SocketAddress SocketServer::address() const {
  return shared_->address;
}

std::int32_t SocketServer::max_connections() const {
  return shared_->max_connections;
}

SocketServerStats SocketServer::stats() const {
  const Shared& s = *shared_;
  SocketServerStats out;
  out.accepted = s.accepted;
  out.handshakes = s.handshakes;
  out.refused_at_accept = s.refused_at_accept;
  out.refused = s.refused;
  out.pending = s.admission.pending();
  out.steps = s.steps;
  out.bytes_received = s.bytes_received;
  out.bytes_sent = s.bytes_sent;
  {
    MutexLock lock(s.sessions_mutex);
    out.active = static_cast<std::int64_t>(s.sessions.size());
  }
  return out;
}

}  // namespace seedrl
