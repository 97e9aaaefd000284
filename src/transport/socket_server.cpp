// SocketServer: listening, accepting, and stopping; the connections themselves are
// SocketSessions (socket_session.hpp), and what the two share is SocketServer::Shared
// (server_shared.hpp).
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

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <type_traits>

#include "seedrl/core/error.hpp"
#include "seedrl/core/thread_name.hpp"
#include "server_shared.hpp"
#include "socket_session.hpp"

namespace seedrl {

namespace asio = boost::asio;
using boost::system::error_code;
using protocol::ErrorCode;
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

namespace {

std::string peer_name(const asio::ip::tcp::socket& socket, std::uint64_t id) {
  error_code ec;
  const auto remote = socket.remote_endpoint(ec);
  if (ec) return str_cat("connection ", id);
  return str_cat(remote.address().to_string(), ":", remote.port());
}
std::string peer_name(const asio::local::stream_protocol::socket&, std::uint64_t id) {
  return str_cat("unix connection ", id);
}

}  // namespace

template <class Protocol>
void SocketServer::Shared::accept(typename Protocol::acceptor& acceptor) {
  auto strand = asio::make_strand(io);
  acceptor.async_accept(
      strand, [this, &acceptor, strand](const error_code& ec, typename Protocol::socket socket) {
        if (ec == asio::error::operation_aborted || stopping) return;
        if (ec) {  // e.g. out of file descriptors: say so, keep accepting
          log(str_cat("accept failed: ", ec.message()));
          accept<Protocol>(acceptor);
          return;
        }
        transport_detail::HandshakeLimiter::Slot handshake;
        if constexpr (std::is_same_v<Protocol, asio::ip::tcp>) {
          error_code ignored;
          socket.set_option(asio::ip::tcp::no_delay(true), ignored);
          if (tls && !admit_tls(socket, handshake)) {
            accept<Protocol>(acceptor);
            return;
          }
        }
        bool over_limit = false;
        std::uint64_t id = 0;
        {
          MutexLock lock(sessions_mutex);
          over_limit = sessions.size() >= static_cast<std::size_t>(options.max_connections);
          id = ++next_session;
        }
        ++accepted;
        std::string peer = peer_name(socket, id);
        // One session type for TCP and Unix connections (Asio's generic stream socket), plain or
        // TLS.
        SocketSession::Socket generic(std::move(socket));
        auto session = std::make_shared<SocketSession>(
            shared_from_this(), strand,
            tls ? transport_detail::SessionStream(std::move(generic), *tls)
                : transport_detail::SessionStream(std::move(generic)),
            id, std::move(peer));
        session->hold_handshake_slot(std::move(handshake));
        bool registered = false;
        {
          // Checked under the lock that stop() takes to list the sessions: a connection accepted
          // while stop() runs is either in its list or closed here, never left open (its pending
          // read would keep the I/O threads from returning).
          MutexLock lock(sessions_mutex);
          if (!stopping) registered = sessions.emplace(id, session).second;
        }
        if (!registered) {
          session->force_close();
          return;
        }
        asio::post(strand, [session, over_limit] { session->start(over_limit); });
        accept<Protocol>(acceptor);
      });
}

// A TLS connection's admission before any TLS work (handshake_limiter.hpp): false when it was
// refused and closed.
bool SocketServer::Shared::admit_tls(asio::ip::tcp::socket& socket,
                                     transport_detail::HandshakeLimiter::Slot& slot) {
  using Verdict = transport_detail::HandshakeLimiter::Verdict;
  error_code ec;
  const auto remote = socket.remote_endpoint(ec);
  const std::string peer_ip = ec ? std::string("unknown") : remote.address().to_string();
  const auto now = std::chrono::steady_clock::now();
  const Verdict verdict = handshake_limiter.admit(peer_ip, now, slot);
  if (verdict == Verdict::admit) return true;
  ++refused_at_accept;
  const TlsServerOptions& o = options.tls;
  refusal_log(
      verdict == Verdict::address_over_rate
          ? str_cat(peer_ip, ":", ec ? 0 : remote.port(),
                    ": refused before the TLS handshake: more than ", o.handshake_burst,
                    " handshakes at once or ", o.handshakes_per_second, " a second from ", peer_ip)
          : str_cat(peer_ip, ":", ec ? 0 : remote.port(),
                    ": refused before the TLS handshake: ", o.max_pending_handshakes,
                    " handshakes are in progress (max_pending_handshakes)"),
      now);
  error_code ignored;
  socket.close(ignored);
  return false;
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
  s.work.emplace(s.io.get_executor());
  s.arm_sweep();
  s.started = true;
  for (int i = 0; i < s.options.io_threads; ++i) {
    s.threads.emplace_back([&s] {
      set_thread_name("seedrl-io");
      s.io.run();
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

SocketServerStats SocketServer::stats() const {
  const Shared& s = *shared_;
  SocketServerStats out;
  out.accepted = s.accepted;
  out.handshakes = s.handshakes;
  out.refused_at_accept = s.refused_at_accept;
  out.refused = s.refused;
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
