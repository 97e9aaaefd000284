// TlsChannel: a RemoteClient's TLS session over its connected, non-blocking socket. OpenSSL works
// on a BIO pair (a ring buffer each way) and this class moves the bytes: a step's records go out in
// one send() and come in with as few recv() calls as the kernel allows, as for a plain socket
// (OpenSSL on the descriptor itself writes each record, and reads each record's header, with a
// system call of its own). The waiting (poll, deadlines, interrupt()) is the caller's `wait`.
//
// Verification: the learner's certificate must chain to the client's CA and name `server_name`
// (a DNS name, or an IP address); SNI carries a DNS name.
//
// Thread-safety: one thread (the actor's).
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "seedrl/core/status.hpp"
#include "tls.hpp"

namespace seedrl::transport_detail {

class TlsChannel {
 public:
  /// Waits until the socket is ready for `events` (POLLIN, POLLOUT); a failed status ends the
  /// operation with it (a deadline, an interrupt).
  using Wait = std::function<Status(short events)>;

  /// Throws seedrl::Error when OpenSSL cannot set up the session (out of memory).
  TlsChannel(boost::asio::ssl::context& context, int fd, const std::string& server_name,
             std::string peer);
  ~TlsChannel();
  TlsChannel(const TlsChannel&) = delete;
  TlsChannel& operator=(const TlsChannel&) = delete;

  /// The handshake. A certificate that does not verify, or an alert from the learner, is
  /// invalid_argument (retrying cannot help); a lost connection is unavailable.
  Status handshake(const Wait& wait);
  /// Sends `parts` whole, as TLS records, in as few send() calls as the socket takes.
  Status send(const iovec* parts, int count, const Wait& wait);
  /// Reads up to `size` bytes (at least one) into `data`; `*got` says how many.
  Status receive(void* data, std::size_t size, const Wait& wait, std::size_t* got);
  /// Queues close_notify and sends it, best effort, without waiting.
  void close_notify();
  /// The protocol and cipher agreed on, e.g. "TLSv1.3 TLS_AES_128_GCM_SHA256".
  std::string description() const;

 private:
  // What an SSL_* call that returned `result` means: ok, want more input, or a failure.
  enum class Want { nothing, input };
  Status check(int result, Want* want);
  Status flush(const Wait& wait);  // the write BIO's bytes to the socket
  Status fill(const Wait& wait);   // the socket's bytes into the read BIO (waits for some)

  SSL* ssl_ = nullptr;
  BIO* network_ = nullptr;  // our end of the BIO pair (the other end is ssl_'s)
  int fd_;
  std::string peer_;
};

}  // namespace seedrl::transport_detail
