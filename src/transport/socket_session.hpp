// SocketSession: one actor's connection to a SocketServer, turning its frames into
// InferenceEndpoint calls. TCP and Unix-domain connections alike (Asio's generic stream socket),
// and TLS over TCP (SessionStream).
//
// Phases (Phase below; every handler runs on the session's strand and acts by phase):
//
//   tls_handshake    (TLS listeners) the peer's first bytes, then the TLS handshake, are awaited
//   awaiting_hello   a HELLO is being read (frames of at most 4 KiB)
//                    (one deadline, handshake_timeout after the accept, covers both phases)
//   ready            connected, the actor's slots reserved; the next frame is being read
//                    (idle_timeout)
//   stepping         a STEP is with the endpoint; nothing is read until it answers (lock-step)
//   shutdown_after_step   as stepping, but stop() asked to close: the answer becomes an ERROR
//   sending_error    an ERROR is queued behind any frame being written; input is discarded
//   draining         the ERROR is written and the send side shut; input is discarded until the
//                    peer closes, so that closing cannot reset the connection and destroy the
//                    ERROR in flight
//   closed           the socket is closed and the server has forgotten the session
//
// Transitions. "ERROR" is: queue an ERROR frame, free the slots, start the drain clock. Any
// other event leaves the phase as it is.
//
//   tls_handshake:
//     first bytes are not a TLS record (a plain client)  ERROR (unauthorized), plain ->
//     sending_error handshake done                                     read the HELLO        ->
//     awaiting_hello handshake fails, timeout (sweep), stop(), peer gone  log, close          ->
//     closed
//
//   awaiting_hello, ready:
//     timeout (sweep), stop()                     ERROR                    -> sending_error
//     a bad header, HELLO, STEP or GOODBYE        ERROR                    -> sending_error
//     the peer closes mid-frame                   ERROR (malformed)        -> sending_error
//     GOODBYE, the peer closes, connection lost   close                    -> closed
//   awaiting_hello:
//     HELLO accepted (the token first), under max_connections, slots reserved
//                                                 WELCOME, read a frame    -> ready
//     a wrong token, max_connections reached      ERROR                    -> sending_error
//     a STEP                                      ERROR                    -> sending_error
//   ready:
//     STEP decoded                                endpoint.submit          -> stepping
//     a second HELLO                              ERROR                    -> sending_error
//   stepping:
//     answered ok                                 ACTIONS, read a frame    -> ready
//     answered with an error                      ERROR                    -> sending_error
//     stop()                                      remember why             -> shutdown_after_step
//   shutdown_after_step:
//     answered                                    ERROR (stop's reason)    -> sending_error
//   sending_error:
//     every frame written                         shut down sending, drain -> draining
//   sending_error, draining:
//     input ends or fails, drain time up          close                    -> closed
//   any phase but closed:
//     a write fails, force_close()                close                    -> closed
//   sending_error, draining, closed:
//     answered (the step outlived the connection) free the slots
//
// The step request is a second, smaller state (StepRequestState): `idle` while the session owns
// it, `submitted` from endpoint.submit until the answer is handled. It is not a phase because the
// connection can close while the endpoint still has the step (a write fails, stop() runs out of
// grace): the endpoint forbids disconnecting then, so the slots are freed when the answer comes.
//
// Until its WELCOME a connection holds a slot of the listener's admission (admission.hpp) and
// its refusals go through the listener's rate-limited refusal log; from its WELCOME it counts
// against max_connections.
//
// A session with a step submitted is kept alive by the request's completion (submitted_self_),
// which may arrive after the I/O threads have stopped: then it frees the slots on the endpoint's
// thread instead of posting (Shared::post refuses once io_done is set).
//
// Thread-safety: the public members are called on strand() only (start and the sweep are posted
// there, stop() posts shutdown and force_close); the step's completion arrives on the endpoint's
// thread and is posted to the strand.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "seedrl/core/action_buffer.hpp"
#include "seedrl/core/tensor.hpp"
#include "server_shared.hpp"
#include "session_stream.hpp"

namespace seedrl::transport_detail {

class SocketSession final : public std::enable_shared_from_this<SocketSession> {
 public:
  using Socket = boost::asio::generic::stream_protocol::socket;
  using Strand = SocketServer::Shared::Strand;

  /// `admission`: the listener's count of this connection until its WELCOME (admission.hpp).
  /// The handshake deadline runs from here.
  SocketSession(std::shared_ptr<SocketServer::Shared> shared, Strand strand, SessionStream stream,
                std::uint64_t id, std::string peer, AdmissionLimiter::Slot admission);

