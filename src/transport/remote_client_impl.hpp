// RemoteClient::Impl: a RemoteClient's connection (remote_client.cpp): Asio resolves and connects
// within the connect timeout; then the descriptor is used directly (sendmsg with two buffers so
// that observations are never copied, recv, poll for deadlines and interrupt()), or through a
// TlsChannel with TLS. Private to src/transport.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "asio.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/transport/protocol.hpp"
#include "seedrl/transport/remote_client.hpp"
#include "seedrl/transport/socket_address.hpp"
#include "tls_channel.hpp"

namespace seedrl {

namespace asio = boost::asio;
using boost::system::error_code;
using protocol::ErrorCode;
using protocol::FrameType;

namespace remote_client_detail {

using Clock = std::chrono::steady_clock;

// What an actor should do about an ERROR frame (see remote_client.hpp).
inline Status status_for(const protocol::ErrorFrame& error) {
  std::string message = str_cat("server: ", protocol::name(error.code), ": ", error.message);
  switch (error.code) {
    case ErrorCode::finished:
      return Status::closed(std::move(message));
    case ErrorCode::shutting_down:
    case ErrorCode::unavailable:
    case ErrorCode::idle_timeout:
    case ErrorCode::internal:
      return Status::unavailable(std::move(message));
    default:
      return Status::invalid_argument(std::move(message));
  }
}

}  // namespace remote_client_detail

struct RemoteClient::Impl {
  using Clock = remote_client_detail::Clock;

  explicit Impl(RemoteClientOptions o)
      : options(std::move(o)), address(SocketAddress::parse(options.address)) {
    if (options.tls.enabled())
      tls_context.emplace(transport_detail::make_client_context(options.tls));
  }

  RemoteClientOptions options;
  SocketAddress address;
  std::optional<asio::ssl::context> tls_context;      // with TLS: built once
  std::unique_ptr<transport_detail::TlsChannel> tls;  // with TLS: the connection's session
  asio::io_context io;
  std::optional<asio::ip::tcp::socket> tcp;
  std::optional<asio::local::stream_protocol::socket> local;

  // interrupt() may come from any thread; everything else is the owning thread's.
  Mutex fd_mutex;
  int fd SEEDRL_GUARDED_BY(fd_mutex) = -1;  // written only by the owning thread
  bool interrupted SEEDRL_GUARDED_BY(fd_mutex) = false;

  std::uint32_t sequence = 0;
  std::uint32_t num_envs = 0;
  ActionSpec action_spec;       // the connection's (the server's, checked equal to the actor's)
  StepSpec spec;                // the connection's steps
  protocol::StepLayout layout;  // of its STEPs
  std::int32_t first_slot = -1;
  std::string send_buffer;
  // The STEP's fields that travel as bits (protocol::travels_as_bits), packed.
  std::array<std::vector<std::uint8_t>, StepSpec::kMaxFields> packed_fields;
  std::vector<std::uint8_t> receive_buffer;  // [rx_begin, rx_end) holds bytes not yet consumed
  std::size_t rx_begin = 0, rx_end = 0;
  // While a frame of another protocol version is read: its version and type byte.
  std::optional<std::uint8_t> other_version;
  std::uint8_t other_version_type = 0;

  // The socket, for the owning thread. It is the only thread that writes fd, so its reads need
  // no lock; the analysis cannot express "written under the lock, read by the writer without".
  int owned_fd() const SEEDRL_NO_THREAD_SAFETY_ANALYSIS { return fd; }

  bool is_interrupted() SEEDRL_EXCLUDES(fd_mutex) {
    MutexLock lock(fd_mutex);
    return interrupted;
  }

  void close() SEEDRL_EXCLUDES(fd_mutex) {
    {
      MutexLock lock(fd_mutex);
      fd = -1;
    }
    tls.reset();
    error_code ignored;
    if (tcp) tcp->close(ignored);
    if (local) local->close(ignored);
    tcp.reset();
    local.reset();
    rx_begin = rx_end = 0;
    first_slot = -1;
    other_version.reset();
  }

  // A failure that ends the connection: closes it, and reports closed if interrupt() caused it.
  Status lost(Status status) {
    close();
    if (is_interrupted()) return Status::closed("interrupted");
    return status;
  }

