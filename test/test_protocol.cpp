// The wire codec: exact bytes of each frame (as docs/protocol.md lays them out), round trips, and
// a refusing Verdict with the right code for every kind of bad input, including every truncation.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "seedrl/runtime/unroll.hpp"
#include "seedrl/transport/protocol.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_protocol {

using namespace seedrl;
using namespace seedrl::protocol;

namespace {

std::span<const std::uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}
// The payload of the single frame in `frame`, after checking its header.
std::span<const std::uint8_t> payload_of(const std::string& frame, FrameType type) {
  FrameHeader h;
  const Verdict v = decode_header(bytes_of(frame), kDefaultMaxFrameBytes, &h);
  REQUIRE(v.is_ok());
  REQUIRE(h.type == type);
  REQUIRE(h.length + 4 == frame.size());
  return bytes_of(frame).subspan(kHeaderBytes);
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

Hello sample_hello() {
  Hello h;
  h.token = "s3cret";
  h.run_id = 0x0123456789abcdefULL;
  h.num_envs = 3;
  h.evaluation = true;
  h.observation = TensorSpec{Shape{4, 84, 84}, DType::u8};
  h.action_spec = ActionSpec::discrete(6);
  return h;
}

// sample_hello()'s HELLO payload up to its observation spec: magic, token, run id, envs and the
// evaluation flag.
Bytes sample_hello_prefix() {
  return Bytes{}.text("SEEDRL01").u16(6).text("s3cret").u64(0x0123456789abcdefULL).u32(3).u8(1);
}

// Pendulum-like: one dimension in [-2, 2], and a second in [-0.5, 1.5].
const ActionSpec kBox = ActionSpec::box({-2.0f, -0.5f}, {2.0f, 1.5f});

ErrorCode code_of(const Verdict& v) {
  REQUIRE_FALSE(v.is_ok());
  return v.error().code;
}

}  // namespace

TEST_CASE("protocol: a Verdict is ok or carries the ERROR frame to send, and is no bool") {
  static_assert(!std::is_constructible_v<bool, Verdict>);
  CHECK(Verdict::ok().is_ok());
  const Verdict refused(ErrorFrame{ErrorCode::unauthorized, "wrong token"});
  CHECK_FALSE(refused.is_ok());
  CHECK(refused.error().code == ErrorCode::unauthorized);
  CHECK(refused.error().message == "wrong token");
}

TEST_CASE("protocol: the header is length, version, type, reserved, sequence") {
  std::string out;
  encode_header(out, FrameType::step, 0xa1b2c3d4, 100);
  CHECK(out == Bytes{}.u32(108).u8(2).u8(4).u16(0).u32(0xa1b2c3d4).s);
  FrameHeader h;
  CHECK(decode_header(bytes_of(out), kDefaultMaxFrameBytes, &h).is_ok());
  CHECK(h.length == 108);
  CHECK(h.payload_bytes() == 100);
  CHECK(h.version == protocol::kVersion);
  CHECK(h.type == FrameType::step);
  CHECK(h.sequence == 0xa1b2c3d4);
}

