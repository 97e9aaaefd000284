// What the wire codec's version 2 added: box action specs in HELLO and WELCOME and rows of floats
// in ACTIONS (exact bytes, round trips, every refusal). The frames common to every version are
// test_protocol.cpp; version 3's step fields and the refusal of older peers, test_protocol_v3.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "seedrl/transport/protocol.hpp"
#include "support/protocol_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_protocol_v2 {

using namespace seedrl;
using namespace seedrl::protocol;
using namespace seedrl::test;

TEST_CASE("protocol: a box HELLO and WELCOME carry the kind, D, the lower and the upper bounds") {
  Hello hello = sample_hello();
  hello.spec.observation = TensorSpec{Shape{3}, DType::f32};
  hello.spec.action = kBox;
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
                                  .u8(0)  // no declared fields
                                  .s;
  CHECK(frame.substr(kHeaderBytes) == payload);
  Hello back;
  REQUIRE(decode_hello(payload_of(frame, FrameType::hello), &back).is_ok());
  CHECK(back.spec.action == kBox);
  CHECK(back.spec.action.is_box());
  CHECK(back.spec.observation == hello.spec.observation);
  for (std::size_t n = 0; n < payload.size(); ++n) {
    Hello h;
    CHECK(code_of(decode_hello(bytes_of(payload).first(n), &h)) == ErrorCode::malformed);
  }
  CHECK(code_of(decode_hello(bytes_of(payload + "x"), &back)) == ErrorCode::malformed);

  frame.clear();
  encode_welcome(frame, Welcome{StepSpec{TensorSpec{Shape{3}, DType::f32}, kBox, {}}, 5, 1 << 20},
                 4);
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
                                          .u8(0)
                                          .u32(5)
                                          .u32(1 << 20)
                                          .s;
  CHECK(frame.substr(kHeaderBytes) == welcome_payload);
  Welcome w;
  REQUIRE(decode_welcome(payload_of(frame, FrameType::welcome), &w).is_ok());
  CHECK(w.spec.action == kBox);
  CHECK(w.first_slot == 5);
  CHECK(w.max_frame_bytes == 1u << 20);
  for (std::size_t n = 0; n < welcome_payload.size(); ++n) {
    Welcome x;
    CHECK(code_of(decode_welcome(bytes_of(welcome_payload).first(n), &x)) == ErrorCode::malformed);
  }

  // The widest box with the longest token still fits a handshake frame.
  hello.token.assign(kMaxTokenBytes, 't');
  hello.spec.observation = TensorSpec{Shape{2, 2, 2, 2, 2, 2}, DType::u8};
  hello.spec.action = ActionSpec::box(static_cast<std::int32_t>(kMaxActionDims), -1.0f, 1.0f);
  frame.clear();
  encode_hello(frame, hello);
  CHECK(frame.size() <= kMinMaxFrameBytes);
  FrameHeader header;
  CHECK(decode_header(bytes_of(frame), kMinMaxFrameBytes, &header).is_ok());
  CHECK(decode_hello(payload_of(frame, FrameType::hello), &back).is_ok());
  CHECK(back.spec.action == hello.spec.action);
}

TEST_CASE("protocol: an action spec that is no discrete count or valid box is refused by name") {
  // A WELCOME for observations f32[1] and the action spec `spec` (its bytes after the kind).
  auto welcome_with = [](unsigned kind, const std::string& spec) {
    return Bytes{}.u8(0).u8(1).u32(1).u8(kind).text(spec).u8(0).u32(0).u32(4096).s;
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
      {"unknown kind", welcome_with(3, Bytes{}.u32(3).s), "unknown action kind 3"},
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
  CHECK(decode_hello(bytes_of(hello + Bytes{}.u8(1).text(box(1, {0.0f}, {1.0f})).u8(0).s), &h)
            .is_ok());
  CHECK(h.spec.action == ActionSpec::box(1, 0.0f, 1.0f));
}

TEST_CASE("protocol: box ACTIONS are rows of D floats, each finite and within its bounds") {
  const std::vector<float> rows{-2.0f, 1.5f, 0.25f, -0.5f, 2.0f, 0.0f};  // 3 environments x 2
  std::string frame;
  encode_box_actions(frame, 7, rows, 2);
  CHECK(frame.substr(kHeaderBytes) ==
        Bytes{}.u32(3).f32(-2.0f).f32(1.5f).f32(0.25f).f32(-0.5f).f32(2.0f).f32(0.0f).s);
  CHECK(actions_frame_bytes(3, kBox) == frame.size());
  CHECK(actions_frame_bytes(3, ActionSpec::discrete(4)) == actions_frame_bytes(3));
  std::vector<float> back(6, 99.0f);
  std::vector<float> sent = rows;
  std::string checked;
  REQUIRE(encode_actions(checked, 7, kBox, sent).is_ok());  // the checked encoder: same bytes
  CHECK(checked == frame);
  REQUIRE(decode_actions(payload_of(frame, FrameType::actions), kBox, back).is_ok());
  CHECK(back == rows);  // the bounds themselves are inside

  const std::string good = frame.substr(kHeaderBytes);
  // Every truncation; a trailing value; another environment count than expected.
  for (std::size_t n = 0; n < good.size(); ++n)
    CHECK(code_of(decode_actions(bytes_of(good).first(n), kBox, back)) == ErrorCode::malformed);
  const Verdict longer = decode_actions(bytes_of(good + Bytes{}.f32(0.0f).s), kBox, back);
  CHECK(code_of(longer) == ErrorCode::malformed);
  CHECK(longer.error().message.find("28 bytes of box actions") != std::string::npos);
  std::vector<float> two_rows(4);
  const Verdict fewer = decode_actions(bytes_of(good), kBox, two_rows);
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
    const Verdict v = decode_actions(bytes_of(payload), kBox, back);
    CHECK(code_of(v) == ErrorCode::malformed);
    CHECK(v.error().message.find(b.message) != std::string::npos);
    // The checked encoder refuses it the same way and appends nothing.
    std::vector<float> values = rows;
    values[b.index] = b.value;
    std::string out = "kept";
    const Verdict refused = encode_actions(out, 7, kBox, values);
    CHECK(code_of(refused) == ErrorCode::malformed);
    CHECK(refused.error().message.find(b.message) != std::string::npos);
    CHECK(out == "kept");
  }
  // A caller that brings box room for a discrete spec, discrete room for a box, or a partial
  // row is told so (internal: its own buffers are wrong; no throw), both ways.
  const Verdict kind = decode_actions(bytes_of(good), ActionSpec::discrete(3), back);
  CHECK(code_of(kind) == ErrorCode::internal);
  CHECK(kind.error().message.find("discrete actions need room for 6 values") != std::string::npos);
  std::vector<std::int32_t> discrete(6);
  CHECK(code_of(decode_actions(bytes_of(good), kBox, discrete)) == ErrorCode::internal);
  std::string out;
  CHECK(code_of(encode_actions(out, 7, kBox, discrete)) == ErrorCode::internal);
  std::vector<float> five(5);
  CHECK(code_of(decode_actions(bytes_of(good), kBox, five)) == ErrorCode::internal);
  CHECK(code_of(encode_actions(out, 7, kBox, five)) == ErrorCode::internal);
  CHECK(out.empty());
}

}  // namespace test_protocol_v2
