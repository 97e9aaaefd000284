// SocketServer: the network front end of an InferenceEndpoint (an InferenceServer), for actors in
// other processes and on other machines. Speaks the protocol of docs/protocol.md over TCP or a
// Unix-domain socket; Boost.Asio does the I/O, behind this header.
//
//   RemoteClient ──TCP/Unix──▶ session: HELLO ─▶ token check ─▶ endpoint.connect ─▶ WELCOME
//                              STEP ─▶ decode (observations stay in the receive buffer) ─▶
//                              endpoint.submit ─▶ (the batch copies them, once) ─▶ ACTIONS
//
// One session per connection, lock-step (one STEP in flight per actor). A session that sends
// anything wrong (bytes that do not parse, an oversized or unauthenticated frame, a step before
// the handshake, observations of the wrong size) gets an ERROR frame and is closed; its slots are
// freed and its partial unroll dropped; every other session carries on. Unauthenticated peers
// cannot make the server allocate more than a handshake frame (4 KiB).
//
// Several SocketServers may feed the same endpoint (say TCP for remote actors and a Unix socket
// for local ones). The endpoint must outlive the SocketServer and keep answering steps until it
// is stopped; stopping it answers any step still in flight.
//
// Thread-safety: all members may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "seedrl/acting/inference_endpoint.hpp"
#include "seedrl/transport/protocol.hpp"
#include "seedrl/transport/socket_address.hpp"
#include "seedrl/transport/tls_options.hpp"

namespace seedrl {

struct SocketServerOptions {
  /// Where to listen (see SocketAddress). Binds 127.0.0.1 unless told otherwise.
  std::string listen = "127.0.0.1:8686";
  /// Shared secret actors must present. Empty accepts actors that present an empty token.
  /// transport/token.hpp reads it from a file or the environment.
  std::string token;
  /// Listen on a TCP address that is not loopback although actors need no token and no
  /// certificate (token empty, no tls.require_client_certificate): anyone who can reach the port
  /// may then feed the learner. start() refuses such a listener unless this is set.
  bool allow_unauthenticated = false;
  /// Largest frame accepted after the handshake; a STEP of the configured observations must fit.
  std::uint32_t max_frame_bytes = protocol::kDefaultMaxFrameBytes;
  /// Actors connected at once (connections that completed the handshake); one more is refused
  /// with an ERROR (unavailable) after its token was checked. start() lowers it where the
  /// process's open-file limit (raised to its hard limit first) leaves less room, and says so.
  std::int32_t max_connections = 1024;
  /// A connected actor that sends nothing for this long (while no step of it is in flight) is
  /// closed with an idle_timeout error.
  std::chrono::milliseconds idle_timeout{60'000};
  /// Time a new connection has from its accept to its WELCOME (the TLS handshake and the HELLO
  /// included), however slowly it sends.
  std::chrono::milliseconds handshake_timeout{10'000};
  /// Admission before authentication, decided at accept before any work on the connection:
  /// connections that have not completed their handshake yet (they do not count against
  /// max_connections) are at most max_pending_handshakes (0: no cap), and each peer address (TCP:
  /// its IP; a Unix socket: the peer's user id) may open handshake_burst at once, then
  /// handshakes_per_second (0: no limit). A connection over either is closed at once, and the
  /// refusals are logged at most a few lines a second (SocketServerStats::refused_at_accept).
  int max_pending_handshakes = 64;
  double handshakes_per_second = 20.0;
  int handshake_burst = 64;
  /// How long stop() waits for in-flight steps to be answered before it closes what is left.
  std::chrono::milliseconds shutdown_grace{2'000};
  std::int32_t io_threads = 1;
  /// Receives one line per connection event (accepted, refused and why, closed). Refusals of
  /// connections that have not completed their handshake are limited to a few lines a second (the
  /// rest summed up); bytes a peer sent are escaped (\xNN). Called from the server's threads; must
  /// be thread-safe. Empty: silent.
  std::function<void(const std::string&)> log;
  /// TLS on a TCP listener (transport/tls_options.hpp); off while tls.certificate is empty.
  TlsServerOptions tls;

  /// Throws seedrl::Error naming the first bad setting (TLS: the file and what is wrong with it).
  void validate(std::string_view owner = "SocketServerOptions") const;
  /// How this listener talks, for a learner's first lines: "TLS 1.3, client certificates
  /// required", "plain TCP, no encryption", "plain (Unix socket)".
  std::string mode() const;
};

struct SocketServerStats {
  std::int64_t accepted = 0;    ///< connections accepted
  std::int64_t handshakes = 0;  ///< connections that completed the handshake
  std::int64_t active = 0;      ///< connections open now
  std::int64_t refused = 0;     ///< connections closed with an ERROR frame for what they sent
  /// Connections closed at accept, before any work on them: over their address's rate or the cap
  /// of handshakes in progress (SocketServerOptions::max_pending_handshakes).
  std::int64_t refused_at_accept = 0;
  std::int64_t pending = 0;  ///< connections open now that have not completed their handshake
  std::int64_t steps = 0;    ///< STEP frames answered with actions
  std::int64_t bytes_received = 0;
  std::int64_t bytes_sent = 0;
};

class SocketServer {
 public:
  /// Throws seedrl::Error for bad options or an endpoint whose actions the protocol cannot carry
  /// (a box of more than protocol::kMaxActionDims dimensions).
  SocketServer(InferenceEndpoint& endpoint, SocketServerOptions options);
  /// stop(shutting_down) if still running.
  ~SocketServer();
  SocketServer(const SocketServer&) = delete;
  SocketServer& operator=(const SocketServer&) = delete;

  /// Binds, listens and starts the I/O threads. Throws seedrl::Error naming the address when it
  /// cannot listen (in use, no permission, a Unix socket path held by a running server), and when
  /// a TCP address other than loopback would accept actors without authentication (see
  /// allow_unauthenticated). A stale Unix socket file left by a crashed server is replaced. Raises
  /// the process's open-file soft limit to its hard limit.
  void start();
  /// The connection limit in force: options.max_connections, or less where the open-file limit
  /// leaves less room (valid after start()).
  std::int32_t max_connections() const;

  /// Stops accepting, tells every connected actor why with an ERROR frame (shutting_down: the
  /// learner will come back, actors retry; finished: training is over, actors stop), waits up to
  /// shutdown_grace for steps in flight, closes everything and joins the I/O threads. Removes
  /// the Unix socket file. Idempotent.
  void stop(protocol::ErrorCode reason = protocol::ErrorCode::shutting_down);

  /// The address actually listened on (port 0 resolved); valid after start().
  SocketAddress address() const;
  SocketServerStats stats() const;

  struct Shared;

 private:
  std::shared_ptr<Shared> shared_;
};

}  // namespace seedrl
