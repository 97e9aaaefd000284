// SocketSession: the phases before a WELCOME (socket_session.hpp): the TLS handshake, where the
// listener speaks TLS, and the HELLO: the token first, then the actor's specs, the connection
// limit and its slots.
#include <chrono>
#include <utility>

#include "seedrl/core/error.hpp"
#include "socket_session.hpp"

namespace seedrl::transport_detail {

namespace asio = boost::asio;
using boost::system::error_code;
using protocol::ErrorCode;

// ---- TLS ----

void SocketSession::await_tls() {
  phase_ = Phase::tls_handshake;
  deadline_ns_ = handshake_deadline_ns_;
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
    log_event(str_cat(peer_, ": closed before the TLS handshake"));
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
  if (phase_ != Phase::tls_handshake) return;  // closed meanwhile (timeout, stop)
  if (ec) {
    ++shared_->refused;
    log_event(str_cat(peer_, ": TLS handshake refused: ", tls_failure(ec, stream_.ssl())));
    return close_now();
  }
  phase_ = Phase::awaiting_hello;
  read_header();
}

// ---- Handshake ----

void SocketSession::on_hello(std::span<const std::uint8_t> payload) {
  // The token first: nothing else an unauthenticated peer sent is parsed.
  std::string_view token;
  if (protocol::Verdict v = protocol::decode_hello_token(payload, &token); !v.is_ok())
    return fail(v.error());
  if (!protocol::tokens_equal(token, shared_->options.token))
    return fail({ErrorCode::unauthorized, "wrong token"});
  protocol::Hello hello;
  if (protocol::Verdict v = protocol::decode_hello(payload, &hello); !v.is_ok())
    return fail(v.error());
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
  if (!shared_->count_connection()) {
    return fail({ErrorCode::unavailable, str_cat("connection limit of ", shared_->max_connections,
                                                 " reached; retry later")});
  }
  counted_ = true;
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
  admission_.release();
  ++shared_->handshakes;
  step_layout_ = step;
  step_frame_bytes_ = static_cast<std::uint32_t>(step.frame_bytes);

  // The step request lives as long as the session; its views point into buffer_, where every
  // STEP payload lands, so observations and fields are copied only once more: into the inference
  // batch.
  buffer_ = Tensor::empty({static_cast<std::int64_t>(step.payload_bytes)}, DType::u8);
  auto* bytes = static_cast<std::uint8_t*>(buffer_.raw_data());
  rewards_.assign(n, 0.0f);
  actions_ = ActionValues(spec.action, n);
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
  request_.actions = actions_.view();
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

}  // namespace seedrl::transport_detail
