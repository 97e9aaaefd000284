// SocketSession: the phases and transitions of socket_session.hpp, one handler at a time on the
// session's strand.
#include "socket_session.hpp"

#include <algorithm>
#include <exception>
#include <utility>

#include "seedrl/core/error.hpp"

namespace seedrl::transport_detail {

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

std::int64_t nanoseconds(std::chrono::milliseconds ms) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(ms).count();
}

double seconds(std::chrono::milliseconds ms) {
  return static_cast<double>(ms.count()) / 1000.0;
}

ErrorFrame shutdown_error(ErrorCode reason) {
  return {reason, reason == ErrorCode::finished ? "training is over"
                                                : "the learner is shutting down; retry later"};
}

}  // namespace

SocketSession::SocketSession(std::shared_ptr<SocketServer::Shared> shared, Strand strand,
                             SessionStream stream, std::uint64_t id, std::string peer)
    : shared_(std::move(shared)),
      strand_(std::move(strand)),
      stream_(std::move(stream)),
      id_(id),
      peer_(std::move(peer)) {}

void SocketSession::start(bool over_limit) {
  if (stream_.tls()) {
    over_limit_ = over_limit;
    return await_tls();
  }
  begin(over_limit);
}

void SocketSession::begin(bool over_limit) {
  if (over_limit) {
    fail({ErrorCode::unavailable, str_cat("connection limit of ", shared_->options.max_connections,
                                          " reached; retry later")});
    return;
  }
  read_header();
}

// ---- TLS ----

void SocketSession::await_tls() {
  phase_ = Phase::tls_handshake;
  deadline_ns_ = now_ns() + nanoseconds(shared_->options.handshake_timeout);
  read_pending_ = true;
  stream_.socket().async_wait(Socket::wait_read,
                              [self = self()](const error_code& ec) { self->on_first_bytes(ec); });
}

// A TLS client starts with a handshake record: content type 22, then version 3.1 to 3.4. A HELLO
// frame cannot start so: its length (4 KiB at most before the handshake) has a third byte of 0.
void SocketSession::on_first_bytes(const error_code& ec) {
  read_pending_ = false;
  if (phase_ != Phase::tls_handshake) return;  // closed meanwhile (timeout, stop)
  std::array<std::uint8_t, 3> first{};
  error_code peek;
  const std::size_t n =
      ec ? 0 : stream_.socket().receive(asio::buffer(first), Socket::message_peek, peek);
  if (ec || peek || n == 0) {
    shared_->refusal_log(str_cat(peer_, ": closed before the TLS handshake"),
                         std::chrono::steady_clock::now());
    return close_now();
  }
  const bool tls =
      first[0] == 22 && (n < 2 || first[1] == 3) && (n < 3 || (first[2] >= 1 && first[2] <= 4));
  if (!tls) {
    stream_.make_plain();
    phase_ = Phase::awaiting_hello;  // the ERROR goes out in plain frames
    return fail({ErrorCode::unauthorized,
                 "this server speaks TLS: give the actor the CA that signed the learner's "
                 "certificate (RemoteClientOptions::tls.ca, --tls-ca)"});
  }
  read_pending_ = true;
  stream_.async_handshake([self = self()](const error_code& e) { self->on_tls_handshake(e); });
}

void SocketSession::on_tls_handshake(const error_code& ec) {
  read_pending_ = false;
  handshake_slot_.release();
  if (phase_ != Phase::tls_handshake) return;  // closed meanwhile (timeout, stop)
  if (ec) {
    ++shared_->refused;
    shared_->refusal_log(
        str_cat(peer_, ": TLS handshake refused: ", tls_failure(ec, stream_.ssl())),
        std::chrono::steady_clock::now());
    return close_now();
  }
  phase_ = Phase::awaiting_hello;
  begin(over_limit_);
}

void SocketSession::shutdown(ErrorCode reason) {
  switch (phase_) {
    case Phase::tls_handshake:
      return close_now();
    case Phase::awaiting_hello:
    case Phase::ready:
      return fail(shutdown_error(reason));
    case Phase::stepping:
    case Phase::shutdown_after_step:  // answered once the step comes back
      shutdown_reason_ = reason;
      phase_ = Phase::shutdown_after_step;
      return;
    case Phase::sending_error:
    case Phase::draining:
    case Phase::closed:
      return;
  }
}

