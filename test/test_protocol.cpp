// The wire codec: exact bytes of each frame (as docs/protocol.md lays them out), round trips, and
// a refusing Verdict with the right code for every kind of bad input, including every truncation.
// What version 2 added (box action specs and ACTIONS) is test_protocol_v2.cpp; what version 3
// added (declared step fields, the version refusal) is test_protocol_v3.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "seedrl/experience/unroll.hpp"
#include "seedrl/transport/protocol.hpp"
#include "support/protocol_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_protocol {

using namespace seedrl;
using namespace seedrl::protocol;
using namespace seedrl::test;

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
  CHECK(out == Bytes{}.u32(108).u8(4).u8(4).u16(0).u32(0xa1b2c3d4).s);
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
  CHECK(code_of(decode_header(bytes_of(header(0xffffffffu, 4, 4, 0)), kDefaultMaxFrameBytes, &h)) ==
        ErrorCode::frame_too_large);
  CHECK(code_of(decode_header(bytes_of(header(5000, 4, 4, 0)), 5000, &h)) ==
        ErrorCode::frame_too_large);
  CHECK(decode_header(bytes_of(header(4996, 4, 4, 0)), 5000, &h).is_ok());  // exactly 5000 bytes
  CHECK(code_of(decode_header(bytes_of(header(7, 4, 4, 0)), kDefaultMaxFrameBytes, &h)) ==
        ErrorCode::malformed);
  for (unsigned version : {0u, 1u, 2u, 3u, 5u, 255u}) {
    CAPTURE(version);
    const Verdict v = decode_header(bytes_of(header(8, version, 4, 0)), kDefaultMaxFrameBytes, &h);
    CHECK(code_of(v) == ErrorCode::unsupported_version);
    CHECK(v.error().message.find(str_cat("version ", version, " is not supported")) !=
          std::string::npos);
    CHECK(v.error().message.find("version 4") != std::string::npos);
  }
  CHECK(code_of(decode_header(bytes_of(header(8, 4, 0, 0)), kDefaultMaxFrameBytes, &h)) ==
        ErrorCode::malformed);
  CHECK(code_of(decode_header(bytes_of(header(8, 4, 7, 0)), kDefaultMaxFrameBytes, &h)) ==
        ErrorCode::malformed);
  CHECK(code_of(decode_header(bytes_of(header(8, 4, 4, 1)), kDefaultMaxFrameBytes, &h)) ==
        ErrorCode::malformed);
  const std::string full = header(8, 4, 4, 0);
  for (std::size_t n = 0; n < kHeaderBytes; ++n) {
    CHECK(code_of(decode_header(bytes_of(full).first(n), kDefaultMaxFrameBytes, &h)) ==
          ErrorCode::malformed);
  }
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
                                  .u8(0)  // no declared fields
                                  .s;
  CHECK(frame ==
        Bytes{}.u32(8 + static_cast<std::uint32_t>(payload.size())).u8(4).u8(1).u16(0).u32(9).s +
            payload);

  Hello back;
  CHECK(decode_hello(payload_of(frame, FrameType::hello), &back).is_ok());
  CHECK(back.token == hello.token);
  CHECK(back.run_id == hello.run_id);
  CHECK(back.num_envs == 3);
  CHECK(back.evaluation);
  CHECK(back.spec.observation == hello.spec.observation);
  CHECK(back.spec.action == ActionSpec::discrete(6));

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
    return b.u8(0).u32(actions).u8(0).s;
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
  CHECK(h.spec.observation.shape.rank() == 0);
}