  static int remaining_ms(Clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left + 1, 1 << 30));
  }

  // Waits until the socket is ready for `events`; fails on timeout or interrupt.
  Status wait(short events, Clock::time_point deadline, const char* doing) {
    while (true) {
      pollfd p{owned_fd(), events, 0};
      const int ready = ::poll(&p, 1, remaining_ms(deadline));
      if (ready > 0) return Status::ok();
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) return Status::unavailable(str_cat(doing, ": poll: ", std::strerror(errno)));
      return Status::deadline_exceeded(str_cat(doing, ": no progress within the time limit"));
    }
  }

  // The TLS handshake on the connected socket, within the connect deadline.
  Status start_tls(Clock::time_point deadline) {
    const std::string name =
        options.tls.server_name.empty() ? address.host : options.tls.server_name;
    try {
      tls = std::make_unique<transport_detail::TlsChannel>(*tls_context, owned_fd(), name,
                                                           address.to_string());
    } catch (const Error& e) {  // a name the certificate check cannot take: for good
      return Status::invalid_argument(e.what());
    }
    return tls->handshake(waiter(deadline, "the TLS handshake"));
  }

  transport_detail::TlsChannel::Wait waiter(Clock::time_point deadline, const char* doing) {
    return [this, deadline, doing](short events) { return wait(events, deadline, doing); };
  }

  Status send_all(iovec* parts, int count, Clock::time_point deadline) {
    if (tls) return tls->send(parts, count, waiter(deadline, "sending to the server"));
    while (count > 0) {
      msghdr message{};
      message.msg_iov = parts;
      message.msg_iovlen = static_cast<std::size_t>(count);
      const ssize_t sent = ::sendmsg(owned_fd(), &message, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (sent < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          if (Status s = wait(POLLOUT, deadline, "sending to the server"); !s.is_ok()) return s;
          continue;
        }
        return Status::unavailable(
            str_cat("connection to ", address.to_string(), " lost: ", std::strerror(errno)));
      }
      auto left = static_cast<std::size_t>(sent);
      while (count > 0 && left >= parts->iov_len) {
        left -= parts->iov_len;
        ++parts;
        --count;
      }
      if (count > 0) {
        parts->iov_base = static_cast<char*>(parts->iov_base) + left;
        parts->iov_len -= left;
      }
    }
    return Status::ok();
  }

  // Reads one whole frame; its payload is then receive_buffer[payload_at, payload_at + bytes).
  // `expected` (a frame size) sizes the reads so that lock-step answers take one recv call.
  Status receive_frame(std::size_t expected, std::uint32_t max_frame_bytes,
                       Clock::time_point deadline, protocol::FrameHeader* header,
                       std::size_t* payload_at) {
    std::optional<std::size_t> frame_bytes;
    while (true) {
      const std::size_t have = rx_end - rx_begin;
      if (!frame_bytes && have >= protocol::kHeaderBytes) {
        const std::span<const std::uint8_t> bytes(receive_buffer.data() + rx_begin,
                                                  protocol::kHeaderBytes);
        if (protocol::Verdict v = protocol::decode_header(bytes, max_frame_bytes, header);
            !v.is_ok()) {
          if (v.error().code != ErrorCode::unsupported_version) {
            return lost(Status::unavailable(
                str_cat("bad frame from ", address.to_string(), ": ", v.error().message)));
          }
          // A server of another version: its frame (an ERROR, as a server that refuses this
          // version sends) is read whole for what it says; then this client gives up.
          other_version = header->version;
          other_version_type = bytes[5];
        }
        frame_bytes = header->frame_bytes();
      }
      if (frame_bytes && have >= *frame_bytes) {
        *payload_at = rx_begin + protocol::kHeaderBytes;
        rx_begin += *frame_bytes;
        if (other_version) return other_version_refusal(payload(*payload_at, *header));
        return Status::ok();
      }
      // Room for the rest of this frame (or the expected one) after the unread bytes.
      const std::size_t want = std::max(frame_bytes.value_or(expected), protocol::kHeaderBytes);
      if (rx_begin > 0 && receive_buffer.size() - rx_begin < want) {
        std::memmove(receive_buffer.data(), receive_buffer.data() + rx_begin, have);
        rx_begin = 0;
        rx_end = have;
      }
      if (receive_buffer.size() < rx_begin + want) receive_buffer.resize(rx_begin + want);
      if (tls) {
        std::size_t got = 0;
        if (Status s = tls->receive(receive_buffer.data() + rx_end, rx_begin + want - rx_end,
                                    waiter(deadline, "waiting for the server"), &got);
            !s.is_ok()) {
          return lost(s);
        }
        rx_end += got;
        continue;
      }
      if (Status s = wait(POLLIN, deadline, "waiting for the server"); !s.is_ok()) return lost(s);
      const ssize_t got = ::recv(owned_fd(), receive_buffer.data() + rx_end,
                                 rx_begin + want - rx_end, MSG_DONTWAIT);
      if (got > 0) {
        rx_end += static_cast<std::size_t>(got);
      } else if (got == 0) {
        return lost(Status::unavailable(
            str_cat("the server at ", address.to_string(), " closed the connection")));
      } else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
        return lost(Status::unavailable(
            str_cat("connection to ", address.to_string(), " lost: ", std::strerror(errno))));
      }
    }
  }

  std::span<const std::uint8_t> payload(std::size_t at, const protocol::FrameHeader& header) const {
    return {receive_buffer.data() + at, header.payload_bytes()};
  }

  // A frame of another protocol version: invalid_argument (retrying cannot help), naming both
  // versions, with the server's message when the frame is an ERROR (its layout is the same in
  // every version so far).
  Status other_version_refusal(std::span<const std::uint8_t> bytes) {
    std::string said;
    protocol::ErrorFrame error;
    if (other_version_type == static_cast<std::uint8_t>(FrameType::error) &&
        protocol::decode_error(bytes, &error).is_ok()) {
      said = str_cat(" (it says: ", protocol::name(error.code), ": ", error.message, ")");
    }
    const int theirs = *other_version;
    other_version.reset();
    return lost(Status::invalid_argument(
        str_cat("the server at ", address.to_string(), " speaks protocol version ", theirs,
                "; this client speaks version ", int{protocol::kVersion},
                theirs >= 1 && theirs < protocol::kVersion
                    ? " (legal-action masks as bits); update the learner"
                : theirs > protocol::kVersion ? "; update the actor"
                                              : "",
                said)));
  }

  Status refused(std::span<const std::uint8_t> bytes) {
    protocol::ErrorFrame error;
    if (protocol::Verdict v = protocol::decode_error(bytes, &error); !v.is_ok()) {
      return lost(Status::unavailable(
          str_cat("bad ERROR frame from ", address.to_string(), ": ", v.error().message)));
    }
    return lost(remote_client_detail::status_for(error));
  }

  // Resolves and connects within connect_timeout; interrupt() stops the wait.
  Status open_socket(Clock::time_point deadline) SEEDRL_EXCLUDES(fd_mutex) {
    io.restart();
    if (is_interrupted()) return Status::closed("interrupted");
    error_code result = asio::error::would_block;
    asio::ip::tcp::resolver resolver(io);
    if (address.is_unix()) {
      local.emplace(io);
      local->async_connect(asio::local::stream_protocol::endpoint(address.path),
                           [&](const error_code& ec) { result = ec; });
    } else {
      tcp.emplace(io);
      resolver.async_resolve(
          address.host, std::to_string(address.port),
          [&](const error_code& ec, const asio::ip::tcp::resolver::results_type& results) {
            if (ec) {
              result = ec;
              return;
            }
            asio::async_connect(*tcp, results,
                                [&](const error_code& e, const auto&) { result = e; });
          });
    }
    io.run_until(deadline);
    if (result == asio::error::would_block) {  // timed out or interrupted: cancel and collect
      resolver.cancel();
      error_code ignored;
      if (tcp) tcp->close(ignored);
      if (local) local->close(ignored);
      io.restart();
      io.run();
      close();
      if (is_interrupted()) return Status::closed("interrupted");
      return Status::unavailable(str_cat("cannot connect to ", address.to_string(), " within ",
                                         options.connect_timeout.count(), " ms"));
    }
    if (result) {
      close();
      return Status::unavailable(
          str_cat("cannot connect to ", address.to_string(), ": ", result.message()));
    }
    if (tcp) {
      error_code ignored;
      tcp->set_option(asio::ip::tcp::no_delay(true), ignored);
    }
    MutexLock lock(fd_mutex);
    if (interrupted) {
      fd = -1;
      return Status::closed("interrupted");
    }
    fd = tcp ? tcp->native_handle() : local->native_handle();
    return Status::ok();
  }
};

}  // namespace seedrl
