// Shared by the wire codec's tests (test_protocol.cpp, test_protocol_v2.cpp): frames as bytes,
// little-endian bytes written out by hand (an independent statement of docs/protocol.md's
// layout), and sample handshakes.
#pragma once

#include <doctest/doctest.h>

#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "seedrl/transport/protocol.hpp"

namespace seedrl::test {

inline std::span<const std::uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}
// The payload of the single frame in `frame`, after checking its header.
inline std::span<const std::uint8_t> payload_of(const std::string& frame,
                                                protocol::FrameType type) {
  protocol::FrameHeader h;
  const protocol::Verdict v =
      protocol::decode_header(bytes_of(frame), protocol::kDefaultMaxFrameBytes, &h);
  REQUIRE(v.is_ok());
  REQUIRE(h.type == type);
  REQUIRE(h.length + 4 == frame.size());
  return bytes_of(frame).subspan(protocol::kHeaderBytes);
}

// Little-endian bytes written out by hand: an independent statement of the layout.
struct Bytes {
  std::string s;
  Bytes& u8(unsigned v) { return s.push_back(static_cast<char>(v)), *this; }
  Bytes& u16(unsigned v) { return u8(v & 0xff).u8(v >> 8); }
  Bytes& u32(std::uint32_t v) { return u16(v & 0xffff).u16(v >> 16); }
  Bytes& u64(std::uint64_t v) {
    return u32(static_cast<std::uint32_t>(v)).u32(static_cast<std::uint32_t>(v >> 32));
  }
  Bytes& f32(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    return u32(bits);
  }
  Bytes& text(std::string_view t) { return s.append(t), *this; }
};

inline protocol::Hello sample_hello() {
  protocol::Hello h;
  h.token = "s3cret";
  h.run_id = 0x0123456789abcdefULL;
  h.num_envs = 3;
  h.evaluation = true;
  h.spec.observation = TensorSpec{Shape{4, 84, 84}, DType::u8};
  h.spec.action = ActionSpec::discrete(6);
  return h;
}

// sample_hello()'s HELLO payload up to its observation spec: magic, token, run id, envs and the
// evaluation flag.
inline Bytes sample_hello_prefix() {
  return Bytes{}.text("SEEDRL01").u16(6).text("s3cret").u64(0x0123456789abcdefULL).u32(3).u8(1);
}

// Pendulum-like: one dimension in [-2, 2], and a second in [-0.5, 1.5].
inline const ActionSpec kBox = ActionSpec::box({-2.0f, -0.5f}, {2.0f, 1.5f});

inline protocol::ErrorCode code_of(const protocol::Verdict& v) {
  REQUIRE_FALSE(v.is_ok());
  return v.error().code;
}

}  // namespace seedrl::test
