// TLS options' validation and the contexts built from them (tls.hpp), on OpenSSL 3.
#include "tls.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <vector>

#include "seedrl/core/error.hpp"

namespace seedrl {

namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;
using Certificate = std::unique_ptr<X509, X509Free>;
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;

File open_file(std::string_view owner, std::string_view setting, const std::string& path) {
  File f(std::fopen(path.c_str(), "rb"));
  SEEDRL_REQUIRE(f != nullptr, owner, ".", setting, ": cannot open '", path,
                 "': ", std::strerror(errno));
  return f;
}

// The ASN.1 time as "2026-11-25 04:17:39 UTC".
std::string time_text(const ASN1_TIME* t) {
  std::tm tm{};
  if (ASN1_TIME_to_tm(t, &tm) != 1) return "an unreadable date";
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

// Every certificate in a PEM file, at least one; throws naming the file otherwise.
std::vector<Certificate> read_certificates(std::string_view owner, std::string_view setting,
                                           const std::string& path) {
  File f = open_file(owner, setting, path);
  std::vector<Certificate> out;
  while (X509* x = PEM_read_X509(f.get(), nullptr, nullptr, nullptr)) out.emplace_back(x);
  ERR_clear_error();  // the end of the file reads as an error
  SEEDRL_REQUIRE(!out.empty(), owner, ".", setting, ": '", path,
                 "' holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
  return out;
}

// Throws naming the file when `cert` has expired or is not valid yet.
void require_current(std::string_view owner, std::string_view setting, const std::string& path,
                     X509* cert) {
  SEEDRL_REQUIRE(X509_cmp_current_time(X509_get0_notBefore(cert)) < 0, owner, ".", setting,
                 ": the certificate in '", path, "' is not valid until ",
                 time_text(X509_get0_notBefore(cert)));
  SEEDRL_REQUIRE(X509_cmp_current_time(X509_get0_notAfter(cert)) > 0, owner, ".", setting,
                 ": the certificate in '", path, "' expired on ",
                 time_text(X509_get0_notAfter(cert)));
}

// A certificate and its key: both readable PEM, current, and matching.
void check_pair(std::string_view owner, std::string_view cert_setting, const std::string& cert_path,
                std::string_view key_setting, const std::string& key_path) {
  SEEDRL_REQUIRE(!key_path.empty(), owner, ".", key_setting, ": a certificate ('", cert_path,
                 "') needs its private key");
  const std::vector<Certificate> chain = read_certificates(owner, cert_setting, cert_path);
  require_current(owner, cert_setting, cert_path, chain.front().get());
  File f = open_file(owner, key_setting, key_path);
  Key key(PEM_read_PrivateKey(f.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  SEEDRL_REQUIRE(key != nullptr, owner, ".", key_setting, ": '", key_path,
                 "' holds no PEM private key (-----BEGIN PRIVATE KEY-----), or it is encrypted");
  SEEDRL_REQUIRE(X509_check_private_key(chain.front().get(), key.get()) == 1, owner, ".",
                 key_setting, ": the key in '", key_path, "' does not match the certificate in '",
                 cert_path, "'");
  ERR_clear_error();
}

void check_ca(std::string_view owner, std::string_view setting, const std::string& path) {
  for (const Certificate& c : read_certificates(owner, setting, path))
    require_current(owner, setting, path, c.get());
}

// The lowest version, and AES-128-GCM first among TLS 1.3's suites: as safe as AES-256 here and
// the cheapest per byte of observations (AES-NI makes both far cheaper than ChaCha20 on x86).
// TLS 1.2, where allowed, gets what 1.3 guarantees: an ephemeral (EC)DH key exchange, so that a
// stolen key cannot decrypt recorded traffic, and AEAD ciphers only (no CBC, no RC4, no static
// RSA key exchange).
void set_protocol(boost::asio::ssl::context& context, TlsVersion version) {
  SSL_CTX* ctx = context.native_handle();
  const bool ok =
      SSL_CTX_set_min_proto_version(
          ctx, version == TlsVersion::tls13 ? TLS1_3_VERSION : TLS1_2_VERSION) == 1 &&
      SSL_CTX_set_ciphersuites(ctx,
                               "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
                               "TLS_CHACHA20_POLY1305_SHA256") == 1 &&
      SSL_CTX_set_cipher_list(ctx,
                              "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
                              "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
                              "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305") == 1;
  ERR_clear_error();
  SEEDRL_REQUIRE(ok, "TLS: this OpenSSL refuses seedrl's protocol versions or cipher suites");
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
}

}  // namespace

std::string_view name(TlsVersion version) {
  return version == TlsVersion::tls13 ? "1.3" : "1.2";
}

TlsVersion parse_tls_version(std::string_view text, std::string_view setting) {
  if (text == "1.3") return TlsVersion::tls13;
  if (text == "1.2") return TlsVersion::tls12;
  fail(setting, ": TLS version '", text, "' is not 1.2 or 1.3");
}

void TlsServerOptions::validate(std::string_view owner) const {
  if (!enabled()) {
    SEEDRL_REQUIRE(private_key.empty() && client_ca.empty() && !require_client_certificate, owner,
                   ": TLS settings without a certificate (tls.certificate is empty)");
    return;
  }
  check_pair(owner, "tls.certificate", certificate, "tls.private_key", private_key);
  if (!client_ca.empty()) check_ca(owner, "tls.client_ca", client_ca);
  SEEDRL_REQUIRE(!require_client_certificate || !client_ca.empty(), owner,
                 ".tls.require_client_certificate needs tls.client_ca, the CA that signs the "
                 "actors' certificates");
}

void TlsClientOptions::validate(std::string_view owner) const {
  if (!enabled()) {
    SEEDRL_REQUIRE(certificate.empty() && private_key.empty() && server_name.empty(), owner,
                   ": TLS settings without a CA to verify the learner with (tls.ca is empty)");
    return;
  }
  check_ca(owner, "tls.ca", ca);
  if (!certificate.empty())
    check_pair(owner, "tls.certificate", certificate, "tls.private_key", private_key);
  SEEDRL_REQUIRE(certificate.empty() == private_key.empty(), owner,
                 ".tls.private_key: given without tls.certificate");
}

namespace transport_detail {

namespace ssl = boost::asio::ssl;

ssl::context make_server_context(const TlsServerOptions& options) {
  ssl::context context(ssl::context::tls_server);
  context.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                      ssl::context::no_sslv3 | ssl::context::single_dh_use);
  set_protocol(context, options.min_version);
  context.use_certificate_chain_file(options.certificate);
  context.use_private_key_file(options.private_key, ssl::context::pem);
  if (!options.client_ca.empty()) {
    context.load_verify_file(options.client_ca);
    // The CA names a server sends with its certificate request.
    SSL_CTX_set_client_CA_list(context.native_handle(),
                               SSL_load_client_CA_file(options.client_ca.c_str()));
    context.set_verify_mode(options.require_client_certificate
                                ? ssl::verify_peer | ssl::verify_fail_if_no_peer_cert
                                : ssl::verify_peer);
  } else {
    context.set_verify_mode(ssl::verify_none);
  }
  return context;
}

ssl::context make_client_context(const TlsClientOptions& options) {
  ssl::context context(ssl::context::tls_client);
  context.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                      ssl::context::no_sslv3);
  set_protocol(context, options.min_version);
  context.load_verify_file(options.ca);
  context.set_verify_mode(ssl::verify_peer);
  if (!options.certificate.empty()) {
    context.use_certificate_chain_file(options.certificate);
    context.use_private_key_file(options.private_key, ssl::context::pem);
  }
  return context;
}

namespace {

// What OpenSSL's error queue says, emptied; empty when it says nothing.
std::string drain_error_queue() {
  std::string text;
  while (const unsigned long e = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(e, buffer, sizeof buffer);
    const char* reason = ERR_reason_error_string(e);
    if (!text.empty()) text += "; ";
    text += reason ? reason : buffer;
  }
  return text;
}

// For a peer certificate that did not verify: why, in OpenSSL's words.
std::string verify_failure(SSL* ssl) {
  if (ssl == nullptr) return {};
  const long result = SSL_get_verify_result(ssl);
  if (result == X509_V_OK) return {};
  return str_cat(" (the peer's certificate: ", X509_verify_cert_error_string(result), ")");
}

}  // namespace

std::string tls_failure(const boost::system::error_code& ec, SSL* ssl) {
  std::string text = ec.message();
  if (ec == boost::asio::ssl::error::stream_truncated) text = "the peer closed the connection";
  const std::string queued = drain_error_queue();
  if (!queued.empty() && text.find(queued) == std::string::npos) text += str_cat(" [", queued, "]");
  return text + verify_failure(ssl);
}

std::string tls_failure(SSL* ssl, int result) {
  const int code = SSL_get_error(ssl, result);
  std::string text;
  switch (code) {
    case SSL_ERROR_ZERO_RETURN:
      text = "the peer closed the TLS session";
      break;
    case SSL_ERROR_SYSCALL:
      text = errno != 0 ? str_cat("connection lost: ", std::strerror(errno))
                        : std::string("the peer closed the connection");
      break;
    default:
      text = drain_error_queue();
      if (text.empty()) text = str_cat("OpenSSL error ", code);
  }
  ERR_clear_error();
  return text + verify_failure(ssl);
}

bool tls_failure_is_permanent(SSL* ssl) {
  return ssl != nullptr && SSL_get_verify_result(ssl) != X509_V_OK;
}

}  // namespace transport_detail

}  // namespace seedrl
