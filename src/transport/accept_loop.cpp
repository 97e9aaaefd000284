// The accept loop of a SocketServer's listeners (SocketServer::Shared::accept): every accepted
// connection is admitted or refused (AdmissionLimiter: per peer address, and the handshakes in
// flight), then becomes a SocketSession on a strand of its own, registered unless the server is
// stopping. A failed accept (out of file descriptors) backs off instead of spinning.
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <type_traits>

#include "seedrl/core/error.hpp"
#include "seedrl/transport/socket_server.hpp"
#include "server_shared.hpp"
#include "socket_session.hpp"

namespace seedrl {

namespace asio = boost::asio;
using boost::system::error_code;
using transport_detail::SocketSession;

namespace {

// A connection's name in the log, and the address its admission is counted by: a TCP peer's IP,
// a Unix peer's user id (every Unix peer is on this machine; what tells them apart is who runs
// them).
struct Peer {
  std::string name, address;
};

Peer peer_of(const asio::ip::tcp::socket& socket, std::uint64_t id) {
  error_code ec;
  const auto remote = socket.remote_endpoint(ec);
  if (ec) return {str_cat("connection ", id), "unknown"};
  const std::string ip = remote.address().to_string();
  return {str_cat(ip, ":", remote.port()), ip};
}
Peer peer_of(asio::local::stream_protocol::socket& socket, std::uint64_t id) {
  ucred credentials{};
  socklen_t size = sizeof credentials;
  const bool known =
      ::getsockopt(socket.native_handle(), SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0;
  return {str_cat("unix connection ", id), known ? str_cat("uid ", credentials.uid) : "unknown"};
}

}  // namespace

template <class Protocol>
void SocketServer::Shared::accept(typename Protocol::acceptor& acceptor) {
  auto strand = asio::make_strand(io);
  acceptor.async_accept(
      strand, [this, &acceptor, strand](const error_code& ec, typename Protocol::socket socket) {
        if (ec == asio::error::operation_aborted || stopping) return;
        if (ec) return accept_after_error<Protocol>(acceptor, ec);
        accept_backoff = std::chrono::milliseconds(0);
        std::uint64_t id = 0;
        {
          MutexLock lock(sessions_mutex);
          id = ++next_session;
        }
        ++accepted;
        Peer peer = peer_of(socket, id);
        transport_detail::AdmissionLimiter::Slot handshake;
        if (!admit(socket, peer.name, peer.address, handshake)) return accept<Protocol>(acceptor);
        if constexpr (std::is_same_v<Protocol, asio::ip::tcp>) {
          error_code ignored;
          socket.set_option(asio::ip::tcp::no_delay(true), ignored);
        }
        // One session type for TCP and Unix connections (Asio's generic stream socket), plain or
        // TLS.
        SocketSession::Socket generic(std::move(socket));
        auto session = std::make_shared<SocketSession>(
            shared_from_this(), strand,
            tls ? transport_detail::SessionStream(std::move(generic), *tls)
                : transport_detail::SessionStream(std::move(generic)),
            id, std::move(peer.name), std::move(handshake));
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
        asio::post(strand, [session] { session->start(); });
        accept<Protocol>(acceptor);
      });
}

// Accept fails when the process is out of file descriptors (EMFILE, ENFILE) or memory; retrying at
// once would spin a core and fill the log. Waits 5 ms, doubling up to a second.
template <class Protocol>
void SocketServer::Shared::accept_after_error(typename Protocol::acceptor& acceptor,
                                              const error_code& ec) {
  accept_backoff =
      std::clamp(accept_backoff * 2, std::chrono::milliseconds(5), std::chrono::milliseconds(1000));
  ++refused_at_accept;
  log_refusal(str_cat("accept failed: ", ec.message(), "; accepting again in ",
                      accept_backoff.count(), " ms"));
  accept_retry->expires_after(accept_backoff);
  accept_retry->async_wait([this, &acceptor](const error_code& e) {
    if (e || stopping) return;
    accept<Protocol>(acceptor);
  });
}

template <class Socket>
bool SocketServer::Shared::admit(Socket& socket, const std::string& peer,
                                 const std::string& peer_address,
                                 transport_detail::AdmissionLimiter::Slot& slot) {
  using Verdict = transport_detail::AdmissionLimiter::Verdict;
  const auto now = std::chrono::steady_clock::now();
  const Verdict verdict = admission.admit(peer_address, now, slot);
  if (verdict == Verdict::admit) return true;
  ++refused_at_accept;
  refusal_log(
      verdict == Verdict::address_over_rate
          ? str_cat(peer, ": refused at accept: more than ", options.handshake_burst,
                    " connections at once or ", options.handshakes_per_second, " a second from ",
                    peer_address, " (handshake_burst, handshakes_per_second)")
          : str_cat(peer, ": refused at accept: ", options.max_pending_handshakes,
                    " connections are awaiting their handshake (max_pending_handshakes)"),
      now);
  error_code ignored;
  socket.close(ignored);
  return false;
}

template void SocketServer::Shared::accept<asio::ip::tcp>(asio::ip::tcp::acceptor&);
template void SocketServer::Shared::accept<asio::local::stream_protocol>(
    asio::local::stream_protocol::acceptor&);

}  // namespace seedrl
