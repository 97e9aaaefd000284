// SessionStream: the byte stream a SocketSession reads and writes, plain (TCP or a Unix socket,
// Asio's generic stream socket) or TLS over TCP (Asio's ssl::stream). The session's handlers are
// the same for both; only the start (a TLS handshake first) and the end (the socket below) differ.
//
// A TLS session may meet a plain client, whose first bytes are a HELLO frame rather than a TLS
// record: make_plain() then turns the stream back into the plain socket it wraps, so that the
// session can answer with an ERROR frame the client can read.
//
// Thread-safety: as the session's, on its strand.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

#include "tls.hpp"

namespace seedrl::transport_detail {

// The socket under a TLS stream, read in blocks of up to 64 KiB: Asio's TLS engine asks for at
// most one record (17 KiB) at a time, and a STEP of Atari frames spans two records, which would
// otherwise cost a system call each (measured: docs/distributed.md, TLS).
class BufferedSocket
    : public boost::asio::buffered_read_stream<boost::asio::generic::stream_protocol::socket&> {
 public:
  static constexpr std::size_t kBufferBytes = 64 * 1024;
  explicit BufferedSocket(boost::asio::generic::stream_protocol::socket& socket)
      : buffered_read_stream(socket, kBufferBytes) {}
};

class SessionStream {
 public:
  using Socket = boost::asio::generic::stream_protocol::socket;
  using Tls = boost::asio::ssl::stream<BufferedSocket>;

  explicit SessionStream(Socket socket) : socket_(std::make_unique<Socket>(std::move(socket))) {}
  SessionStream(Socket socket, boost::asio::ssl::context& context)
      : socket_(std::make_unique<Socket>(std::move(socket))),
        tls_(std::make_unique<Tls>(*socket_, context)) {}

  bool tls() const { return tls_ != nullptr; }
  /// The socket below any TLS.
  Socket& socket() { return *socket_; }
  /// The TLS session (null when plain), for what went wrong in a handshake.
  SSL* ssl() { return tls_ ? tls_->native_handle() : nullptr; }

  template <class Buffers, class Handler>
  void async_read(const Buffers& buffers, Handler&& handler) {
    if (tls_) {
      boost::asio::async_read(*tls_, buffers, std::forward<Handler>(handler));
    } else {
      boost::asio::async_read(*socket_, buffers, std::forward<Handler>(handler));
    }
  }
  template <class Buffers, class Handler>
  void async_read_some(const Buffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_read_some(buffers, std::forward<Handler>(handler));
    } else {
      socket_->async_read_some(buffers, std::forward<Handler>(handler));
    }
  }
  template <class Buffers, class Handler>
  void async_write(const Buffers& buffers, Handler&& handler) {
    if (tls_) {
      boost::asio::async_write(*tls_, buffers, std::forward<Handler>(handler));
    } else {
      boost::asio::async_write(*socket_, buffers, std::forward<Handler>(handler));
    }
  }
  template <class Handler>
  void async_handshake(Handler&& handler) {
    tls_->async_handshake(boost::asio::ssl::stream_base::server, std::forward<Handler>(handler));
  }

  /// A TLS stream whose peer turned out to speak plain frames: the plain socket again. Call only
  /// before the handshake has read anything.
  void make_plain() { tls_.reset(); }

  /// Ends sending (after the last frame: the peer reads it, then the end of the stream).
  void shutdown_send() {
    boost::system::error_code ignored;
    socket_->shutdown(Socket::shutdown_send, ignored);
  }
  void close() {
    boost::system::error_code ignored;
    socket_->close(ignored);
  }

 private:
  // Held by pointer: the TLS stream refers to the socket, and the session moves the stream in.
  std::unique_ptr<Socket> socket_;
  std::unique_ptr<Tls> tls_;
};

/// The end of a peer's stream: a plain end of file, or a TLS stream closed without close_notify.
inline bool end_of_stream(const boost::system::error_code& ec) {
  return ec == boost::asio::error::eof || ec == boost::asio::ssl::error::stream_truncated;
}

}  // namespace seedrl::transport_detail