TEST_CASE("protocol: a bad header gets the fault that names it") {
  FrameHeader h;
  auto header = [](std::uint32_t length, unsigned version, unsigned type, unsigned reserved) {
    return Bytes{}.u32(length).u8(version).u8(type).u16(reserved).u32(0).s;
  };
  CHECK(code_of(decode_header(bytes_of(header(0xffffffffu, 2, 4, 0)), kDefaultMaxFrameBytes, &h)) ==
        ErrorCode::frame_too_large);
  CHECK(code_of(decode_header(bytes_of(header(5000, 2, 4, 0)), 5000, &h)) ==
        ErrorCode::frame_too_large);
  CHECK(decode_header(bytes_of(header(4996, 2, 4, 0)), 5000, &h).is_ok());  // exactly 5000 bytes
  CHECK(code_of(decode_header(bytes_of(header(7, 2, 4, 0)), kDefaultMaxFrameBytes, &h)) ==
        ErrorCode::malformed);
  for (unsigned version : {0u, 1u, 3u, 255u}) {
    CAPTURE(version);
    const Verdict v = decode_header(bytes_of(header(8, version, 4, 0)), kDefaultMaxFrameBytes, &h);
    CHECK(code_of(v) == ErrorCode::unsupported_version);
    CHECK(v.error().message.find(str_cat("version ", version, " is not supported")) !=
          std::string::npos);
    CHECK(v.error().message.find("version 2") != std::string::npos);
  }
  CHECK(code_of(decode_header(bytes_of(header(8, 2, 0, 0)), kDefaultMaxFrameBytes, &h)) ==
        ErrorCode::malformed);
  CHECK(code_of(decode_header(bytes_of(header(8, 2, 7, 0)), kDefaultMaxFrameBytes, &h)) ==
        ErrorCode::malformed);
  CHECK(code_of(decode_header(bytes_of(header(8, 2, 4, 1)), kDefaultMaxFrameBytes, &h)) ==
        ErrorCode::malformed);
  const std::string full = header(8, 2, 4, 0);
  for (std::size_t n = 0; n < kHeaderBytes; ++n) {
    CHECK(code_of(decode_header(bytes_of(full).first(n), kDefaultMaxFrameBytes, &h)) ==
          ErrorCode::malformed);
  }
}

TEST_CASE("protocol: a version-1 peer is refused in words it can read: ERROR keeps its layout") {
  // A version-1 HELLO's header: refused by version, with its length and sequence read, so a
  // server can skip the frame and answer to its sequence.
  FrameHeader h;
  const Verdict v =
      decode_header(bytes_of(Bytes{}.u32(60).u8(1).u8(1).u16(0).u32(77).s), kMinMaxFrameBytes, &h);
  CHECK(code_of(v) == ErrorCode::unsupported_version);
  CHECK(v.error().message ==
        "frame header: protocol version 1 is not supported: this side speaks version 2");
  CHECK(h.version == 1);
  CHECK(h.length == 60);
  CHECK(h.sequence == 77);

  // The refusal goes out with the old peer's version byte; older versions get their own, newer
  // ones (which read older servers' ERRORs) and nonsense get this one.
  CHECK(error_version_for(1) == 1);
  CHECK(error_version_for(2) == 2);
  CHECK(error_version_for(0) == protocol::kVersion);
  CHECK(error_version_for(3) == protocol::kVersion);
  const ErrorFrame refusal{ErrorCode::unsupported_version, "protocol version 1 is not supported"};
  std::string old_frame, frame;
  encode_error(old_frame, refusal, 77, error_version_for(1));
  encode_error(frame, refusal, 77);
  CHECK(old_frame.substr(0, kHeaderBytes) == Bytes{}.u32(8 + 4 + 35).u8(1).u8(3).u16(0).u32(77).s);
  // Only the version byte differs: the payload is version 1's ERROR (code, length, text).
  CHECK(old_frame.substr(kHeaderBytes) == frame.substr(kHeaderBytes));
  CHECK(old_frame.substr(kHeaderBytes) ==
        Bytes{}.u16(2).u16(35).text("protocol version 1 is not supported").s);
  CHECK(frame[4] == 2);
}

TEST_CASE("protocol: HELLO bytes, round trip, and every truncation refused") {
  const Hello hello = sample_hello();
  std::string frame;
  encode_hello(frame, hello, 9);
  const std::string payload = sample_hello_prefix()
                                  .u8(1)  // dtype u8
                                  .u8(3)  // rank
                                  .u32(4)
                                  .u32(84)
                                  .u32(84)
                                  .u8(0)  // discrete
                                  .u32(6)
                                  .s;
  CHECK(frame ==
        Bytes{}.u32(8 + static_cast<std::uint32_t>(payload.size())).u8(2).u8(1).u16(0).u32(9).s +
            payload);

  Hello back;
  CHECK(decode_hello(payload_of(frame, FrameType::hello), &back).is_ok());
  CHECK(back.token == hello.token);
  CHECK(back.run_id == hello.run_id);
  CHECK(back.num_envs == 3);
  CHECK(back.evaluation);
  CHECK(back.observation == hello.observation);
  CHECK(back.action_spec == ActionSpec::discrete(6));

  for (std::size_t n = 0; n < payload.size(); ++n) {
    Hello h;
    CHECK(code_of(decode_hello(bytes_of(payload).first(n), &h)) == ErrorCode::malformed);
  }
  Hello h;
  CHECK(code_of(decode_hello(bytes_of(payload + "x"), &h)) ==
        ErrorCode::malformed);  // trailing byte
}

