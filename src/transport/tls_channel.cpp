#include "tls_channel.hpp"

#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "seedrl/core/error.hpp"

namespace seedrl::transport_detail {

namespace {

bool is_ip_address(const std::string& name) {
  boost::system::error_code ec;
  (void)boost::asio::ip::make_address(name, ec);
  return !ec;
}

// Each direction of the BIO pair holds this much: a STEP of Atari frames (two records) whole.
constexpr std::size_t kPairBytes = 128 * 1024;

}  // namespace

TlsChannel::TlsChannel(boost::asio::ssl::context& context, int fd, const std::string& server_name,
                       std::string peer)
    : ssl_(SSL_new(context.native_handle())), fd_(fd), peer_(std::move(peer)) {
  SEEDRL_REQUIRE(ssl_ != nullptr, "TLS: cannot create a session");
  BIO* internal = nullptr;
  SEEDRL_REQUIRE(BIO_new_bio_pair(&internal, kPairBytes, &network_, kPairBytes) == 1,
                 "TLS: cannot create its buffers");
  SSL_set_bio(ssl_, internal, internal);
  // The name the learner's certificate must hold. Any failure to set it is a failure to connect:
  // a handshake without the check would accept any certificate the CA ever signed.
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl_);
  bool named = !server_name.empty();
  if (named && is_ip_address(server_name)) {
    named = X509_VERIFY_PARAM_set1_ip_asc(param, server_name.c_str()) == 1;
  } else if (named) {
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    named = SSL_set_tlsext_host_name(ssl_, server_name.c_str()) == 1 &&
            SSL_set1_host(ssl_, server_name.c_str()) == 1;
  }
  if (!named) {
    SSL_free(ssl_);
    BIO_free(network_);
    ERR_clear_error();
    fail(
        "TLS: cannot require the name '", server_name,
        "' of the learner's certificate (RemoteClientOptions::tls.server_name, --tls-server-name); "
        "not connecting without that check");
  }
  SSL_set_connect_state(ssl_);
}

TlsChannel::~TlsChannel() {
  SSL_free(ssl_);  // frees its end of the pair
  BIO_free(network_);
}

Status TlsChannel::check(int result, Want* want) {
  *want = Want::nothing;
  if (result == 1) return Status::ok();
  const int code = SSL_get_error(ssl_, result);
  if (code == SSL_ERROR_WANT_READ) {
    *want = Want::input;
    return Status::ok();
  }
  if (code == SSL_ERROR_WANT_WRITE) return Status::ok();  // memory BIOs take everything
  std::string why = tls_failure(ssl_, result);
  std::string message = str_cat("TLS with ", peer_, ": ", why);
  // A TLS error (an alert, a certificate) will come again; a closed connection may not.
  if (code == SSL_ERROR_SSL || tls_failure_is_permanent(ssl_))
    return Status::invalid_argument(std::move(message));
  return Status::unavailable(std::move(message));
}

// The pair's ring is read and written in place (BIO_nread0, BIO_nwrite0): the records go from it
// to the socket and back with no copy of our own.
Status TlsChannel::flush(const Wait& wait) {
  while (true) {
    char* data = nullptr;
    const int pending = BIO_nread0(network_, &data);
    if (pending <= 0) return Status::ok();
    const ssize_t sent =
        ::send(fd_, data, static_cast<std::size_t>(pending), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (Status s = wait(POLLOUT); !s.is_ok()) return s;
        continue;
      }
      return Status::unavailable(str_cat("connection to ", peer_, " lost: ", std::strerror(errno)));
    }
    BIO_nread(network_, &data, static_cast<int>(sent));
  }
}

Status TlsChannel::fill(const Wait& wait) {
  while (true) {
    char* space = nullptr;
    const int room = BIO_nwrite0(network_, &space);
    if (room <= 0) return Status::ok();  // full: OpenSSL has enough to go on
    const ssize_t got = ::recv(fd_, space, static_cast<std::size_t>(room), MSG_DONTWAIT);
    if (got > 0) {
      BIO_nwrite(network_, &space, static_cast<int>(got));
      return Status::ok();
    }
    if (got == 0)
      return Status::unavailable(str_cat("the server at ", peer_, " closed the connection"));
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      return Status::unavailable(str_cat("connection to ", peer_, " lost: ", std::strerror(errno)));
    if (Status s = wait(POLLIN); !s.is_ok()) return s;
  }
}

Status TlsChannel::handshake(const Wait& wait) {
  while (true) {
    ERR_clear_error();
    errno = 0;
    Want want;
    Status s = check(SSL_do_handshake(ssl_), &want);
    if (Status f = flush(wait); !f.is_ok()) return f;  // what the handshake wrote, even on failure
    if (!s.is_ok()) return s;
    if (want == Want::nothing) return Status::ok();
    if (Status f = fill(wait); !f.is_ok()) return f;
  }
}

Status TlsChannel::send(const iovec* parts, int count, const Wait& wait) {
  for (int i = 0; i < count; ++i) {
    if (parts[i].iov_len == 0) continue;
    ERR_clear_error();
    errno = 0;
    std::size_t written = 0;
    Want want;
    const int ok = SSL_write_ex(ssl_, parts[i].iov_base, parts[i].iov_len, &written);
    if (Status s = check(ok, &want); !s.is_ok()) return s;
  }
  return flush(wait);
}

Status TlsChannel::receive(void* data, std::size_t size, const Wait& wait, std::size_t* got) {
  while (true) {
    ERR_clear_error();
    errno = 0;
    Want want;
    Status s = check(SSL_read_ex(ssl_, data, size, got), &want);
    if (Status f = flush(wait); !f.is_ok()) return f;  // a key update or an alert to answer
    if (!s.is_ok()) return s;
    if (want == Want::nothing) return Status::ok();
    if (Status f = fill(wait); !f.is_ok()) return f;
  }
}

void TlsChannel::close_notify() {
  ERR_clear_error();
  (void)SSL_shutdown(ssl_);
  ERR_clear_error();
  char* data = nullptr;
  const int pending = BIO_nread0(network_, &data);
  if (pending > 0)
    (void)::send(fd_, data, static_cast<std::size_t>(pending), MSG_NOSIGNAL | MSG_DONTWAIT);
}

std::string TlsChannel::description() const {
  return str_cat(SSL_get_version(ssl_), " ", SSL_get_cipher_name(ssl_));
}

}  // namespace seedrl::transport_detail
