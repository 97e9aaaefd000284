// RemoteClient: Asio resolves and connects (with a timeout); the lock-step exchange itself uses
// the socket's descriptor directly (sendmsg with two buffers, so observations are never copied;
// poll for deadlines and for interrupt()), or, with TLS, a TlsChannel on it (tls_channel.hpp).
#include "seedrl/transport/remote_client.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "asio.hpp"
#include "remote_client_impl.hpp"
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

void RemoteClientOptions::validate(std::string_view owner) const {
  (void)SocketAddress::parse(address);
  SEEDRL_REQUIRE(token.size() <= protocol::kMaxTokenBytes, owner, ": token has ", token.size(),
                 " bytes; at most ", protocol::kMaxTokenBytes, " are allowed");
  SEEDRL_REQUIRE(connect_timeout.count() > 0, owner, ": connect_timeout must be positive");
  SEEDRL_REQUIRE(step_timeout.count() > 0, owner, ": step_timeout must be positive");
  tls.validate(owner);
  SEEDRL_REQUIRE(!tls.enabled() || !SocketAddress::parse(address).is_unix(), owner,
                 ": TLS is for TCP; '", address,
                 "' is a Unix socket, which never leaves this machine");
}

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
  request.spec.validate("RemoteClient::connect");
  SEEDRL_REQUIRE(request.spec.action.dims() <= static_cast<std::int32_t>(protocol::kMaxActionDims),
                 "RemoteClient::connect: ", request.spec.action.to_string(),
                 "; the protocol carries box actions of at most ", protocol::kMaxActionDims,
                 " dimensions");
  const Clock::time_point deadline = Clock::now() + c.options.connect_timeout;
  if (Status s = c.open_socket(deadline); !s.is_ok()) return s;
  if (c.tls_context) {
    if (Status s = c.start_tls(deadline); !s.is_ok()) return c.lost(s);
  }

  protocol::Hello hello;
  hello.token = c.options.token;
  hello.run_id = request.run_id;
  hello.num_envs = static_cast<std::uint32_t>(request.num_envs);
  hello.evaluation = request.evaluation;
  hello.spec = request.spec;
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
  if (!(welcome.spec == request.spec)) {
    return c.lost(
        Status::invalid_argument(str_cat("the server expects steps of ", welcome.spec.to_string(),
                                         "; this actor's are ", request.spec.to_string())));
  }
  c.num_envs = hello.num_envs;
  c.action_spec = welcome.spec.action;
  c.spec = std::move(welcome.spec);
  c.layout = protocol::step_layout(c.num_envs, c.spec);
  c.first_slot = static_cast<std::int32_t>(welcome.first_slot);
  return Status::ok();
}

Status RemoteClient::step(const StepRecord& step, std::span<std::int32_t> actions) {
  return step_actions(step, actions);
}

Status RemoteClient::step(const StepRecord& step, std::span<float> actions) {
  return step_actions(step, actions);
}

// Both step()s: the connection's action space (its spec) decodes the answer into `actions`, of
// whichever kind; a buffer of the other kind, or not whole rows, is the caller's mistake.
Status RemoteClient::step_actions(const StepRecord& step, ActionBuffer actions) {
  Impl& c = *impl_;
  if (!connected()) return Status::unavailable("RemoteClient: not connected");
  const ActionSpec& spec = c.action_spec;
  const bool box = actions.dtype() == DType::f32;
  if (box != spec.is_box()) {
    return Status::invalid_argument(
        str_cat("RemoteClient::step: this connection carries ", spec.to_string(),
                "; step it with the overload that takes ",
                spec.is_box() ? "std::span<float>" : "std::span<std::int32_t>",
                " actions, not the ", box ? "box" : "discrete", " one (",
                box ? "std::span<float>" : "std::span<std::int32_t>", ")"));
  }
  // One action per environment, one per branch (ActionSpec::branched), or a box's D values.
  const auto per_env = static_cast<std::size_t>(spec.dims());
  if (actions.size() % per_env != 0) {
    return Status::invalid_argument(str_cat("RemoteClient::step: ", actions.size(),
                                            " action values are not rows of ", per_env));
  }
  std::span<const std::uint8_t> answer;
  if (Status s = exchange(step, actions.size() / per_env, &answer); !s.is_ok()) return s;
  if (protocol::Verdict v = protocol::decode_actions(answer, spec, actions); !v.is_ok()) {
    return c.lost(Status::unavailable(str_cat("bad ACTIONS frame: ", v.error().message)));
  }
  return Status::ok();
}