void SocketSession::sweep(std::int64_t now) {
  if (now <= deadline_ns_) return;
  if (closing_phase()) return close_now();
  if (phase_ == Phase::tls_handshake) {
    ++shared_->refused;
    shared_->refusal_log(str_cat(peer_, ": refused: no TLS handshake within ",
                                 seconds(shared_->options.handshake_timeout), " s of connecting"),
                         std::chrono::steady_clock::now());
    return close_now();
  }
  if (!reading_phase()) return;  // stepping: the endpoint decides how long a step takes
  const bool handshake = phase_ == Phase::awaiting_hello;
  const std::chrono::milliseconds limit =
      handshake ? shared_->options.handshake_timeout : shared_->options.idle_timeout;
  fail({ErrorCode::idle_timeout,
        handshake ? str_cat("no HELLO within ", seconds(limit), " s of connecting")
                  : str_cat("no frame for ", seconds(limit), " s")});
}

// ---- Reading ----

void SocketSession::read_header() {
  start_frame_read();
  stream_.async_read(asio::buffer(header_), [self = self()](const error_code& ec, std::size_t n) {
    self->on_header(ec, n);
  });
}

void SocketSession::start_frame_read() {
  read_pending_ = true;
  deadline_ns_ =
      now_ns() + nanoseconds(phase_ == Phase::awaiting_hello ? shared_->options.handshake_timeout
                                                             : shared_->options.idle_timeout);
}

// The read side's completion. True when it is a frame to handle; while closing, input is
// discarded until it ends.
bool SocketSession::finish_read(const error_code& ec) {
  read_pending_ = false;
  if (phase_ == Phase::closed) return false;
  if (closing_phase()) {
    ec ? close_now() : drain();
    return false;
  }
  return true;
}

