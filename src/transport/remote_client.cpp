// RemoteClient: Asio resolves and connects (with a timeout); the lock-step exchange itself uses
// the socket's descriptor directly (sendmsg with two buffers, so observations are never copied;
// poll for deadlines and for interrupt()).
#include "seedrl/transport/remote_client.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "asio.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/transport/protocol.hpp"
#include "seedrl/transport/socket_address.hpp"

namespace seedrl {

namespace asio = boost::asio;
using boost::system::error_code;
using protocol::ErrorCode;
using protocol::FrameType;
using Clock = std::chrono::steady_clock;

void RemoteClientOptions::validate() const {
  (void)SocketAddress::parse(address);
  SEEDRL_REQUIRE(token.size() <= protocol::kMaxTokenBytes, "RemoteClientOptions: token has ",
                 token.size(), " bytes; at most ", protocol::kMaxTokenBytes, " are allowed");
  SEEDRL_REQUIRE(connect_timeout.count() > 0,
                 "RemoteClientOptions: connect_timeout must be positive");
  SEEDRL_REQUIRE(step_timeout.count() > 0, "RemoteClientOptions: step_timeout must be positive");
}

namespace {

// What an actor should do about an ERROR frame (see remote_client.hpp).
Status status_for(const protocol::ErrorFrame& error) {
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

}  // namespace

struct RemoteClient::Impl {
  explicit Impl(RemoteClientOptions o)
      : options(std::move(o)), address(SocketAddress::parse(options.address)) {}

  RemoteClientOptions options;
  SocketAddress address;
  asio::io_context io;
  std::optional<asio::ip::tcp::socket> tcp;
  std::optional<asio::local::stream_protocol::socket> local;

  // interrupt() may come from any thread; everything else is the owning thread's.
  Mutex fd_mutex;
  int fd SEEDRL_GUARDED_BY(fd_mutex) = -1;  // written only by the owning thread
  bool interrupted SEEDRL_GUARDED_BY(fd_mutex) = false;

  std::uint32_t sequence = 0;
  std::uint32_t num_envs = 0;
  ActionSpec action_spec;  // the connection's (the server's, checked equal to the actor's)
  std::size_t observation_bytes = 0;
  std::int32_t first_slot = -1;
  std::string send_buffer;
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