  const Strand& strand() const { return strand_; }

  /// Starts reading the HELLO (after the TLS handshake on a TLS listener).
  void start();
  /// Tells the peer why the server stops and closes; a step with the endpoint is answered first.
  void shutdown(protocol::ErrorCode reason);
  /// Closes a session past its deadline: handshake or idle timeout, or the drain time.
  void sweep(std::int64_t now);
  /// Closes now, whatever the phase.
  void force_close() { close_now(); }

 private:
  enum class Phase {
    tls_handshake,
    awaiting_hello,
    ready,
    stepping,
    shutdown_after_step,
    sending_error,
    draining,
    closed
  };
  enum class StepRequestState { idle, submitted };

  std::shared_ptr<SocketSession> self() { return shared_from_this(); }
  // A frame is being read: the handshake or idle timeout applies.
  bool reading_phase() const { return phase_ == Phase::awaiting_hello || phase_ == Phase::ready; }
  // An ERROR is going out: the drain time applies.
  bool closing_phase() const { return phase_ == Phase::sending_error || phase_ == Phase::draining; }

  // TLS (tls_handshake), then the HELLO or the refusal of a connection over the limit.
  void await_tls();
  void on_first_bytes(const boost::system::error_code& ec);
  void on_tls_handshake(const boost::system::error_code& ec);

  // Reading (awaiting_hello, ready).
  void read_header();
  void start_frame_read();
  bool finish_read(const boost::system::error_code& ec);
  void on_header(const boost::system::error_code& ec, std::size_t n);
  void on_payload(const boost::system::error_code& ec, std::size_t n);
  void lost(const boost::system::error_code& ec, std::size_t got, std::size_t wanted);

  void on_hello(std::span<const std::uint8_t> payload);
  // Before the WELCOME the peer is not authenticated: its refusals are rate-limited.
  bool welcomed() const { return counted_; }
  void log_event(const std::string& line);

  // Steps.
  void on_step(std::span<const std::uint8_t> payload);
  void on_step_complete(const Status& status);
  void on_step_done(const Status& status);

  // Writing: one write in flight; frames queued behind it.
  void flush();
  void on_written(const boost::system::error_code& ec, std::size_t n);

  // Closing.
  void fail(const protocol::ErrorFrame& error);
  void finish_sending();
  void drain();
  void close_now();
  void release_slots();

  // Declared first, so destroyed last: the strand and the socket belong to shared_->io.
  std::shared_ptr<SocketServer::Shared> shared_;
  Strand strand_;
  SessionStream stream_;
  const std::uint64_t id_;
  const std::string peer_;

  Phase phase_ = Phase::awaiting_hello;
  AdmissionLimiter::Slot admission_;          // until the WELCOME
  const std::int64_t handshake_deadline_ns_;  // the accept plus handshake_timeout
  bool counted_ = false;  // counted against max_connections (from the WELCOME to the close)
  StepRequestState step_state_ = StepRequestState::idle;
  bool read_pending_ = false;   // the read side: a read (frame or drain) is outstanding
  bool write_pending_ = false;  // the write side: writing_buffer_ is being written
  // When the phase has waited too long: the handshake deadline (tls_handshake, awaiting_hello), a
  // frame read's start plus the idle timeout (ready), the ERROR's queuing plus the drain time
  // (sending_error, draining). None before start() begins the first read.
  std::int64_t deadline_ns_ = std::numeric_limits<std::int64_t>::max();
  protocol::ErrorCode shutdown_reason_ = protocol::ErrorCode::shutting_down;  // shutdown_after_step

  std::array<std::uint8_t, protocol::kHeaderBytes> header_{};
  protocol::FrameHeader frame_;
  Tensor buffer_;  // payloads; 64-byte aligned, so STEP observations are 8-byte aligned
  std::array<std::uint8_t, 4096> drain_buffer_{};
  std::string writing_buffer_, next_write_;
  std::uint8_t error_version_ = protocol::kVersion;  // the version byte of an ERROR to the peer

  Connection connection_;
  protocol::StepLayout step_layout_;  // of this actor's STEPs, from its HELLO
  std::uint32_t step_frame_bytes_ = protocol::kHeaderBytes;
  std::uint32_t step_sequence_ = 0;
  std::vector<float> rewards_;
  std::vector<Tensor> fields_;  // views of the declared fields in buffer_
  ActionValues actions_;        // num_envs rows of the spec's kind; request_.actions views it
  StepRequest request_;
  std::shared_ptr<SocketSession> submitted_self_;
};

}  // namespace seedrl::transport_detail
