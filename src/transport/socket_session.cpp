// SocketSession: the phases and transitions of socket_session.hpp from the WELCOME on (steps,
// writing, closing) and the deadlines of every phase, one handler at a time on the session's
// strand; the phases before the WELCOME are in socket_session_handshake.cpp.
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
                             SessionStream stream, std::uint64_t id, std::string peer,
                             AdmissionLimiter::Slot admission)
    : shared_(std::move(shared)),
      strand_(std::move(strand)),
      stream_(std::move(stream)),
      id_(id),
      peer_(std::move(peer)),
      admission_(std::move(admission)),
      handshake_deadline_ns_(now_ns() + nanoseconds(shared_->options.handshake_timeout)) {}

void SocketSession::start() {
  if (stream_.tls()) return await_tls();
  read_header();
}

void SocketSession::log_event(const std::string& line) {
  if (welcomed()) {
    shared_->log(line);
  } else {
    shared_->log_refusal(line);
  }
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
    log_event(str_cat(peer_, ": refused: no TLS handshake within ",
                      seconds(shared_->options.handshake_timeout), " s of connecting"));
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

// Before the WELCOME one deadline runs from the accept, however the peer spreads its bytes; after
// it, each frame has idle_timeout to start arriving.
void SocketSession::start_frame_read() {
  read_pending_ = true;
  deadline_ns_ = phase_ == Phase::awaiting_hello
                     ? handshake_deadline_ns_
                     : now_ns() + nanoseconds(shared_->options.idle_timeout);
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
  if (!buffer_.defined() || buffer_.bytes() < payload)
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
  // An empty payload (a GOODBYE, or a HELLO that is too short) may come before any buffer is.
  const std::span<const std::uint8_t> payload =
      frame_.payload_bytes() == 0
          ? std::span<const std::uint8_t>()
          : std::span<const std::uint8_t>(static_cast<const std::uint8_t*>(buffer_.raw_data()),
                                          frame_.payload_bytes());
  try {
    switch (frame_.type) {
      case FrameType::hello:
        return on_hello(payload);
      case FrameType::step:
        return on_step(payload);
      case FrameType::goodbye:
        log_event(str_cat(peer_, ": said goodbye"));
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
    log_event(str_cat(peer_, ": connection lost", ended ? " (closed without GOODBYE)" : "",
                      ended ? "" : str_cat(": ", ec.message())));
  }
  close_now();
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
      // Checked on the way out (a box within its bounds, every action within its count): the
      // inference server keeps to the spec, another endpoint might not, and the actor would
      // refuse the frame.
      if (protocol::Verdict v = protocol::encode_actions(next_write_, step_sequence_,
                                                         shared_->spec.action, actions_.view());
          !v.is_ok()) {
        return fail({ErrorCode::internal, str_cat("the learner's answer: ", v.error().message)});
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
  log_event(str_cat(peer_, shutdown ? ": closed (" : ": refused (", protocol::name(error.code),
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
  admission_.release();
  release_slots();
  if (counted_) --shared_->connected;
  counted_ = false;
  shared_->forget(id_);
}

// The endpoint forbids disconnecting while it has a step: then on_step_done does it.
void SocketSession::release_slots() {
  if (step_state_ == StepRequestState::submitted || !connection_.connected()) return;
  shared_->endpoint.disconnect(connection_);
  connection_ = {};
}

}  // namespace seedrl::transport_detail
