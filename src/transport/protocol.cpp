// The wire codec of docs/protocol.md. Encoders append to a std::string; decoders read through a
// bounds-checked Cursor that never throws, so hostile bytes become a refusing Verdict and nothing
// else. The STEP frame is protocol_step.cpp's, the ACTIONS frame protocol_actions.cpp's.
#include "seedrl/transport/protocol.hpp"

#include <algorithm>
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