TEST_CASE("protocol: HELLO fields out of range are refused") {
  auto hello_payload = [](std::string_view magic, unsigned token_len, std::uint32_t envs,
                          unsigned eval, unsigned dtype, unsigned rank, std::uint32_t dim,
                          std::uint32_t actions) {
    Bytes b;
    b.text(magic)
        .u16(token_len)
        .text(std::string(token_len, 't'))
        .u64(1)
        .u32(envs)
        .u8(eval)
        .u8(dtype)
        .u8(rank);
    for (unsigned i = 0; i < rank; ++i) b.u32(dim);
    return b.u8(0).u32(actions).s;
  };
  Hello h;
  CHECK(decode_hello(bytes_of(hello_payload("SEEDRL01", 3, 2, 0, 0, 1, 4, 2)), &h).is_ok());
  CHECK(code_of(decode_hello(bytes_of(hello_payload("SEEDRL02", 3, 2, 0, 0, 1, 4, 2)), &h)) ==
        ErrorCode::malformed);
  CHECK(code_of(decode_hello(bytes_of(hello_payload("SEEDRL01", 2000, 2, 0, 0, 1, 4, 2)), &h)) ==
        ErrorCode::malformed);
  CHECK(code_of(decode_hello(bytes_of(hello_payload("SEEDRL01", 3, 0, 0, 0, 1, 4, 2)), &h)) ==
        ErrorCode::malformed);
  CHECK(code_of(decode_hello(bytes_of(hello_payload("SEEDRL01", 3, 70000, 0, 0, 1, 4, 2)), &h)) ==
        ErrorCode::malformed);
  CHECK(code_of(decode_hello(bytes_of(hello_payload("SEEDRL01", 3, 2, 2, 0, 1, 4, 2)), &h)) ==
        ErrorCode::malformed);
  CHECK(code_of(decode_hello(bytes_of(hello_payload("SEEDRL01", 3, 2, 0, 3, 1, 4, 2)), &h)) ==
        ErrorCode::malformed);
  CHECK(code_of(decode_hello(bytes_of(hello_payload("SEEDRL01", 3, 2, 0, 0, 7, 4, 2)), &h)) ==
        ErrorCode::malformed);
  CHECK(code_of(decode_hello(bytes_of(hello_payload("SEEDRL01", 3, 2, 0, 0, 1, 0, 2)), &h)) ==
        ErrorCode::malformed);
  // 6 dimensions of 2^31-1 would overflow 64 bits: refused, not wrapped around.
  CHECK(code_of(decode_hello(bytes_of(hello_payload("SEEDRL01", 3, 2, 0, 0, 6, 0x7fffffffu, 2)),
                             &h)) == ErrorCode::malformed);
  CHECK(code_of(decode_hello(bytes_of(hello_payload("SEEDRL01", 3, 2, 0, 0, 1, 4, 0)), &h)) ==
        ErrorCode::malformed);
  CHECK(decode_hello(bytes_of(hello_payload("SEEDRL01", 0, 2, 0, 0, 0, 0, 2)), &h)
            .is_ok());  // scalar obs
  CHECK(h.observation.shape.rank() == 0);
}

