// TLS for the TCP transport: what a SocketServer presents and asks for, and what a RemoteClient
// verifies and presents. Files are PEM (as `openssl` writes them). Implemented with Boost.Asio's
// ssl::stream and OpenSSL behind the transport's pimpl: this header includes neither.
//
//   learner (SocketServer)                         actor (RemoteClient)
//   certificate + private_key  ── TLS 1.3 ──▶      ca: verifies the learner's certificate and
//   client_ca (mutual TLS): verifies the actor's   that it names server_name (default: the host
//     certificate, required with                   of the address)
//     require_client_certificate                   certificate + private_key (mutual TLS)
//
// The shared token stays a second factor, now sent inside the encrypted channel. Plain TCP and
// Unix sockets remain for loopback and trusted networks; a TLS port answers a plain client with
// an ERROR frame saying that it needs TLS.
#pragma once

#include <string>
#include <string_view>

namespace seedrl {

enum class TlsVersion {
  tls12,  ///< TLS 1.2 or 1.3
  tls13,  ///< TLS 1.3 only (the default)
};

/// "1.2" or "1.3".
std::string_view name(TlsVersion version);
/// The inverse of name(); throws seedrl::Error naming `setting` and the text.
TlsVersion parse_tls_version(std::string_view text, std::string_view setting);

/// A SocketServer's TLS (SocketServerOptions::tls). Off while `certificate` is empty.
struct TlsServerOptions {
  std::string certificate;  ///< PEM: the learner's certificate (then any intermediates)
  std::string private_key;  ///< PEM: its private key
  /// PEM: the CAs that sign actors' certificates (mutual TLS). Empty: actors are not asked for
  /// certificates.
  std::string client_ca;
  /// Refuse actors that present no certificate signed by client_ca (needs client_ca).
  bool require_client_certificate = false;
  /// TLS 1.3 only, or TLS 1.2 too (then only ECDHE key exchange with AEAD suites: forward
  /// secrecy and no CBC). Flood control before the TLS work is every listener's
  /// (SocketServerOptions::max_pending_handshakes and the per-address rate).
  TlsVersion min_version = TlsVersion::tls13;

  bool enabled() const { return !certificate.empty(); }
  /// Throws seedrl::Error naming `owner`, the file and what is wrong with it: missing or
  /// unreadable, not PEM, a key that does not match the certificate, a certificate that has
  /// expired or is not valid yet, client settings without a certificate.
  void validate(std::string_view owner) const;
};

/// A RemoteClient's TLS (RemoteClientOptions::tls). Off while `ca` is empty.
struct TlsClientOptions {
  std::string ca;  ///< PEM: the CAs the learner's certificate must verify against
  /// The name the learner's certificate must hold (a DNS name or an IP address); empty: the host
  /// of RemoteClientOptions::address.
  std::string server_name;
  std::string certificate;  ///< PEM: this actor's certificate (mutual TLS); empty: none
  std::string private_key;  ///< PEM: its key (with certificate)
  TlsVersion min_version = TlsVersion::tls13;

  bool enabled() const { return !ca.empty(); }
  /// Throws seedrl::Error naming `owner`, the file and what is wrong with it (as above).
  void validate(std::string_view owner) const;
};

}  // namespace seedrl
