// SocketServer: Asio sessions that turn protocol frames into InferenceEndpoint calls.
//
// Each connection is a Session on a strand of its own. Its life:
//
//   handshake ──HELLO ok──▶ ready ⇄ (STEP: in flight until the endpoint answers) ──▶ closing ─▶
//   closed
//        └────────────── any bad frame, idle timeout, shutdown ──────────────────────▶ closing
//
// closing: the ERROR frame (if any) is written, the write side shut down, and input drained
// briefly so the peer reads the ERROR before the connection goes (closing a socket with unread
// input would reset it and could destroy the ERROR in flight).
//
// A session with a step in flight is kept alive by the request's completion (in_flight_self_),
// which may arrive after the I/O threads have stopped: then it frees the slots on the endpoint's
// thread instead of posting (Shared::post refuses once io_done is set).
#include "seedrl/transport/socket_server.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "asio.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/core/tensor.hpp"

namespace seedrl {

namespace asio = boost::asio;
using boost::system::error_code;
using protocol::ErrorCode;
using protocol::ErrorFrame;
using protocol::FrameType;

namespace {

// Before the handshake a peer is unauthenticated: its frames may not exceed this.
constexpr std::uint32_t kHandshakeFrameBytes = protocol::kMinMaxFrameBytes;
// How long a closing session drains its peer's input before it closes regardless.
constexpr std::chrono::milliseconds kDrainTime{1000};

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double seconds(std::chrono::milliseconds ms) {
  return static_cast<double>(ms.count()) / 1000.0;
}

}  // namespace

void SocketServerOptions::validate() const {
  (void)SocketAddress::parse(listen);
  SEEDRL_REQUIRE(token.size() <= protocol::kMaxTokenBytes, "SocketServerOptions: token has ",
                 token.size(), " bytes; at most ", protocol::kMaxTokenBytes, " are allowed");
  SEEDRL_REQUIRE(max_frame_bytes >= protocol::kMinMaxFrameBytes,
                 "SocketServerOptions: max_frame_bytes ", max_frame_bytes,
                 " is below the minimum of ", protocol::kMinMaxFrameBytes);
  SEEDRL_REQUIRE(max_connections > 0, "SocketServerOptions: max_connections must be positive, got ",
                 max_connections);
  SEEDRL_REQUIRE(idle_timeout.count() > 0, "SocketServerOptions: idle_timeout must be positive");
  SEEDRL_REQUIRE(handshake_timeout.count() > 0,
                 "SocketServerOptions: handshake_timeout must be positive");
  SEEDRL_REQUIRE(shutdown_grace.count() >= 0, "SocketServerOptions: shutdown_grace must be >= 0");
  SEEDRL_REQUIRE(io_threads >= 1 && io_threads <= 256,
                 "SocketServerOptions: io_threads must be 1 to 256, got ", io_threads);
}

// What every session shares with the server. Owned jointly by the server and its sessions, so
// a session whose step is still in flight after stop() can finish on its own.
struct SocketServer::Shared : std::enable_shared_from_this<SocketServer::Shared> {
  class SessionBase;
  using Strand = asio::strand<asio::io_context::executor_type>;

  Shared(InferenceEndpoint& endpoint_, SocketServerOptions options_)
      : endpoint(endpoint_), options(std::move(options_)), sweep_timer(io) {}

  InferenceEndpoint& endpoint;
  const SocketServerOptions options;
  SocketAddress address;
  asio::io_context io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::optional<asio::ip::tcp::acceptor> tcp_acceptor;
  std::optional<asio::local::stream_protocol::acceptor> unix_acceptor;
  asio::steady_timer sweep_timer;
  std::vector<std::thread> threads;
  bool started = false;

  std::mutex post_mutex;
  bool io_done = false;  // the I/O threads are gone: handlers are no longer posted

  std::atomic<bool> stopping{false};
  std::atomic<ErrorCode> stop_reason{ErrorCode::shutting_down};

  mutable std::mutex sessions_mutex;
  std::condition_variable sessions_changed;
  std::unordered_map<std::uint64_t, std::weak_ptr<SessionBase>> sessions;
  std::uint64_t next_session = 0;