void SocketSession::on_header(const error_code& ec, std::size_t n) {
  if (!finish_read(ec)) return;
  shared_->bytes_received += static_cast<std::int64_t>(n);
  if (ec) {
    lost(ec, n, protocol::kHeaderBytes);  // n < 12
    return;
  }
  const bool handshake = phase_ == Phase::awaiting_hello;
  // After the handshake a frame is a STEP of known size (or small); a little slack lets a STEP of
  // the wrong size reach decode_step, whose message says what was wrong with it.
  const std::uint32_t limit =
      handshake ? kHandshakeFrameBytes : std::max(step_frame_bytes_, kHandshakeFrameBytes);
  if (protocol::Verdict v = protocol::decode_header(header_, limit, &frame_); !v.is_ok()) {
    ErrorFrame error = v.error();
    if (error.code == ErrorCode::frame_too_large) {
      error.message += handshake ? " (before the handshake)"
                                 : str_cat(" (a STEP of this actor's observations and fields is ",
                                           step_frame_bytes_, " bytes)");
    }
    if (error.code == ErrorCode::unsupported_version) {
      // Written in the peer's version where it is an older one, so that it can read why.
      error_version_ = protocol::error_version_for(frame_.version);
      const bool older = frame_.version >= 1 && frame_.version < protocol::kVersion;
      const bool newer = frame_.version > protocol::kVersion;
      error.message =
          str_cat("protocol version ", int{frame_.version},
                  " is not supported: this server speaks version ", int{protocol::kVersion},
                  older   ? " (legal-action masks as bits); update the actor"
                  : newer ? "; update the learner"
                          : "");
    }
    return fail(error);
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
  start_frame_read();
  stream_.async_read(
      asio::buffer(buffer_.raw_data(), payload),
      [self = self()](const error_code& e, std::size_t got) { self->on_payload(e, got); });
}

void SocketSession::on_payload(const error_code& ec, std::size_t n) {
  if (!finish_read(ec)) return;
  shared_->bytes_received += static_cast<std::int64_t>(n);
  if (ec) {
    lost(ec, protocol::kHeaderBytes + n, frame_.frame_bytes());
    return;
  }
  const std::span<const std::uint8_t> payload(static_cast<const std::uint8_t*>(buffer_.raw_data()),
                                              frame_.payload_bytes());
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
void SocketSession::lost(const error_code& ec, std::size_t got, std::size_t wanted) {
  const bool ended = end_of_stream(ec);
  if (ended && got > 0 && got < wanted) {
    fail({ErrorCode::malformed,
          str_cat("truncated frame: the connection closed after ", got, " of ", wanted, " bytes")});
    return;
  }
  if (ec != asio::error::operation_aborted) {
    shared_->log(str_cat(peer_, ": connection lost", ended ? " (closed without GOODBYE)" : "",
                         ended ? "" : str_cat(": ", ec.message())));
  }
  close_now();
}

// ---- Handshake ----

void SocketSession::on_hello(std::span<const std::uint8_t> payload) {
  protocol::Hello hello;
  if (protocol::Verdict v = protocol::decode_hello(payload, &hello); !v.is_ok())
    return fail(v.error());
  if (!protocol::tokens_equal(hello.token, shared_->options.token)) {
    return fail({ErrorCode::unauthorized, "wrong token"});
  }
  if (shared_->stopping)
    return fail({shared_->stop_reason.load(), "the learner is shutting down; retry later"});

  const StepSpec& spec = shared_->spec;
  if (Status s = check_actor_spec(hello.spec, spec); !s.is_ok())
    return fail({ErrorCode::invalid_request, s.message()});
  const std::uint32_t n = hello.num_envs;
  const protocol::StepLayout step = protocol::step_layout(n, spec);
  if (step.frame_bytes > shared_->options.max_frame_bytes) {
    return fail({ErrorCode::invalid_request,
                 str_cat("a STEP of ", n, " observations of ", spec.observation.bytes(), " bytes",
                         spec.fields.empty() ? "" : " and their declared fields", " needs ",
                         step.frame_bytes, "-byte frames; this server accepts at most ",
                         shared_->options.max_frame_bytes, " (max_frame_bytes)")});
  }
  ConnectRequest request;
  request.run_id = hello.run_id;
  request.num_envs = static_cast<std::int32_t>(n);
  request.evaluation = hello.evaluation;
  request.spec = std::move(hello.spec);
  if (Status s = shared_->endpoint.connect(request, &connection_); !s.is_ok()) {
    connection_ = {};
    return fail({shared_->code_for(s), s.message()});
  }
  phase_ = Phase::ready;
  ++shared_->handshakes;
  step_layout_ = step;
  step_frame_bytes_ = static_cast<std::uint32_t>(step.frame_bytes);

  // The step request lives as long as the session; its views point into buffer_, where every
  // STEP payload lands, so observations and fields are copied only once more: into the inference
  // batch.
  buffer_ = Tensor::empty({static_cast<std::int64_t>(step.payload_bytes)}, DType::u8);
  auto* bytes = static_cast<std::uint8_t*>(buffer_.raw_data());
  rewards_.assign(n, 0.0f);
  box_ = spec.action.is_box();
  actions_.assign(box_ ? 0 : std::size_t{n} * static_cast<std::size_t>(spec.action.dims()), 0);
  box_actions_.assign(box_ ? std::size_t{n} * spec.action.low.size() : 0, 0.0f);
  request_.connection = connection_;
  const auto rows = std::int64_t{n};
  request_.step.observations =
      Tensor::from_blob(bytes + step.observations_offset, spec.observation.shape.prepend({rows}),
                        spec.observation.dtype);
  fields_.clear();
  for (std::size_t k = 0; k < spec.fields.size(); ++k) {
    const Shape shape = spec.fields[k].spec.shape.prepend({rows});
    // A field that travels as bits is unpacked into a tensor of its own (on_step).
    fields_.push_back(step.field_bits[k] > 0 ? Tensor::empty(shape, spec.fields[k].spec.dtype)
                                             : Tensor::from_blob(bytes + step.field_offsets[k],
                                                                 shape, spec.fields[k].spec.dtype));
  }
  request_.step.fields = fields_;
  request_.step.rewards = rewards_;
  request_.step.flags = std::span<const std::uint8_t>(bytes + step.flags_offset, n);
  request_.actions = actions_;
  request_.box_actions = box_actions_;
  request_.on_complete = [this](const Status& status) { on_step_complete(status); };

  shared_->log(str_cat(peer_, ": connected, run ", hello.run_id, ", ", n, " environment",
                       n == 1 ? "" : "s", hello.evaluation ? " (evaluation)" : "", ", slots [",
                       connection_.first_slot, ", ", connection_.first_slot + connection_.num_envs,
                       ")"));
  protocol::Welcome welcome;
  welcome.spec = spec;
  welcome.first_slot = static_cast<std::uint32_t>(connection_.first_slot);
  welcome.max_frame_bytes = shared_->options.max_frame_bytes;
  protocol::encode_welcome(next_write_, welcome, frame_.sequence);
  flush();
  read_header();
}

// ---- Steps ----

void SocketSession::on_step(std::span<const std::uint8_t> payload) {
  protocol::StepView view;
  if (protocol::Verdict v = protocol::decode_step(payload, step_layout_, &view); !v.is_ok()) {
    return fail(v.error());
  }
  for (std::uint32_t i = 0; i < step_layout_.num_envs; ++i) rewards_[i] = view.reward(i);
  for (std::size_t k = 0; k < step_layout_.num_fields; ++k)  // masks sent as bits
    if (const std::uint32_t bits = step_layout_.field_bits[k]; bits > 0)
      protocol::unpack_bits({view.fields[k], step_layout_.num_envs * step_layout_.field_bytes[k]},
                            bits, {fields_[k].data<std::uint8_t>(), fields_[k].bytes()});
  step_sequence_ = frame_.sequence;
  phase_ = Phase::stepping;
  step_state_ = StepRequestState::submitted;
  submitted_self_ = self();
  shared_->endpoint.submit(request_);
}

// Any thread: the endpoint's answer (possibly from inside submit()).
void SocketSession::on_step_complete(const Status& status) {
  std::shared_ptr<SocketSession> keep = std::move(submitted_self_);
  if (!shared_->post(strand_, [keep, status] { keep->on_step_done(status); }))
    keep->on_step_done(status);
}

// On the strand, or on the endpoint's thread once the I/O threads are gone (then the socket
// is already closed and only the slots remain to be freed).
void SocketSession::on_step_done(const Status& status) {
  step_state_ = StepRequestState::idle;
  switch (phase_) {
    case Phase::stepping:
      if (!status.is_ok()) return fail({shared_->code_for(status), status.message()});
      if (box_) {
        // The inference server clips its draws to the bounds; another endpoint might not, and
        // the actor would refuse the frame.
        if (protocol::Verdict v = protocol::check_box_actions(shared_->spec.action, box_actions_);
            !v.is_ok()) {
          return fail({ErrorCode::internal, str_cat("the learner's answer: ", v.error().message)});
        }
        protocol::encode_box_actions(next_write_, step_sequence_, box_actions_,
                                     static_cast<std::uint32_t>(shared_->spec.action.low.size()));
      } else {
        protocol::encode_actions(next_write_, step_sequence_, actions_);
      }
      ++shared_->steps;
      phase_ = Phase::ready;
      flush();
      read_header();
      return;
    case Phase::shutdown_after_step:
      return fail(shutdown_error(shutdown_reason_));
    case Phase::tls_handshake:  // not reached: a step is only submitted from ready
    case Phase::awaiting_hello:
    case Phase::ready:
    case Phase::sending_error:
    case Phase::draining:
    case Phase::closed:
      return release_slots();
  }
}

// ---- Writing: one write in flight; frames queued behind it ----

void SocketSession::flush() {
  if (write_pending_ || next_write_.empty()) return;
  std::swap(writing_buffer_, next_write_);
  next_write_.clear();
  write_pending_ = true;
  stream_.async_write(
      asio::buffer(writing_buffer_),
      [self = self()](const error_code& ec, std::size_t n) { self->on_written(ec, n); });
}

void SocketSession::on_written(const error_code& ec, std::size_t n) {
  write_pending_ = false;
  shared_->bytes_sent += static_cast<std::int64_t>(n);
  if (phase_ == Phase::closed) return;
  if (ec) {
    if (!closing_phase())
      shared_->log(str_cat(peer_, ": connection lost while sending: ", ec.message()));
    return close_now();
  }
  flush();
  if (!write_pending_ && phase_ == Phase::sending_error) finish_sending();
}

// ---- Closing ----

void SocketSession::fail(const ErrorFrame& error) {
  if (closing_phase() || phase_ == Phase::closed) return;
  const bool shutdown = error.code == ErrorCode::finished || error.code == ErrorCode::shutting_down;
  if (!shutdown) ++shared_->refused;
  shared_->log(str_cat(peer_, shutdown ? ": closed (" : ": refused (", protocol::name(error.code),
                       "): ", error.message));
  protocol::encode_error(next_write_, error, frame_.sequence, error_version_);
  phase_ = Phase::sending_error;
  deadline_ns_ = now_ns() + nanoseconds(kDrainTime);
  release_slots();
  flush();  // on_written moves on to draining once the ERROR is out
}

void SocketSession::finish_sending() {
  stream_.shutdown_send();
  phase_ = Phase::draining;
  if (!read_pending_) drain();
}

void SocketSession::drain() {
  read_pending_ = true;
  stream_.async_read_some(asio::buffer(drain_buffer_),
                          [self = self()](const error_code& ec, std::size_t n) {
                            self->shared_->bytes_received += static_cast<std::int64_t>(n);
                            self->finish_read(ec);
                          });
}

void SocketSession::close_now() {
  if (phase_ == Phase::closed) return;
  phase_ = Phase::closed;
  stream_.close();
  handshake_slot_.release();
  release_slots();
  shared_->forget(id_);
}

// The endpoint forbids disconnecting while it has a step: then on_step_done does it.
void SocketSession::release_slots() {
  if (step_state_ == StepRequestState::submitted || !connection_.connected()) return;
  shared_->endpoint.disconnect(connection_);
  connection_ = {};
}

}  // namespace seedrl::transport_detail