  Status send_all(iovec* parts, int count, Clock::time_point deadline) {
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
                theirs >= 1 && theirs < protocol::kVersion ? " (box actions); update the learner"
                : theirs > protocol::kVersion              ? "; update the actor"
                                                           : "",
                said)));
  }

  Status refused(std::span<const std::uint8_t> bytes) {
    protocol::ErrorFrame error;
    if (protocol::Verdict v = protocol::decode_error(bytes, &error); !v.is_ok()) {
      return lost(Status::unavailable(
          str_cat("bad ERROR frame from ", address.to_string(), ": ", v.error().message)));
    }
    return lost(status_for(error));
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

RemoteClient::RemoteClient(RemoteClientOptions options) {
  options.validate();
  impl_ = std::make_unique<Impl>(std::move(options));
}
RemoteClient::~RemoteClient() {
  if (impl_) disconnect();
}
RemoteClient::RemoteClient(RemoteClient&&) noexcept = default;
RemoteClient& RemoteClient::operator=(RemoteClient&&) noexcept = default;

Status RemoteClient::connect(const ConnectRequest& request) {
  Impl& c = *impl_;
  disconnect();
  SEEDRL_REQUIRE(
      request.num_envs >= 1 && static_cast<std::uint32_t>(request.num_envs) <= protocol::kMaxEnvs,
      "RemoteClient::connect: num_envs must be 1 to ", protocol::kMaxEnvs, ", got ",
      request.num_envs);
  request.action_spec.validate("RemoteClient::connect");
  SEEDRL_REQUIRE(request.action_spec.dims() <= static_cast<std::int32_t>(protocol::kMaxActionDims),
                 "RemoteClient::connect: ", request.action_spec.to_string(),
                 "; the protocol carries box actions of at most ", protocol::kMaxActionDims,
                 " dimensions");
  const Clock::time_point deadline = Clock::now() + c.options.connect_timeout;
  if (Status s = c.open_socket(deadline); !s.is_ok()) return s;

  protocol::Hello hello;
  hello.token = c.options.token;
  hello.run_id = request.run_id;
  hello.num_envs = static_cast<std::uint32_t>(request.num_envs);
  hello.evaluation = request.evaluation;
  hello.observation = request.observation_spec;
  hello.action_spec = request.action_spec;
  c.send_buffer.clear();
  protocol::encode_hello(c.send_buffer, hello, c.sequence);
  iovec part{c.send_buffer.data(), c.send_buffer.size()};
  if (Status s = c.send_all(&part, 1, deadline); !s.is_ok()) return c.lost(s);

  protocol::FrameHeader header;
  std::size_t at = 0;
  if (Status s = c.receive_frame(protocol::kHeaderBytes, protocol::kMinMaxFrameBytes, deadline,
                                 &header, &at);
      !s.is_ok()) {
    return s;
  }
  if (header.type == FrameType::error) return c.refused(c.payload(at, header));
  if (header.type != FrameType::welcome) {
    return c.lost(Status::unavailable(
        str_cat("the server answered HELLO with frame type ", static_cast<int>(header.type))));
  }
  protocol::Welcome welcome;
  if (protocol::Verdict v = protocol::decode_welcome(c.payload(at, header), &welcome); !v.is_ok()) {
    return c.lost(Status::unavailable(str_cat("bad WELCOME: ", v.error().message)));
  }
  if (!(welcome.observation == request.observation_spec) ||
      !(welcome.action_spec == request.action_spec)) {
    return c.lost(Status::invalid_argument(
        str_cat("the server expects observations ", welcome.observation.to_string(),
                " and actions ", welcome.action_spec.to_string(), "; this actor has ",
                request.observation_spec.to_string(), " and ", request.action_spec.to_string())));
  }
  c.num_envs = hello.num_envs;
  c.action_spec = std::move(welcome.action_spec);
  c.observation_bytes = request.observation_spec.bytes();
  c.first_slot = static_cast<std::int32_t>(welcome.first_slot);
  return Status::ok();
}

Status RemoteClient::step(const Tensor& observations, std::span<const float> rewards,
                          std::span<const std::uint8_t> flags, std::span<std::int32_t> actions) {
  Impl& c = *impl_;
  if (!connected()) return Status::unavailable("RemoteClient: not connected");
  if (c.action_spec.is_box()) {
    return Status::invalid_argument(
        str_cat("RemoteClient::step: this connection carries ", c.action_spec.to_string(),
                "; step it with the overload that takes std::span<float> actions, not the "
                "discrete one (std::span<std::int32_t>)"));
  }
  std::span<const std::uint8_t> answer;
  if (Status s = exchange(observations, rewards, flags, actions.size(), &answer); !s.is_ok())
    return s;
  if (protocol::Verdict v = protocol::decode_actions(
          answer, static_cast<std::uint32_t>(c.action_spec.num_actions), actions);
      !v.is_ok()) {
    return c.lost(Status::unavailable(str_cat("bad ACTIONS frame: ", v.error().message)));
  }
  return Status::ok();
}

Status RemoteClient::step(const Tensor& observations, std::span<const float> rewards,
                          std::span<const std::uint8_t> flags, std::span<float> actions) {
  Impl& c = *impl_;
  if (!connected()) return Status::unavailable("RemoteClient: not connected");
  if (!c.action_spec.is_box()) {
    return Status::invalid_argument(
        str_cat("RemoteClient::step: this connection carries ", c.action_spec.to_string(),
                "; step it with the overload that takes std::span<std::int32_t> actions, not the "
                "box one (std::span<float>)"));
  }
  const std::size_t dims = c.action_spec.low.size();
  if (actions.size() % dims != 0) {
    return Status::invalid_argument(
        str_cat("RemoteClient::step: ", actions.size(), " action values are not rows of ", dims));
  }
  std::span<const std::uint8_t> answer;
  if (Status s = exchange(observations, rewards, flags, actions.size() / dims, &answer);
      !s.is_ok()) {
    return s;
  }
  if (protocol::Verdict v = protocol::decode_box_actions(answer, c.action_spec, actions);
      !v.is_ok()) {
    return c.lost(Status::unavailable(str_cat("bad ACTIONS frame: ", v.error().message)));
  }
  return Status::ok();
}

// Both step()s: checks the sizes, sends the STEP and receives its ACTIONS, whose payload
// `answer` then views (valid until the next exchange).
Status RemoteClient::exchange(const Tensor& observations, std::span<const float> rewards,
                              std::span<const std::uint8_t> flags, std::size_t action_rows,
                              std::span<const std::uint8_t>* answer) {
  Impl& c = *impl_;
  const std::size_t n = c.num_envs;
  if (rewards.size() != n || flags.size() != n || action_rows != n ||
      observations.bytes() != n * c.observation_bytes) {
    return Status::invalid_argument(str_cat(
        "RemoteClient::step: ", rewards.size(), " rewards, ", flags.size(), " flags, ", action_rows,
        " actions and ", observations.bytes(), " observation bytes for ", n, " environments of ",
        c.observation_bytes, " bytes",
        c.action_spec.is_box() ? str_cat(" (actions: ", c.action_spec.dims(), " values each)")
                               : ""));
  }
  const Clock::time_point deadline = Clock::now() + c.options.step_timeout;
  const std::uint32_t sequence = ++c.sequence;
  c.send_buffer.clear();
  protocol::encode_step_prefix(c.send_buffer, sequence, rewards, flags, observations.bytes());
  iovec parts[2] = {{c.send_buffer.data(), c.send_buffer.size()},
                    {observations.raw_data(), observations.bytes()}};
  if (Status s = c.send_all(parts, 2, deadline); !s.is_ok()) return c.lost(s);

  const std::size_t answer_bytes = protocol::actions_frame_bytes(c.num_envs, c.action_spec);
  const auto limit =
      static_cast<std::uint32_t>(std::max(answer_bytes, protocol::max_error_frame_bytes()));
  protocol::FrameHeader header;
  std::size_t at = 0;
  if (Status s = c.receive_frame(answer_bytes, limit, deadline, &header, &at); !s.is_ok()) return s;
  if (header.type == FrameType::error) return c.refused(c.payload(at, header));
  if (header.type != FrameType::actions || header.sequence != sequence) {
    return c.lost(Status::unavailable(str_cat("the server answered STEP ", sequence,
                                              " with frame type ", static_cast<int>(header.type),
                                              ", sequence ", header.sequence)));
  }
  *answer = c.payload(at, header);
  return Status::ok();
}

void RemoteClient::disconnect() {
  Impl& c = *impl_;
  if (!connected()) return;
  std::string goodbye;
  protocol::encode_goodbye(goodbye, ++c.sequence);
  (void)::send(c.owned_fd(), goodbye.data(), goodbye.size(),
               MSG_NOSIGNAL | MSG_DONTWAIT);  // best effort
  c.close();
}

void RemoteClient::interrupt() {
  if (!impl_) return;
  Impl& c = *impl_;
  {
    MutexLock lock(c.fd_mutex);
    c.interrupted = true;
    if (c.fd >= 0) ::shutdown(c.fd, SHUT_RDWR);  // wakes a poll or recv in progress
  }
  c.io.stop();  // wakes a connect in progress
}

bool RemoteClient::connected() const {
  return impl_ && impl_->owned_fd() >= 0;
}

std::int32_t RemoteClient::first_slot() const {
  return impl_ ? impl_->first_slot : -1;
}

}  // namespace seedrl