  std::atomic<std::int64_t> accepted{0}, handshakes{0}, refused{0}, steps{0}, bytes_received{0},
      bytes_sent{0};

  void log(const std::string& line) const {
    if (options.log) options.log(line);
  }

  /// Queues `handler` on `strand`; false once the I/O threads are gone.
  template <class Handler>
  bool post(const Strand& strand, Handler&& handler) {
    std::lock_guard lock(post_mutex);
    if (io_done) return false;
    asio::post(strand, std::forward<Handler>(handler));
    return true;
  }

  ErrorCode code_for(const Status& status) const {
    switch (status.code()) {
      case Status::Code::invalid_argument:
        return ErrorCode::invalid_request;
      case Status::Code::unavailable:
      case Status::Code::deadline_exceeded:
        return ErrorCode::unavailable;
      case Status::Code::closed:
        return stopping ? stop_reason.load() : ErrorCode::shutting_down;
      case Status::Code::ok:
      case Status::Code::internal:
        break;
    }
    return ErrorCode::internal;
  }

  void forget(std::uint64_t id) {
    {
      std::lock_guard lock(sessions_mutex);
      sessions.erase(id);
    }
    sessions_changed.notify_all();
  }

  std::vector<std::shared_ptr<SessionBase>> live_sessions() {
    std::vector<std::shared_ptr<SessionBase>> out;
    std::lock_guard lock(sessions_mutex);
    for (auto& [id, weak] : sessions)
      if (auto s = weak.lock()) out.push_back(std::move(s));
    return out;
  }

  template <class Protocol>
  void accept(typename Protocol::acceptor& acceptor);
  void arm_sweep();
};

// The strand-bound operations stop() and the sweep timer use, whatever the socket type.
class SocketServer::Shared::SessionBase {
 public:
  SessionBase(std::shared_ptr<Shared> shared, Strand strand)
      : shared_(std::move(shared)), strand_(std::move(strand)) {}
  virtual ~SessionBase() = default;
  const Strand& strand() const { return strand_; }
  virtual void shutdown(ErrorCode reason) = 0;  ///< tell the peer why and close
  virtual void sweep(std::int64_t now) = 0;     ///< close if idle or draining too long
  virtual void force_close() = 0;               ///< close now, whatever the state

