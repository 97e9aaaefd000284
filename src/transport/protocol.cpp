// The wire codec of docs/protocol.md. Encoders append to a std::string; decoders read through a
// bounds-checked Cursor that never throws, so hostile bytes become a refusing Verdict and nothing
// else.
#include "seedrl/transport/protocol.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "seedrl/core/error.hpp"

#include "wire_format.hpp"

namespace seedrl::protocol {

const char* name(ErrorCode code) {
  switch (code) {
    case ErrorCode::malformed:
      return "malformed";
    case ErrorCode::unsupported_version:
      return "unsupported version";
    case ErrorCode::unauthorized:
      return "unauthorized";
    case ErrorCode::invalid_request:
      return "invalid request";
    case ErrorCode::unavailable:
      return "unavailable";
    case ErrorCode::shutting_down:
      return "shutting down";
    case ErrorCode::idle_timeout:
      return "idle timeout";
    case ErrorCode::internal:
      return "internal";
    case ErrorCode::finished:
      return "finished";
    case ErrorCode::frame_too_large:
      return "frame too large";
  }
  return "unknown";
}

using namespace wire;  // the codec's primitives (src/transport/wire_format.hpp)

// ---- Headers ----

void encode_header(std::string& out, FrameType type, std::uint32_t sequence,
                   std::size_t payload_bytes, std::uint8_t version) {
  put<std::uint32_t>(out, checked_u32(8 + payload_bytes, "frame length"));
  put<std::uint8_t>(out, version);
  put<std::uint8_t>(out, static_cast<std::uint8_t>(type));
  put<std::uint16_t>(out, 0);
  put<std::uint32_t>(out, sequence);
}

Verdict decode_header(std::span<const std::uint8_t> bytes, std::uint32_t max_frame_bytes,
                      FrameHeader* out) {
  Cursor in(bytes, "frame header");
  std::uint8_t type = 0;
  std::uint16_t reserved = 0;
  if (!in.get(&out->length) || !in.get(&out->version) || !in.get(&type) || !in.get(&reserved) ||
      !in.get(&out->sequence)) {
    return in.truncated("12-byte header");
  }
  if (out->length < 8) {
    return refuse(ErrorCode::malformed, str_cat("frame header: length field ", out->length,
                                                " is below the minimum of 8"));
  }
  if (std::uint64_t{out->length} + 4 > max_frame_bytes) {
    return refuse(ErrorCode::frame_too_large,
                  str_cat("frame header: a frame of ", std::uint64_t{out->length} + 4,
                          " bytes exceeds this server's limit of ", max_frame_bytes));
  }
  if (out->version != kVersion) {
    return refuse(ErrorCode::unsupported_version,
                  str_cat("frame header: protocol version ", int{out->version},
                          " is not supported: this side speaks version ", int{kVersion}));
  }
  if (type < static_cast<std::uint8_t>(FrameType::hello) ||
      type > static_cast<std::uint8_t>(FrameType::goodbye)) {
    return refuse(ErrorCode::malformed, str_cat("frame header: unknown frame type ", int{type}));
  }
  out->type = static_cast<FrameType>(type);
  if (reserved != 0) {
    return refuse(ErrorCode::malformed,
                  str_cat("frame header: reserved field is ", reserved, ", not 0"));
  }
  return Verdict::ok();
}

// ---- HELLO ----

void encode_hello(std::string& out, const Hello& hello, std::uint32_t sequence) {
  SEEDRL_REQUIRE(hello.token.size() <= kMaxTokenBytes, "protocol: the token has ",
                 hello.token.size(), " bytes; at most ", kMaxTokenBytes, " are allowed");
  const std::size_t start = begin_frame(out, FrameType::hello, sequence);
  out.append(kMagic.data(), kMagic.size());
  put<std::uint16_t>(out, static_cast<std::uint16_t>(hello.token.size()));
  out.append(hello.token);
  put<std::uint64_t>(out, hello.run_id);
  put<std::uint32_t>(out, hello.num_envs);
  put<std::uint8_t>(out, hello.evaluation ? 1 : 0);
  put_step_spec(out, hello.spec);
  patch_length(out, start);
}

namespace {

// A HELLO's magic and token, in front of the rest.
Verdict get_hello_token(Cursor& in, std::string_view* token_out) {
  const std::uint8_t* magic = nullptr;
  if (!in.take(kMagic.size(), &magic)) return in.truncated("magic");
  if (std::memcmp(magic, kMagic.data(), kMagic.size()) != 0) {
    return refuse(ErrorCode::malformed, "HELLO frame: wrong magic (not a seedrl actor)");
  }
  std::uint16_t token_bytes = 0;
  const std::uint8_t* token = nullptr;
  if (!in.get(&token_bytes)) return in.truncated("token length");
  if (token_bytes > kMaxTokenBytes) {
    return refuse(ErrorCode::malformed, str_cat("HELLO frame: a token of ", token_bytes,
                                                " bytes (at most ", kMaxTokenBytes, ")"));
  }
  if (!in.take(token_bytes, &token)) return in.truncated("token");
  *token_out = std::string_view(reinterpret_cast<const char*>(token), token_bytes);
  return Verdict::ok();
}

}  // namespace

Verdict decode_hello_token(std::span<const std::uint8_t> payload, std::string_view* token) {
  Cursor in(payload, "HELLO");
  return get_hello_token(in, token);
}

Verdict decode_hello(std::span<const std::uint8_t> payload, Hello* out) {
  Cursor in(payload, "HELLO");
  std::string_view token;
  if (Verdict v = get_hello_token(in, &token); !v.is_ok()) return v;
  out->token.assign(token);
  std::uint8_t evaluation = 0;
  if (!in.get(&out->run_id) || !in.get(&out->num_envs) || !in.get(&evaluation)) {
    return in.truncated("run id, environment count and evaluation flag");
  }
  if (out->num_envs == 0 || out->num_envs > kMaxEnvs) {
    return refuse(ErrorCode::malformed, str_cat("HELLO frame: ", out->num_envs,
                                                " environments (must be 1 to ", kMaxEnvs, ")"));
  }
  if (evaluation > 1) {
    return refuse(ErrorCode::malformed,
                  str_cat("HELLO frame: evaluation flag ", int{evaluation}, " is not 0 or 1"));
  }
  out->evaluation = evaluation == 1;
  if (Verdict v = get_step_spec(in, "HELLO", &out->spec); !v.is_ok()) return v;
  if (in.remaining() != 0) return in.trailing();
  return Verdict::ok();
}

// ---- WELCOME ----

void encode_welcome(std::string& out, const Welcome& welcome, std::uint32_t sequence) {
  const std::size_t start = begin_frame(out, FrameType::welcome, sequence);
  put_step_spec(out, welcome.spec);
  put<std::uint32_t>(out, welcome.first_slot);
  put<std::uint32_t>(out, welcome.max_frame_bytes);
  patch_length(out, start);
}

Verdict decode_welcome(std::span<const std::uint8_t> payload, Welcome* out) {
  Cursor in(payload, "WELCOME");
  if (Verdict v = get_step_spec(in, "WELCOME", &out->spec); !v.is_ok()) return v;
  if (!in.get(&out->first_slot) || !in.get(&out->max_frame_bytes)) {
    return in.truncated("first slot and frame limit");
  }
  if (in.remaining() != 0) return in.trailing();
  return Verdict::ok();
}

// ---- ERROR ----

std::size_t max_error_frame_bytes() {
  return kHeaderBytes + 2 + 2 + kMaxMessageBytes;  // code, message length, message
}

std::uint8_t error_version_for(std::uint8_t peer_version) {
  // ERROR has had one layout since version 1: an older peer reads this one as its own.
  return peer_version >= 1 && peer_version <= kVersion ? peer_version : kVersion;
}

void encode_error(std::string& out, const ErrorFrame& error, std::uint32_t sequence,
                  std::uint8_t version) {
  const std::size_t start = begin_frame(out, FrameType::error, sequence, version);
  const std::size_t message_bytes = std::min(error.message.size(), kMaxMessageBytes);
  put<std::uint16_t>(out, static_cast<std::uint16_t>(error.code));
  put<std::uint16_t>(out, static_cast<std::uint16_t>(message_bytes));
  out.append(error.message.data(), message_bytes);
  patch_length(out, start);
}

Verdict decode_error(std::span<const std::uint8_t> payload, ErrorFrame* out) {
  Cursor in(payload, "ERROR");
  std::uint16_t code = 0, message_bytes = 0;
  const std::uint8_t* message = nullptr;
  if (!in.get(&code) || !in.get(&message_bytes)) return in.truncated("code and message length");
  if (message_bytes > kMaxMessageBytes) {
    return refuse(ErrorCode::malformed,
                  str_cat("ERROR frame: a message of ", message_bytes, " bytes"));
  }
  if (!in.take(message_bytes, &message)) return in.truncated("message");
  if (in.remaining() != 0) return in.trailing();
  // Codes this version does not know stay as they are: the message still says what happened.
  out->code = static_cast<ErrorCode>(code);
  out->message.assign(reinterpret_cast<const char*>(message), message_bytes);
  return Verdict::ok();
}

// ---- ACTIONS ----

std::size_t actions_frame_bytes(std::uint32_t num_envs) {
  return kHeaderBytes + 4 + 4 * std::size_t{num_envs};  // count, then one i32 per environment
}

std::size_t actions_frame_bytes(std::uint32_t num_envs, const ActionSpec& spec) {
  // count, then one i32 or a row of D f32 per environment
  return kHeaderBytes + 4 + 4 * std::size_t{num_envs} * static_cast<std::size_t>(spec.dims());
}

void encode_actions(std::string& out, std::uint32_t sequence,
                    std::span<const std::int32_t> actions) {
  const std::size_t start = begin_frame(out, FrameType::actions, sequence);
  put<std::uint32_t>(out, checked_u32(actions.size(), "action count"));
  for (std::int32_t a : actions) put<std::int32_t>(out, a);
  patch_length(out, start);
}

Verdict decode_actions(std::span<const std::uint8_t> payload, std::uint32_t num_actions,
                       std::span<std::int32_t> actions) {
  Cursor in(payload, "ACTIONS");
  std::uint32_t n = 0;
  if (!in.get(&n)) return in.truncated("action count");
  if (n != actions.size()) {
    return refuse(ErrorCode::malformed,
                  str_cat("ACTIONS frame: ", n, " actions for ", actions.size(), " environments"));
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    std::int32_t a = 0;
    if (!in.get(&a)) return in.truncated("actions");
    if (a < 0 || static_cast<std::uint32_t>(a) >= num_actions) {
      return refuse(ErrorCode::malformed, str_cat("ACTIONS frame: action ", a, " for environment ",
                                                  i, " is outside [0, ", num_actions, ")"));
    }
    actions[i] = a;
  }
  if (in.remaining() != 0) return in.trailing();
  return Verdict::ok();
}

Verdict decode_actions(std::span<const std::uint8_t> payload, const ActionSpec& spec,
                       std::span<std::int32_t> actions) {
  if (!spec.is_branched())
    return decode_actions(payload, static_cast<std::uint32_t>(spec.num_actions), actions);
  const std::size_t k = spec.branches.size();
  if (actions.size() % k != 0) {
    return refuse(ErrorCode::internal, str_cat("ACTIONS frame: room for ", actions.size(),
                                               " actions is not rows of ", k, " branches"));
  }
  if (Verdict v = decode_actions(payload, static_cast<std::uint32_t>(spec.num_actions), actions);
      !v.is_ok())
    return v;
  for (std::size_t i = 0; i < actions.size(); ++i) {
    const std::int32_t size = spec.branches[i % k];
    if (actions[i] >= size) {
      return refuse(ErrorCode::malformed,
                    str_cat("ACTIONS frame: action ", actions[i], " of branch ", i % k,
                            " for environment ", i / k, " is outside [0, ", size, ")"));
    }
  }
  return Verdict::ok();
}

void encode_box_actions(std::string& out, std::uint32_t sequence, std::span<const float> actions,
                        std::uint32_t dims) {
  SEEDRL_REQUIRE(dims >= 1 && actions.size() % dims == 0, "protocol: ", actions.size(),
                 " box action values do not split into rows of ", dims);
  const std::size_t start = begin_frame(out, FrameType::actions, sequence);
  put<std::uint32_t>(out, checked_u32(actions.size() / dims, "environment count"));
  for (float a : actions) put<float>(out, a);
  patch_length(out, start);
}

Verdict check_box_actions(const ActionSpec& spec, std::span<const float> actions) {
  const std::size_t dims = spec.low.size();
  if (!spec.is_box() || spec.high.size() != dims || actions.size() % dims != 0) {
    return refuse(ErrorCode::internal,
                  str_cat("box actions: ", actions.size(), " values for ", spec.to_string()));
  }
  for (std::size_t i = 0; i < actions.size(); ++i) {
    const std::size_t d = i % dims;
    const float a = actions[i];
    // Written so that a NaN fails as well.
    if (!(std::isfinite(a) && a >= spec.low[d] && a <= spec.high[d])) {
      return refuse(
          ErrorCode::malformed,
          str_cat("ACTIONS frame: box action ", a, " for environment ", i / dims, ", dimension ", d,
                  " is outside [", spec.low[d], ", ", spec.high[d], "]"));
    }
  }
  return Verdict::ok();
}

Verdict decode_box_actions(std::span<const std::uint8_t> payload, const ActionSpec& spec,
                           std::span<float> actions) {
  Cursor in(payload, "ACTIONS");
  const std::size_t dims = spec.low.size();
  if (!spec.is_box() || actions.size() % dims != 0) {
    return refuse(ErrorCode::internal, str_cat("ACTIONS frame: ", actions.size(),
                                               " values expected for ", spec.to_string()));
  }
  const std::size_t num_envs = actions.size() / dims;
  std::uint32_t n = 0;
  if (!in.get(&n)) return in.truncated("environment count");
  if (n != num_envs) {
    return refuse(ErrorCode::malformed, str_cat("ACTIONS frame: box actions for ", n,
                                                " environments, expected ", num_envs));
  }
  if (in.remaining() != 4 * actions.size()) {
    return refuse(ErrorCode::malformed,
                  str_cat("ACTIONS frame: ", in.remaining(), " bytes of box actions; ", n,
                          " environments of ", dims, " f32 need ", 4 * actions.size()));
  }
  const std::uint8_t* values = nullptr;
  if (!in.take(4 * actions.size(), &values)) return in.truncated("box actions");
  for (std::size_t i = 0; i < actions.size(); ++i) {
    float a;
    std::memcpy(&a, values + 4 * i, 4);
    actions[i] = detail::to_little_endian(a);
  }
  return check_box_actions(spec, actions);
}

// ---- GOODBYE ----

void encode_goodbye(std::string& out, std::uint32_t sequence) {
  encode_header(out, FrameType::goodbye, sequence, 0);
}

bool tokens_equal(std::string_view a, std::string_view b) {
  // Every byte of the longer string is visited whatever the contents; the lengths are compared
  // without branching on where they differ.
  const std::size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

}  // namespace seedrl::protocol