// step_actions(): checks the record against the connection's spec, sends the STEP (its
// observations and fields straight from the actor's buffers) and receives its ACTIONS, whose
// payload `answer` then views (valid until the next exchange).
Status RemoteClient::exchange(const StepRecord& step, std::size_t action_rows,
                              std::span<const std::uint8_t>* answer) {
  Impl& c = *impl_;
  const std::size_t n = c.num_envs;
  const protocol::StepLayout& layout = c.layout;
  bool fits = step.rewards.size() == n && step.flags.size() == n && action_rows == n &&
              step.observations.defined() &&
              step.observations.bytes() == n * layout.observation_bytes &&
              step.fields.size() == layout.num_fields;
  for (std::size_t k = 0; fits && k < step.fields.size(); ++k) {
    const std::uint64_t value_bytes =
        layout.field_bits[k] > 0 ? layout.field_bits[k] : layout.field_bytes[k];
    fits = step.fields[k].defined() && step.fields[k].bytes() == n * value_bytes;
  }
  if (!fits) {
    return Status::invalid_argument(str_cat(
        "RemoteClient::step: ", step.rewards.size(), " rewards, ", step.flags.size(), " flags, ",
        action_rows, " actions, ", step.observations.bytes(), " observation bytes and ",
        step.fields.size(), " fields for ", n, " environments of ", c.spec.to_string(),
        c.action_spec.dims() > 1 ? str_cat(" (actions: ", c.action_spec.dims(), " values each)")
                                 : ""));
  }
  const Clock::time_point deadline = Clock::now() + c.options.step_timeout;
  const std::uint32_t sequence = ++c.sequence;
  c.send_buffer.clear();
  protocol::encode_step_prefix(c.send_buffer, sequence, layout, step.rewards, step.flags);
  // The prefix, the observations, then each field after its zero padding (at most 7 bytes).
  static constexpr std::array<char, 8> kZeros{};
  std::array<iovec, 2 + 2 * StepSpec::kMaxFields> parts;
  int count = 0;
  parts[count++] = {c.send_buffer.data(), c.send_buffer.size()};
  parts[count++] = {step.observations.raw_data(), step.observations.bytes()};
  std::uint64_t end = layout.observations_end();
  for (std::size_t k = 0; k < layout.num_fields; ++k) {
    if (const std::uint64_t padding = layout.field_offsets[k] - end; padding > 0)
      parts[count++] = {const_cast<char*>(kZeros.data()), padding};
    if (layout.field_bits[k] > 0) {  // a legal-action mask: its bits
      std::vector<std::uint8_t>& bits = c.packed_fields[k];
      bits.resize(n * layout.field_bytes[k]);
      protocol::pack_bits(
          {static_cast<const std::uint8_t*>(step.fields[k].raw_data()), step.fields[k].bytes()},
          layout.field_bits[k], bits);
      parts[count++] = {bits.data(), bits.size()};
    } else {
      parts[count++] = {step.fields[k].raw_data(), step.fields[k].bytes()};
    }
    end = layout.field_end(k);
  }
  if (Status s = c.send_all(parts.data(), count, deadline); !s.is_ok()) return c.lost(s);

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
  if (c.tls) {  // best effort, as below: one try, no waiting
    iovec part{goodbye.data(), goodbye.size()};
    (void)c.tls->send(&part, 1, [](short) { return Status::unavailable("no waiting"); });
    c.tls->close_notify();
  } else {
    (void)::send(c.owned_fd(), goodbye.data(), goodbye.size(),
                 MSG_NOSIGNAL | MSG_DONTWAIT);  // best effort
  }
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