TEST_CASE("protocol: WELCOME and ERROR round trip; long messages are cut") {
  std::string frame;
  encode_welcome(
      frame,
      Welcome{StepSpec{TensorSpec{Shape{4}, DType::f32}, ActionSpec::discrete(2), {}}, 17, 1 << 20},
      3);
  CHECK(frame.substr(kHeaderBytes) ==
        Bytes{}.u8(0).u8(1).u32(4).u8(0).u32(2).u8(0).u32(17).u32(1 << 20).s);
  Welcome w;
  CHECK(decode_welcome(payload_of(frame, FrameType::welcome), &w).is_ok());
  CHECK(w.spec.observation == TensorSpec{Shape{4}, DType::f32});
  CHECK(w.spec.action == ActionSpec::discrete(2));
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
  CHECK(frame.substr(0, kHeaderBytes) == Bytes{}.u32(8 + 39).u8(4).u8(4).u16(0).u32(42).s);

  StepView view;
  CHECK(decode_step(payload_of(frame, FrameType::step), step_layout(3, 5), &view).is_ok());
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
  CHECK(decode_step(bytes_of(payload()), step_layout(2, 16), &view).is_ok());
  // Another environment count than the handshake's; an observation of the wrong size.
  CHECK(code_of(decode_step(bytes_of(payload()), step_layout(3, 16), &view)) ==
        ErrorCode::invalid_request);
  CHECK(code_of(decode_step(bytes_of(payload()), step_layout(2, 15), &view)) ==
        ErrorCode::invalid_request);
  CHECK(code_of(decode_step(bytes_of(payload()), step_layout(2, 17), &view)) ==
        ErrorCode::invalid_request);
  // Every truncation.
  const std::string good = payload();
  for (std::size_t n = 0; n < good.size(); ++n)
    CHECK_FALSE(decode_step(bytes_of(good).first(n), step_layout(2, 16), &view).is_ok());
  // Unknown flag bits, nonzero padding, a non-finite reward.
  flags[1] = 16;  // 8 is kWaiting
  CHECK(code_of(decode_step(bytes_of(payload()), step_layout(2, 16), &view)) ==
        ErrorCode::malformed);
  flags[1] = 0;
  std::string padded = payload();
  padded[4 + 8 + 2] = 1;
  CHECK(code_of(decode_step(bytes_of(padded), step_layout(2, 16), &view)) == ErrorCode::malformed);
  rewards[0] = std::numeric_limits<float>::quiet_NaN();
  CHECK(code_of(decode_step(bytes_of(payload()), step_layout(2, 16), &view)) ==
        ErrorCode::invalid_request);
  rewards[0] = std::numeric_limits<float>::infinity();
  CHECK(code_of(decode_step(bytes_of(payload()), step_layout(2, 16), &view)) ==
        ErrorCode::invalid_request);
  // A STEP of no environments (found by fuzz_protocol: no encoder can write one).
  const std::uint8_t empty[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  CHECK(code_of(decode_step(empty, step_layout(0, 16), &view)) == ErrorCode::malformed);
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
  CHECK(frame == Bytes{}.u32(8).u8(4).u8(6).u16(0).u32(4).s);
}

TEST_CASE("protocol: encoders refuse what the format cannot carry") {
  std::string out;
  Hello hello = sample_hello();
  hello.token.assign(kMaxTokenBytes + 1, 'x');
  CHECK_THROWS_AS(encode_hello(out, hello), Error);
  hello = sample_hello();
  hello.spec.action = ActionSpec::box(static_cast<std::int32_t>(kMaxActionDims) + 1, -1.0f, 1.0f);
  CHECK_THROWS_WITH_AS(encode_hello(out, hello), doctest::Contains("257 dimensions"), Error);
  hello.spec.action = ActionSpec::box({0.0f}, {std::numeric_limits<float>::quiet_NaN()});
  CHECK_THROWS_AS(encode_hello(out, hello), Error);
  hello.spec.action = ActionSpec{};  // no actions at all
  CHECK_THROWS_AS(encode_hello(out, hello), Error);
  Welcome welcome{StepSpec{TensorSpec{Shape{3}, DType::f32}, ActionSpec::box(2, 1.0f, 1.0f), {}}, 0,
                  4096};
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