 protected:
  // Declared first, so destroyed last: the strand and the socket belong to shared_->io.
  std::shared_ptr<Shared> shared_;
  Strand strand_;
};

namespace {

using Shared = SocketServer::Shared;

template <class Protocol>
class Session final : public Shared::SessionBase,
                      public std::enable_shared_from_this<Session<Protocol>> {
 public:
  using Socket = typename Protocol::socket;

  Session(std::shared_ptr<Shared> shared, Shared::Strand strand, Socket socket, std::uint64_t id,
          std::string peer)
      : SessionBase(std::move(shared), std::move(strand)),
        socket_(std::move(socket)),
        id_(id),
        peer_(std::move(peer)) {}

  void start(bool over_limit) {
    if (over_limit) {
      fail(
          {ErrorCode::unavailable, str_cat("connection limit of ", shared_->options.max_connections,
                                           " reached; retry later")});
      return;
    }
    read_header();
  }

  void shutdown(ErrorCode reason) override {
    if (state_ == State::closing || state_ == State::closed) return;
    if (in_flight_) {  // answered once the step comes back
      shutdown_reason_ = reason;
      return;
    }
    fail({reason, reason == ErrorCode::finished ? "training is over"
                                                : "the learner is shutting down; retry later"});
  }

  void sweep(std::int64_t now) override {
    if (state_ == State::closed) return;
    if (state_ == State::closing) {
      if (now - closing_since_ > std::chrono::nanoseconds(kDrainTime).count()) close_now();
      return;
    }
    if (!reading_ || in_flight_) return;
    const bool handshake = state_ == State::handshake;
    const std::chrono::milliseconds limit =
        handshake ? shared_->options.handshake_timeout : shared_->options.idle_timeout;
    if (now - last_activity_ > std::chrono::nanoseconds(limit).count()) {
      fail({ErrorCode::idle_timeout,
            handshake ? str_cat("no HELLO within ", seconds(limit), " s of connecting")
                      : str_cat("no frame for ", seconds(limit), " s")});
    }
  }

  void force_close() override { close_now(); }

 private:
  enum class State { handshake, ready, closing, closed };

  std::shared_ptr<Session> self() { return this->shared_from_this(); }

  // ---- Reading ----

  void read_header() {
    start_read();
    asio::async_read(
        socket_, asio::buffer(header_),
        [self = self()](const error_code& ec, std::size_t n) { self->on_header(ec, n); });
  }

  void start_read() {
    reading_ = true;
    last_activity_ = now_ns();
  }

  // Returns true when the read completion is to be handled as a frame.
  bool finish_read(const error_code& ec) {
    reading_ = false;
    if (state_ == State::closed) return false;
    if (state_ == State::closing) {
      ec ? close_now() : drain();
      return false;
    }
    return true;
  }

  void on_header(const error_code& ec, std::size_t n) {
    if (!finish_read(ec)) return;
    shared_->bytes_received += static_cast<std::int64_t>(n);
    if (ec) {
      lost(ec, n, protocol::kHeaderBytes);  // n < 12
      return;
    }
    const bool handshake = state_ == State::handshake;
    // After the handshake a frame is a STEP of known size (or small); a little slack lets a STEP of
    // the wrong size reach decode_step, whose message says what was wrong with it.
    const std::uint32_t limit =
        handshake ? kHandshakeFrameBytes : std::max(step_frame_bytes_, kHandshakeFrameBytes);
    if (protocol::Verdict v = protocol::decode_header(header_, limit, &frame_); !v.is_ok()) {
      ErrorFrame error = v.error();
      if (error.code == ErrorCode::frame_too_large) {
        error.message += handshake ? " (before the handshake)"
                                   : str_cat(" (a STEP of this actor's observations is ",
                                             step_frame_bytes_, " bytes)");
      }
      fail(error);
      return;
    }
    switch (frame_.type) {
      case FrameType::hello:
        if (!handshake)
          return fail({ErrorCode::invalid_request, "a second HELLO on a connected session"});
        break;
      case FrameType::step:
        if (handshake)
          return fail({ErrorCode::invalid_request, "STEP before the handshake (send HELLO first)"});
        break;
      case FrameType::goodbye:
        if (frame_.payload_bytes() != 0)
          return fail({ErrorCode::malformed, "GOODBYE with a payload"});
        break;
      default:
        return fail({ErrorCode::malformed, str_cat("frame type ", static_cast<int>(frame_.type),
                                                   " is sent by servers, not actors")});
    }
    const std::size_t payload = frame_.payload_bytes();
    if (payload == 0) return on_payload({}, 0);
    if (buffer_.bytes() < payload)
      buffer_ = Tensor::empty({static_cast<std::int64_t>(payload)}, DType::u8);
    start_read();
    asio::async_read(
        socket_, asio::buffer(buffer_.raw_data(), payload),
        [self = self()](const error_code& e, std::size_t got) { self->on_payload(e, got); });
  }

  void on_payload(const error_code& ec, std::size_t n) {
    if (!finish_read(ec)) return;
    shared_->bytes_received += static_cast<std::int64_t>(n);
    if (ec) {
      lost(ec, protocol::kHeaderBytes + n, frame_.frame_bytes());
      return;
    }
    const std::span<const std::uint8_t> payload(
        static_cast<const std::uint8_t*>(buffer_.raw_data()), frame_.payload_bytes());
    try {
      switch (frame_.type) {
        case FrameType::hello:
          return on_hello(payload);
        case FrameType::step:
          return on_step(payload);
        case FrameType::goodbye:
          shared_->log(str_cat(peer_, ": said goodbye"));
          return close_now();
        default:
          return fail({ErrorCode::internal, "unexpected frame type"});
      }
    } catch (const std::exception& e) {  // a broken invariant here must not take the server down
      fail({ErrorCode::internal, e.what()});
    }
  }

  // The peer closed or the connection broke after `got` of a frame's `wanted` bytes. Mid-frame, a
  // peer that only shut down its sending side can still read why its frame was refused.
  void lost(const error_code& ec, std::size_t got, std::size_t wanted) {
    if (ec == asio::error::eof && got > 0 && got < wanted) {
      fail({ErrorCode::malformed, str_cat("truncated frame: the connection closed after ", got,
                                          " of ", wanted, " bytes")});
      return;
    }
    if (ec != asio::error::operation_aborted) {
      shared_->log(str_cat(peer_, ": connection lost",
                           ec == asio::error::eof ? " (closed without GOODBYE)" : "",
                           ec == asio::error::eof ? "" : str_cat(": ", ec.message())));
    }
    close_now();
  }

  // ---- Handshake ----

  void on_hello(std::span<const std::uint8_t> payload) {
    protocol::Hello hello;
    if (protocol::Verdict v = protocol::decode_hello(payload, &hello); !v.is_ok())
      return fail(v.error());
    if (!protocol::tokens_equal(hello.token, shared_->options.token)) {
      return fail({ErrorCode::unauthorized, "wrong token"});
    }
    if (shared_->stopping)
      return fail({shared_->stop_reason.load(), "the learner is shutting down; retry later"});

    const std::uint32_t n = hello.num_envs;
    const std::size_t observation_bytes = hello.observation.bytes();
    const protocol::StepLayout step = protocol::step_layout(n, observation_bytes);
    if (step.frame_bytes > shared_->options.max_frame_bytes) {
      return fail({ErrorCode::invalid_request,
                   str_cat("a STEP of ", n, " observations of ", observation_bytes, " bytes needs ",
                           step.frame_bytes, "-byte frames; this server accepts at most ",
                           shared_->options.max_frame_bytes, " (max_frame_bytes)")});
    }
    ConnectRequest request;
    request.run_id = hello.run_id;
    request.num_envs = static_cast<std::int32_t>(n);
    request.evaluation = hello.evaluation;
    request.observation_spec = hello.observation;
    request.action_spec = ActionSpec{static_cast<std::int32_t>(hello.num_actions)};
    if (Status s = shared_->endpoint.connect(request, &connection_); !s.is_ok()) {
      connection_ = {};
      return fail({shared_->code_for(s), s.message()});
    }
    state_ = State::ready;
    ++shared_->handshakes;
    num_envs_ = n;
    observation_bytes_ = observation_bytes;
    step_frame_bytes_ = static_cast<std::uint32_t>(step.frame_bytes);

    // The step request lives as long as the session; its views point into buffer_, where every
    // STEP payload lands, so observations are copied only once more: into the inference batch.
    buffer_ = Tensor::empty({static_cast<std::int64_t>(step.payload_bytes)}, DType::u8);
    auto* bytes = static_cast<std::uint8_t*>(buffer_.raw_data());
    rewards_.assign(n, 0.0f);
    actions_.assign(n, 0);
    request_.connection = connection_;
    request_.observations = Tensor::from_blob(bytes + step.observations_offset,
                                              hello.observation.shape.prepend({std::int64_t{n}}),
                                              hello.observation.dtype);
    request_.rewards = rewards_;
    request_.flags = std::span<const std::uint8_t>(bytes + step.flags_offset, n);
    request_.actions = actions_;
    request_.on_complete = [this](const Status& status) { on_step_complete(status); };

    shared_->log(str_cat(peer_, ": connected, run ", hello.run_id, ", ", n, " environment",
                         n == 1 ? "" : "s", hello.evaluation ? " (evaluation)" : "", ", slots [",
                         connection_.first_slot, ", ",
                         connection_.first_slot + connection_.num_envs, ")"));
    protocol::Welcome welcome;
    welcome.observation = shared_->endpoint.observation_spec();
    welcome.num_actions = static_cast<std::uint32_t>(shared_->endpoint.action_spec().num_actions);
    welcome.first_slot = static_cast<std::uint32_t>(connection_.first_slot);
    welcome.max_frame_bytes = shared_->options.max_frame_bytes;
    protocol::encode_welcome(next_write_, welcome, frame_.sequence);
    flush();
    read_header();
  }

  // ---- Steps ----

  void on_step(std::span<const std::uint8_t> payload) {
    protocol::StepView view;
    if (protocol::Verdict v = protocol::decode_step(payload, num_envs_, observation_bytes_, &view);
        !v.is_ok()) {
      return fail(v.error());
    }
    for (std::uint32_t i = 0; i < num_envs_; ++i) rewards_[i] = view.reward(i);
    step_sequence_ = frame_.sequence;
    in_flight_ = true;
    in_flight_self_ = self();
    shared_->endpoint.submit(request_);
  }

  // Any thread: the endpoint's answer.
  void on_step_complete(const Status& status) {
    std::shared_ptr<Session> keep = std::move(in_flight_self_);
    if (!shared_->post(strand_, [keep, status] { keep->on_step_done(status); }))
      keep->on_step_done(status);
  }

  // On the strand, or on the endpoint's thread once the I/O threads are gone (then the socket
  // is already closed and only the slots remain to be freed).
  void on_step_done(const Status& status) {
    in_flight_ = false;
    if (state_ == State::closed) return release_slots();
    if (shutdown_reason_) return shutdown(*shutdown_reason_);
    if (!status.is_ok()) return fail({shared_->code_for(status), status.message()});
    ++shared_->steps;
    protocol::encode_actions(next_write_, step_sequence_, actions_);
    flush();
    read_header();
  }

  // ---- Writing: one write in flight; frames queued behind it ----

  void flush() {
    if (writing_ || next_write_.empty()) return;
    std::swap(writing_buffer_, next_write_);
    next_write_.clear();
    writing_ = true;
    asio::async_write(
        socket_, asio::buffer(writing_buffer_),
        [self = self()](const error_code& ec, std::size_t n) { self->on_written(ec, n); });
  }

  void on_written(const error_code& ec, std::size_t n) {
    writing_ = false;
    shared_->bytes_sent += static_cast<std::int64_t>(n);
    if (state_ == State::closed) return;
    if (ec) {
      if (state_ != State::closing)
        shared_->log(str_cat(peer_, ": connection lost while sending: ", ec.message()));
      return close_now();
    }
    flush();
    if (!writing_ && state_ == State::closing) finish_sending();
  }

  // ---- Closing ----

  void fail(const ErrorFrame& error) {
    if (state_ == State::closing || state_ == State::closed) return;
    const bool shutdown = error.code == protocol::ErrorCode::finished ||
                          error.code == protocol::ErrorCode::shutting_down;
    if (!shutdown) ++shared_->refused;
    shared_->log(str_cat(peer_, shutdown ? ": closed (" : ": refused (", protocol::name(error.code),
                         "): ", error.message));
    protocol::encode_error(next_write_, error, frame_.sequence);
    state_ = State::closing;
    closing_since_ = now_ns();
    release_slots();
    flush();
    if (!writing_) finish_sending();
  }

  void finish_sending() {
    error_code ignored;
    socket_.shutdown(Socket::shutdown_send, ignored);
    if (!reading_) drain();
  }

  void drain() {
    reading_ = true;
    socket_.async_read_some(asio::buffer(drain_buffer_),
                            [self = self()](const error_code& ec, std::size_t n) {
                              self->shared_->bytes_received += static_cast<std::int64_t>(n);
                              self->finish_read(ec);
                            });
  }

  void close_now() {
    if (state_ == State::closed) return;
    state_ = State::closed;
    error_code ignored;
    socket_.close(ignored);
    release_slots();
    shared_->forget(id_);
  }

  // The endpoint forbids disconnecting while a step is in flight: then on_step_done does it.
  void release_slots() {
    if (in_flight_ || !connection_.connected()) return;
    shared_->endpoint.disconnect(connection_);
    connection_ = {};
  }

  Socket socket_;
  const std::uint64_t id_;
  const std::string peer_;

  State state_ = State::handshake;
  bool reading_ = false;
  bool writing_ = false;
  bool in_flight_ = false;
  std::optional<ErrorCode> shutdown_reason_;
  std::int64_t last_activity_ = now_ns();
  std::int64_t closing_since_ = 0;

  std::array<std::uint8_t, protocol::kHeaderBytes> header_{};
  protocol::FrameHeader frame_;
  Tensor buffer_;  // payloads; 64-byte aligned, so STEP observations are 8-byte aligned
  std::array<std::uint8_t, 4096> drain_buffer_{};
  std::string writing_buffer_, next_write_;

  Connection connection_;
  std::uint32_t num_envs_ = 0;
  std::size_t observation_bytes_ = 0;
  std::uint32_t step_frame_bytes_ = protocol::kHeaderBytes;
  std::uint32_t step_sequence_ = 0;
  std::vector<float> rewards_;
  std::vector<std::int32_t> actions_;
  StepRequest request_;
  std::shared_ptr<Session> in_flight_self_;
};

std::string peer_name(const asio::ip::tcp::socket& socket, std::uint64_t id) {
  error_code ec;
  const auto remote = socket.remote_endpoint(ec);
  if (ec) return str_cat("connection ", id);
  return str_cat(remote.address().to_string(), ":", remote.port());
}
std::string peer_name(const asio::local::stream_protocol::socket&, std::uint64_t id) {
  return str_cat("unix connection ", id);
}

}  // namespace

template <class Protocol>
void SocketServer::Shared::accept(typename Protocol::acceptor& acceptor) {
  auto strand = asio::make_strand(io);
  acceptor.async_accept(
      strand, [this, &acceptor, strand](const error_code& ec, typename Protocol::socket socket) {
        if (ec == asio::error::operation_aborted || stopping) return;
        if (ec) {  // e.g. out of file descriptors: say so, keep accepting
          log(str_cat("accept failed: ", ec.message()));
          accept<Protocol>(acceptor);
          return;
        }
        if constexpr (std::is_same_v<Protocol, asio::ip::tcp>) {
          error_code ignored;
          socket.set_option(asio::ip::tcp::no_delay(true), ignored);
        }
        bool over_limit = false;
        std::uint64_t id = 0;
        {
          std::lock_guard lock(sessions_mutex);
          over_limit = sessions.size() >= static_cast<std::size_t>(options.max_connections);
          id = ++next_session;
        }
        ++accepted;
        std::string peer = peer_name(socket, id);
        auto session = std::make_shared<Session<Protocol>>(shared_from_this(), strand,
                                                           std::move(socket), id, std::move(peer));
        {
          std::lock_guard lock(sessions_mutex);
          sessions.emplace(id, session);
        }
        asio::post(strand, [session, over_limit] { session->start(over_limit); });
        accept<Protocol>(acceptor);
      });
}

// ---- SocketServer ----

void SocketServer::Shared::arm_sweep() {
  const auto period = std::clamp(std::min(options.idle_timeout, options.handshake_timeout) / 4,
                                 std::chrono::milliseconds(10), std::chrono::milliseconds(250));
  sweep_timer.expires_after(period);
  sweep_timer.async_wait([this](const error_code& ec) {
    if (ec) return;  // cancelled by stop()
    const std::int64_t now = now_ns();
    for (auto& session : live_sessions())
      asio::post(session->strand(), [session, now] { session->sweep(now); });
    arm_sweep();
  });
}

SocketServer::SocketServer(InferenceEndpoint& endpoint, SocketServerOptions options) {
  options.validate();
  shared_ = std::make_shared<Shared>(endpoint, std::move(options));
  shared_->address = SocketAddress::parse(shared_->options.listen);
}

SocketServer::~SocketServer() {
  stop();
}

namespace {

// A socket file at `path`: a stale one from a crashed server is removed; one a running server
// answers on, or any other kind of file, is an error.
void clear_unix_path(asio::io_context& io, const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return;
  SEEDRL_REQUIRE(S_ISSOCK(info.st_mode), "SocketServer: cannot listen on unix:", path,
                 ": the path exists and is not a socket");
  asio::local::stream_protocol::socket probe(io);
  error_code ec;
  probe.connect(asio::local::stream_protocol::endpoint(path), ec);
  SEEDRL_REQUIRE(ec, "SocketServer: cannot listen on unix:", path,
                 ": a running server is using it");
  SEEDRL_REQUIRE(::unlink(path.c_str()) == 0 || errno == ENOENT,
                 "SocketServer: cannot listen on unix:", path,
                 ": cannot remove the stale socket file: ", std::strerror(errno));
}

}  // namespace

void SocketServer::start() {
  Shared& s = *shared_;
  SEEDRL_REQUIRE(!s.started, "SocketServer::start: already started");
  const std::string where = s.address.to_string();
  error_code ec;
  auto check = [&](const char* step) {
    SEEDRL_REQUIRE(!ec, "SocketServer: cannot listen on ", where, ": ", step, ": ", ec.message());
  };
  if (s.address.is_unix()) {
    clear_unix_path(s.io, s.address.path);
    const asio::local::stream_protocol::endpoint endpoint(s.address.path);
    auto& acceptor = s.unix_acceptor.emplace(s.io);
    acceptor.open(endpoint.protocol(), ec);
    check("open");
    acceptor.bind(endpoint, ec);
    check("bind");
    acceptor.listen(asio::socket_base::max_listen_connections, ec);
    check("listen");
    s.accept<asio::local::stream_protocol>(acceptor);
  } else {
    asio::ip::tcp::resolver resolver(s.io);
    const auto results = resolver.resolve(
        s.address.host, std::to_string(s.address.port),
        asio::ip::tcp::resolver::passive | asio::ip::tcp::resolver::numeric_service, ec);
    check("resolve");
    SEEDRL_REQUIRE(!results.empty(), "SocketServer: cannot listen on ", where,
                   ": the host resolves to no address");
    const asio::ip::tcp::endpoint endpoint = results.begin()->endpoint();
    auto& acceptor = s.tcp_acceptor.emplace(s.io);
    acceptor.open(endpoint.protocol(), ec);
    check("open");
    // A restarted learner rebinds its port at once, despite connections of its previous run in
    // TIME_WAIT.
    acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    check("SO_REUSEADDR");
    acceptor.bind(endpoint, ec);
    check("bind");
    acceptor.listen(asio::socket_base::max_listen_connections, ec);
    check("listen");
    s.address.port = acceptor.local_endpoint().port();
    s.accept<asio::ip::tcp>(acceptor);
  }
  s.work.emplace(s.io.get_executor());
  s.arm_sweep();
  s.started = true;
  for (int i = 0; i < s.options.io_threads; ++i) {
    s.threads.emplace_back([&s] { s.io.run(); });
  }
  s.log(str_cat("listening on ", s.address.to_string()));
}

void SocketServer::stop(ErrorCode reason) {
  Shared& s = *shared_;
  if (s.stopping.exchange(true)) {
    // Already stopped (or stopping on another thread, which finishes the job).
    return;
  }
  s.stop_reason = reason;
  if (!s.started) return;

  // 1. No new connections; every session hears why (or will, when its step comes back).
  asio::post(s.io, [&s] {
    error_code ignored;
    if (s.tcp_acceptor) s.tcp_acceptor->close(ignored);
    if (s.unix_acceptor) s.unix_acceptor->close(ignored);
  });
  for (auto& session : s.live_sessions()) {
    asio::post(session->strand(), [session, reason] { session->shutdown(reason); });
  }
  // 2. Give them shutdown_grace to finish.
  {
    std::unique_lock lock(s.sessions_mutex);
    s.sessions_changed.wait_for(lock, s.options.shutdown_grace, [&] { return s.sessions.empty(); });
  }
  // 3. Close the rest; the I/O threads return once nothing is left to do.
  for (auto& session : s.live_sessions()) {
    asio::post(session->strand(), [session] { session->force_close(); });
  }
  asio::post(s.io, [&s] { s.sweep_timer.cancel(); });
  s.work.reset();
  for (std::thread& t : s.threads) t.join();
  s.threads.clear();
  {
    std::lock_guard lock(s.post_mutex);
    s.io_done = true;
  }
  // Completions posted between the threads' return and io_done run here (they only free slots).
  s.io.restart();
  s.io.poll();
  if (s.address.is_unix()) ::unlink(s.address.path.c_str());
  s.log(str_cat("stopped listening on ", s.address.to_string(), " (", protocol::name(reason), ")"));
}

SocketAddress SocketServer::address() const {
  return shared_->address;
}

SocketServerStats SocketServer::stats() const {
  const Shared& s = *shared_;
  SocketServerStats out;
  out.accepted = s.accepted;
  out.handshakes = s.handshakes;
  out.refused = s.refused;
  out.steps = s.steps;
  out.bytes_received = s.bytes_received;
  out.bytes_sent = s.bytes_sent;
  {
    std::lock_guard lock(s.sessions_mutex);
    out.active = static_cast<std::int64_t>(s.sessions.size());
  }
  return out;
}

}  // namespace seedrl
