// TLS contexts for the transport (include/seedrl/transport/tls_options.hpp): OpenSSL through
// Boost.Asio's ssl::context, built from validated options. Private to src/transport.
#pragma once

#include <openssl/ssl.h>

#include <string>

#include "asio.hpp"
#include "seedrl/transport/tls_options.hpp"

#include <boost/asio/ssl.hpp>

namespace seedrl::transport_detail {

/// The server's context: its certificate and key, TLS 1.3 (or 1.2 and up), and, with a client CA,
/// a request for (or a requirement of) the actor's certificate. Options already validated.
boost::asio::ssl::context make_server_context(const TlsServerOptions& options);

/// The client's context: the CA it verifies the server against, the minimum version, and its own
/// certificate for mutual TLS. Options already validated.
boost::asio::ssl::context make_client_context(const TlsClientOptions& options);

/// Why a TLS operation failed, in words: OpenSSL's reason, and for a certificate that did not
/// verify, what was wrong with it (expired, unknown issuer, wrong name, ...). `ssl` may be null.
std::string tls_failure(const boost::system::error_code& ec, SSL* ssl);

/// The same after a failed SSL_* call on `ssl` that returned `result` (the client's own I/O).
std::string tls_failure(SSL* ssl, int result);

/// Whether a failure is one that retrying cannot mend: the peer's certificate did not verify, or
/// the versions or ciphers have nothing in common.
bool tls_failure_is_permanent(SSL* ssl);

}  // namespace seedrl::transport_detail