TEST_CASE("protocol: WELCOME and ERROR round trip; long messages are cut") {
  std::string frame;
  encode_welcome(
      frame, Welcome{TensorSpec{Shape{4}, DType::f32}, ActionSpec::discrete(2), 17, 1 << 20}, 3);
  CHECK(frame.substr(kHeaderBytes) ==
        Bytes{}.u8(0).u8(1).u32(4).u8(0).u32(2).u32(17).u32(1 << 20).s);
  Welcome w;
  CHECK(decode_welcome(payload_of(frame, FrameType::welcome), &w).is_ok());
  CHECK(w.observation == TensorSpec{Shape{4}, DType::f32});
  CHECK(w.action_spec == ActionSpec::discrete(2));
  CHECK(w.first_slot == 17);
  CHECK(w.max_frame_bytes == 1u << 20);

  frame.clear();
  encode_error(frame, ErrorFrame{ErrorCode::unauthorized, "wrong token"});
  CHECK(frame.substr(kHeaderBytes) == Bytes{}.u16(3).u16(11).text("wrong token").s);
  ErrorFrame e;
  CHECK(decode_error(payload_of(frame, FrameType::error), &e).is_ok());
  CHECK(e.code == ErrorCode::unauthorized);
  CHECK(e.message == "wrong token");
  CHECK(std::string(name(e.code)) == "unauthorized");

  frame.clear();
  encode_error(frame, ErrorFrame{ErrorCode::internal, std::string(5000, 'm')});
  CHECK(decode_error(payload_of(frame, FrameType::error), &e).is_ok());
  CHECK(e.message.size() == kMaxMessageBytes);
  CHECK(max_error_frame_bytes() == frame.size());
  CHECK(code_of(decode_error(bytes_of(Bytes{}.u16(1).u16(10).text("short").s), &e)) ==
        ErrorCode::malformed);
}

TEST_CASE("protocol: STEP bytes put observations on an 8-byte boundary of the payload") {
  const std::vector<float> rewards{1.5f, -2.0f, 0.0f};
  const std::vector<std::uint8_t> flags{step_flags::kFirst, 0, step_flags::kTruncated};
  std::vector<std::uint8_t> observations(3 * 5);
  for (std::size_t i = 0; i < observations.size(); ++i)
    observations[i] = static_cast<std::uint8_t>(i * 7);
  std::string frame;
  encode_step(frame, 42, rewards, flags, observations);

  const StepLayout layout = step_layout(3, 5);
  CHECK(layout.rewards_offset == 4);
  CHECK(layout.flags_offset == 16);
  CHECK(layout.observations_offset == 24);  // 4 + 12 + 3 = 19, padded to 24
  CHECK(layout.payload_bytes == 39);
  CHECK(layout.frame_bytes == frame.size());
  CHECK(step_layout(1, 5).observations_offset == 16);  // 4 + 4 + 1 = 9, padded to 16
  CHECK(step_layout(4, 5).observations_offset == 24);  // 4 + 16 + 4 = 24
  const std::string payload = Bytes{}
                                  .u32(3)
                                  .f32(1.5f)
                                  .f32(-2.0f)
                                  .f32(0.0f)
                                  .u8(1)
                                  .u8(0)
                                  .u8(4)
                                  .u8(0)
                                  .u8(0)
                                  .u8(0)
                                  .u8(0)
                                  .u8(0)
                                  .text(std::string(observations.begin(), observations.end()))
                                  .s;
  CHECK(frame.substr(kHeaderBytes) == payload);
  CHECK(frame.substr(0, kHeaderBytes) == Bytes{}.u32(8 + 39).u8(2).u8(4).u16(0).u32(42).s);

  StepView view;
  CHECK(decode_step(payload_of(frame, FrameType::step), 3, 5, &view).is_ok());
  CHECK(view.num_envs == 3);
  CHECK(view.reward(0) == 1.5f);
  CHECK(view.reward(1) == -2.0f);
  CHECK(view.flags[2] == step_flags::kTruncated);
  CHECK(view.observations - payload_of(frame, FrameType::step).data() == 24);
  CHECK(std::memcmp(view.observations, observations.data(), observations.size()) == 0);
}

TEST_CASE("protocol: a bad STEP is refused") {
  std::vector<float> rewards{1.0f, 2.0f};
  std::vector<std::uint8_t> flags{0, 0};
  const std::vector<std::uint8_t> observations(2 * 16, 3);
  auto payload = [&] {
    std::string frame;
    encode_step(frame, 0, rewards, flags, observations);
    return frame.substr(kHeaderBytes);
  };
  StepView view;
  CHECK(decode_step(bytes_of(payload()), 2, 16, &view).is_ok());
  // Another environment count than the handshake's; an observation of the wrong size.
  CHECK(code_of(decode_step(bytes_of(payload()), 3, 16, &view)) == ErrorCode::invalid_request);
  CHECK(code_of(decode_step(bytes_of(payload()), 2, 15, &view)) == ErrorCode::invalid_request);
  CHECK(code_of(decode_step(bytes_of(payload()), 2, 17, &view)) == ErrorCode::invalid_request);
  // Every truncation.
  const std::string good = payload();
  for (std::size_t n = 0; n < good.size(); ++n)
    CHECK_FALSE(decode_step(bytes_of(good).first(n), 2, 16, &view).is_ok());
  // Unknown flag bits, nonzero padding, a non-finite reward.
  flags[1] = 8;
  CHECK(code_of(decode_step(bytes_of(payload()), 2, 16, &view)) == ErrorCode::malformed);
  flags[1] = 0;
  std::string padded = payload();
  padded[4 + 8 + 2] = 1;
  CHECK(code_of(decode_step(bytes_of(padded), 2, 16, &view)) == ErrorCode::malformed);
  rewards[0] = std::numeric_limits<float>::quiet_NaN();
  CHECK(code_of(decode_step(bytes_of(payload()), 2, 16, &view)) == ErrorCode::invalid_request);
  rewards[0] = std::numeric_limits<float>::infinity();
  CHECK(code_of(decode_step(bytes_of(payload()), 2, 16, &view)) == ErrorCode::invalid_request);
  // A STEP of no environments (found by fuzz_protocol: no encoder can write one).
  const std::uint8_t empty[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  CHECK(code_of(decode_step(empty, 0, 16, &view)) == ErrorCode::malformed);
}

TEST_CASE("protocol: ACTIONS round trip and range checks; GOODBYE is a bare header") {
  std::string frame;
  const std::vector<std::int32_t> actions{0, 5, 2};
  encode_actions(frame, 7, actions);
  CHECK(frame.substr(kHeaderBytes) == Bytes{}.u32(3).u32(0).u32(5).u32(2).s);
  CHECK(actions_frame_bytes(3) == frame.size());
  std::vector<std::int32_t> back(3, -1);
  CHECK(decode_actions(payload_of(frame, FrameType::actions), 6, back).is_ok());
  CHECK(back == actions);
  CHECK(code_of(decode_actions(payload_of(frame, FrameType::actions), 5, back)) ==
        ErrorCode::malformed);
  std::vector<std::int32_t> two(2);
  CHECK(code_of(decode_actions(payload_of(frame, FrameType::actions), 6, two)) ==
        ErrorCode::malformed);
  const std::string negative = Bytes{}.u32(1).u32(0xffffffffu).s;
  std::vector<std::int32_t> one(1);
  CHECK(code_of(decode_actions(bytes_of(negative), 6, one)) == ErrorCode::malformed);
  const std::string good = frame.substr(kHeaderBytes);
  for (std::size_t n = 0; n < good.size(); ++n)
    CHECK_FALSE(decode_actions(bytes_of(good).first(n), 6, back).is_ok());

  frame.clear();
  encode_goodbye(frame, 4);
  CHECK(frame == Bytes{}.u32(8).u8(2).u8(6).u16(0).u32(4).s);
}

TEST_CASE("protocol: a box HELLO and WELCOME carry the kind, D, the lower and the upper bounds") {
  Hello hello = sample_hello();
  hello.observation = TensorSpec{Shape{3}, DType::f32};
  hello.action_spec = kBox;
  std::string frame;
  encode_hello(frame, hello, 4);
  const std::string payload = sample_hello_prefix()
                                  .u8(0)  // dtype f32
                                  .u8(1)  // rank
                                  .u32(3)
                                  .u8(1)  // box
                                  .u32(2)
                                  .f32(-2.0f)
                                  .f32(-0.5f)
                                  .f32(2.0f)
                                  .f32(1.5f)
                                  .s;
  CHECK(frame.substr(kHeaderBytes) == payload);
  Hello back;
  REQUIRE(decode_hello(payload_of(frame, FrameType::hello), &back).is_ok());
  CHECK(back.action_spec == kBox);
  CHECK(back.action_spec.is_box());
  CHECK(back.observation == hello.observation);
  for (std::size_t n = 0; n < payload.size(); ++n) {
    Hello h;
    CHECK(code_of(decode_hello(bytes_of(payload).first(n), &h)) == ErrorCode::malformed);
  }
  CHECK(code_of(decode_hello(bytes_of(payload + "x"), &back)) == ErrorCode::malformed);

  frame.clear();
  encode_welcome(frame, Welcome{TensorSpec{Shape{3}, DType::f32}, kBox, 5, 1 << 20}, 4);
  const std::string welcome_payload = Bytes{}
                                          .u8(0)
                                          .u8(1)
                                          .u32(3)
                                          .u8(1)
                                          .u32(2)
                                          .f32(-2.0f)
                                          .f32(-0.5f)
                                          .f32(2.0f)
                                          .f32(1.5f)
                                          .u32(5)
                                          .u32(1 << 20)
                                          .s;
  CHECK(frame.substr(kHeaderBytes) == welcome_payload);
  Welcome w;
  REQUIRE(decode_welcome(payload_of(frame, FrameType::welcome), &w).is_ok());
  CHECK(w.action_spec == kBox);
  CHECK(w.first_slot == 5);
  CHECK(w.max_frame_bytes == 1u << 20);
  for (std::size_t n = 0; n < welcome_payload.size(); ++n) {
    Welcome x;
    CHECK(code_of(decode_welcome(bytes_of(welcome_payload).first(n), &x)) == ErrorCode::malformed);
  }

  // The widest box with the longest token still fits a handshake frame.
  hello.token.assign(kMaxTokenBytes, 't');
  hello.observation = TensorSpec{Shape{2, 2, 2, 2, 2, 2}, DType::u8};
  hello.action_spec = ActionSpec::box(static_cast<std::int32_t>(kMaxActionDims), -1.0f, 1.0f);
  frame.clear();
  encode_hello(frame, hello);
  CHECK(frame.size() <= kMinMaxFrameBytes);
  FrameHeader header;
  CHECK(decode_header(bytes_of(frame), kMinMaxFrameBytes, &header).is_ok());
  CHECK(decode_hello(payload_of(frame, FrameType::hello), &back).is_ok());
  CHECK(back.action_spec == hello.action_spec);
}

TEST_CASE("protocol: an action spec that is no discrete count or valid box is refused by name") {
  // A WELCOME for observations f32[1] and the action spec `spec` (its bytes after the kind).
  auto welcome_with = [](unsigned kind, const std::string& spec) {
    return Bytes{}.u8(0).u8(1).u32(1).u8(kind).text(spec).u32(0).u32(4096).s;
  };
  auto box = [](std::uint32_t dims, std::vector<float> low, std::vector<float> high) {
    Bytes b;
    b.u32(dims);
    for (float v : low) b.f32(v);
    for (float v : high) b.f32(v);
    return b.s;
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    const char* what;
    std::string payload;
    const char* message;
  };
  const Case cases[] = {
      {"unknown kind", welcome_with(2, Bytes{}.u32(3).s), "unknown action kind 2"},
      {"0 discrete actions", welcome_with(0, Bytes{}.u32(0).s), "0 discrete actions"},
      {"2^31 discrete actions", welcome_with(0, Bytes{}.u32(0x80000000u).s), "discrete actions"},
      {"a box of 0 dimensions", welcome_with(1, box(0, {}, {})), "a box action of 0 dimensions"},
      {"a box of too many", welcome_with(1, box(kMaxActionDims + 1, {}, {})),
       "a box action of 257 dimensions"},
      {"a box of 2^32-1", welcome_with(1, box(0xffffffffu, {}, {})), "4294967295 dimensions"},
      {"a NaN lower bound", welcome_with(1, box(2, {0.0f, nan}, {1.0f, 1.0f})),
       "box dimension 1 has a non-finite bound"},
      {"an infinite upper bound", welcome_with(1, box(1, {0.0f}, {inf})),
       "box dimension 0 has a non-finite bound"},
      {"-inf", welcome_with(1, box(1, {-inf}, {0.0f})), "non-finite bound"},
      {"low == high", welcome_with(1, box(2, {0.0f, 1.0f}, {1.0f, 1.0f})),
       "box dimension 1 has bounds [1, 1]"},
      {"low > high", welcome_with(1, box(1, {2.0f}, {-2.0f})),
       "box dimension 0 has bounds [2, -2]"},
      {"bounds cut short", Bytes{}.u8(0).u8(1).u32(1).u8(1).text(box(2, {0.0f, 0.0f}, {1.0f})).s,
       "ends before its box bounds"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    Welcome w;
    const Verdict v = decode_welcome(bytes_of(c.payload), &w);
    CHECK(code_of(v) == ErrorCode::malformed);
    CHECK(v.error().message.find(c.message) != std::string::npos);
    CHECK(v.error().message.find("WELCOME") != std::string::npos);
  }
  // The same decoder reads HELLO's spec, and names that frame.
  Hello h;
  std::string hello = Bytes{}.text("SEEDRL01").u16(0).u64(1).u32(1).u8(0).u8(0).u8(1).u32(1).s;
  const Verdict v =
      decode_hello(bytes_of(hello + Bytes{}.u8(1).text(box(1, {1.0f}, {0.0f})).s), &h);
  CHECK(code_of(v) == ErrorCode::malformed);
  CHECK(v.error().message.find("HELLO frame: box dimension 0 has bounds [1, 0]") !=
        std::string::npos);
  CHECK(decode_hello(bytes_of(hello + Bytes{}.u8(1).text(box(1, {0.0f}, {1.0f})).s), &h).is_ok());
  CHECK(h.action_spec == ActionSpec::box(1, 0.0f, 1.0f));
}

TEST_CASE("protocol: box ACTIONS are rows of D floats, each finite and within its bounds") {
  const std::vector<float> rows{-2.0f, 1.5f, 0.25f, -0.5f, 2.0f, 0.0f};  // 3 environments x 2
  std::string frame;
  encode_box_actions(frame, 7, rows, 2);
  CHECK(frame.substr(kHeaderBytes) ==
        Bytes{}.u32(3).f32(-2.0f).f32(1.5f).f32(0.25f).f32(-0.5f).f32(2.0f).f32(0.0f).s);
  CHECK(actions_frame_bytes(3, kBox) == frame.size());
  CHECK(actions_frame_bytes(3, ActionSpec::discrete(4)) == actions_frame_bytes(3));
  CHECK(check_box_actions(kBox, rows).is_ok());
  std::vector<float> back(6, 99.0f);
  REQUIRE(decode_box_actions(payload_of(frame, FrameType::actions), kBox, back).is_ok());
  CHECK(back == rows);  // the bounds themselves are inside

  const std::string good = frame.substr(kHeaderBytes);
  // Every truncation; a trailing value; another environment count than expected.
  for (std::size_t n = 0; n < good.size(); ++n)
    CHECK(code_of(decode_box_actions(bytes_of(good).first(n), kBox, back)) == ErrorCode::malformed);
  const Verdict longer = decode_box_actions(bytes_of(good + Bytes{}.f32(0.0f).s), kBox, back);
  CHECK(code_of(longer) == ErrorCode::malformed);
  CHECK(longer.error().message.find("28 bytes of box actions") != std::string::npos);
  std::vector<float> two_rows(4);
  const Verdict fewer = decode_box_actions(bytes_of(good), kBox, two_rows);
  CHECK(code_of(fewer) == ErrorCode::malformed);
  CHECK(fewer.error().message.find("for 3 environments, expected 2") != std::string::npos);

  // A value that is NaN, infinite, or outside its own dimension's bounds (1.9 fits dimension 0,
  // not dimension 1).
  auto with_value = [&](std::size_t i, float value) {
    std::vector<float> v = rows;
    v[i] = value;
    std::string f;
    encode_box_actions(f, 7, v, 2);
    return f.substr(kHeaderBytes);
  };
  struct Bad {
    std::size_t index;
    float value;
    const char* message;
  };
  const Bad bad[] = {
      {0, std::numeric_limits<float>::quiet_NaN(), "environment 0, dimension 0"},
      {3, std::numeric_limits<float>::infinity(), "environment 1, dimension 1"},
      {4, -std::numeric_limits<float>::infinity(), "environment 2, dimension 0"},
      {1, 1.9f, "box action 1.9 for environment 0, dimension 1 is outside [-0.5, 1.5]"},
      {4, 2.001f, "environment 2, dimension 0 is outside [-2, 2]"},
      {2, -2.5f, "environment 1, dimension 0"},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.message);
    const std::string payload = with_value(b.index, b.value);
    const Verdict v = decode_box_actions(bytes_of(payload), kBox, back);
    CHECK(code_of(v) == ErrorCode::malformed);
    CHECK(v.error().message.find(b.message) != std::string::npos);
    std::vector<float> values = rows;
    values[b.index] = b.value;
    CHECK(code_of(check_box_actions(kBox, values)) == ErrorCode::malformed);
  }
  // A caller that asks for box actions of a discrete spec or a partial row is told so (no throw).
  CHECK_FALSE(decode_box_actions(bytes_of(good), ActionSpec::discrete(3), back).is_ok());
  std::vector<float> five(5);
  CHECK_FALSE(decode_box_actions(bytes_of(good), kBox, five).is_ok());
}

TEST_CASE("protocol: encoders refuse what the format cannot carry") {
  std::string out;
  Hello hello = sample_hello();
  hello.token.assign(kMaxTokenBytes + 1, 'x');
  CHECK_THROWS_AS(encode_hello(out, hello), Error);
  hello = sample_hello();
  hello.action_spec = ActionSpec::box(static_cast<std::int32_t>(kMaxActionDims) + 1, -1.0f, 1.0f);
  CHECK_THROWS_WITH_AS(encode_hello(out, hello), doctest::Contains("257 dimensions"), Error);
  hello.action_spec = ActionSpec::box({0.0f}, {std::numeric_limits<float>::quiet_NaN()});
  CHECK_THROWS_AS(encode_hello(out, hello), Error);
  hello.action_spec = ActionSpec{};  // no actions at all
  CHECK_THROWS_AS(encode_hello(out, hello), Error);
  Welcome welcome{TensorSpec{Shape{3}, DType::f32}, ActionSpec::box(2, 1.0f, 1.0f), 0, 4096};
  CHECK_THROWS_AS(encode_welcome(out, welcome), Error);  // low == high
  const std::vector<float> five(5, 0.0f);
  CHECK_THROWS_AS(encode_box_actions(out, 0, five, 2), Error);  // not rows of 2
  CHECK_THROWS_AS(encode_box_actions(out, 0, five, 0), Error);
  const std::vector<float> rewards{1.0f};
  const std::vector<std::uint8_t> flags{0, 0};
  CHECK_THROWS_AS(encode_step(out, 0, rewards, flags, {}), Error);
}

TEST_CASE("protocol: tokens_equal compares whole tokens") {
  CHECK(tokens_equal("", ""));
  CHECK(tokens_equal("abc", "abc"));
  CHECK_FALSE(tokens_equal("abc", "abd"));
  CHECK_FALSE(tokens_equal("abc", "ab"));
  CHECK_FALSE(tokens_equal("ab", "abc"));
  CHECK_FALSE(tokens_equal("", "a"));
  CHECK_FALSE(tokens_equal(std::string("a\0b", 3), std::string("a\0c", 3)));
}

}  // namespace test_protocol
