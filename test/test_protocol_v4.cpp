// What the wire codec's version 4 added: a legal-action mask (the step field "action_mask", u8
// [A]) travels as bits, ceil(A / 8) bytes per environment (exact bytes, round trips), a mask that
// sets a bit beyond its actions is refused as malformed, and other u8 fields still travel as bytes;
// action branches in the handshake (action kind 2) and K actions per environment in ACTIONS.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "seedrl/transport/protocol.hpp"
#include "support/protocol_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_protocol_v4 {

using namespace seedrl;
using namespace seedrl::protocol;
using namespace seedrl::test;

TEST_CASE("protocol: a mask packs into bits, action j at bit j % 8 of byte j / 8, and back") {
  // Two rows of 10 actions: 2 bytes each, the 6 high bits of the second byte unused.
  const std::vector<std::uint8_t> values{1, 0, 1, 1, 0, 0, 0, 0, 1, 1,   //
                                         0, 0, 0, 0, 0, 0, 0, 7, 0, 1};  // any non-zero is legal
  std::vector<std::uint8_t> bits(4, 0xff);
  pack_bits(values, 10, bits);
  CHECK(bits == std::vector<std::uint8_t>{0b00001101, 0b00000011, 0b10000000, 0b00000010});
  std::vector<std::uint8_t> back(20, 9);
  unpack_bits(bits, 10, back);
  for (std::size_t i = 0; i < values.size(); ++i) {
    CAPTURE(i);
    CHECK(back[i] == (values[i] != 0 ? 1 : 0));
  }
  // Exactly 8 actions: one byte a row, no unused bits.
  std::vector<std::uint8_t> eight(8, 1), one(1);
  pack_bits(eight, 8, one);
  CHECK(one[0] == 0xff);
  CHECK_THROWS_WITH_AS(pack_bits(values, 10, std::span(bits).first(3)),
                       doctest::Contains("20 values in rows of 10 into 3 bytes"), Error);
}

TEST_CASE("protocol: a STEP carries the mask as bits; other u8 fields as bytes") {
  StepSpec spec;
  spec.observation = {{2}, DType::f32};
  spec.action = ActionSpec::discrete(10);
  spec.fields = {{"player", {{}, DType::i32}},
                 {kActionMaskField, {{10}, DType::u8}},
                 {"mask", {{10}, DType::u8}}};  // a u8 field of another name: bytes
  CHECK(travels_as_bits(spec.fields[1]));
  CHECK_FALSE(travels_as_bits(spec.fields[2]));
  const StepLayout layout = step_layout(3, spec);
  CHECK(layout.field_bytes[0] == 4);
  CHECK(layout.field_bytes[1] == 2);
  CHECK(layout.field_bits[1] == 10);
  CHECK(layout.field_bytes[2] == 10);
  CHECK(layout.field_bits[2] == 0);
  // 3 environments: rewards and flags 4 + 12 + 3 -> 24; observations 24 -> 48; players 12 -> 60;
  // the mask's 6 bytes from 64 -> 70; the bytes field's 30 from 72 -> 102.
  CHECK(layout.field_offsets[1] == 64);
  CHECK(layout.payload_bytes == 102);

  const std::vector<float> rewards{0.0f, 1.0f, 2.0f};
  const std::vector<std::uint8_t> flags{0, 0, 0};
  const std::vector<std::uint8_t> observations(3 * 8, 0);
  const std::vector<std::uint8_t> players(12, 0), byte_masks(30, 1);
  std::vector<std::uint8_t> mask_values(30, 0), mask_bits(6);
  mask_values[0] = mask_values[13] = mask_values[29] = 1;
  pack_bits(mask_values, 10, mask_bits);
  const std::span<const std::uint8_t> fields[] = {players, mask_bits, byte_masks};
  std::string frame;
  encode_step(frame, 5, rewards, flags, observations, fields);
  StepView view;
  REQUIRE(decode_step(payload_of(frame, FrameType::step), layout, &view).is_ok());
  std::vector<std::uint8_t> received(30);
  unpack_bits({view.fields[1], 6}, 10, received);
  CHECK(received == mask_values);

  // A bit past environment 2's 10 actions: malformed, naming the environment and the field.
  mask_bits[5] |= 0x04;
  frame.clear();
  encode_step(frame, 5, rewards, flags, observations, fields);
  const Verdict v = decode_step(payload_of(frame, FrameType::step), layout, &view);
  CHECK(code_of(v) == ErrorCode::malformed);
  CHECK(v.error().message ==
        "STEP frame: environment 2's declared field 1 (a legal-action mask of "
        "10 actions, sent as bits) sets bits beyond its actions");
  // The same mask sent as bytes (a version 3 peer would) does not fit the layout.
  const std::span<const std::uint8_t> as_bytes[] = {players, mask_values, byte_masks};
  frame.clear();
  encode_step(frame, 5, rewards, flags, observations, as_bytes);
  CHECK(code_of(decode_step(payload_of(frame, FrameType::step), layout, &view)) ==
        ErrorCode::invalid_request);
}

TEST_CASE("protocol: action branches in HELLO and WELCOME, and K actions per environment") {
  Hello hello = sample_hello();
  hello.spec.observation = TensorSpec{Shape{3}, DType::f32};
  hello.spec.action = ActionSpec::branched({3, 2, 4});
  std::string frame;
  encode_hello(frame, hello, 4);
  const std::string payload =
      sample_hello_prefix().u8(0).u8(1).u32(3).u8(2).u32(3).u32(3).u32(2).u32(4).u8(0).s;
  CHECK(frame.substr(kHeaderBytes) == payload);
  Hello back;
  REQUIRE(decode_hello(payload_of(frame, FrameType::hello), &back).is_ok());
  CHECK(back.spec == hello.spec);
  for (std::size_t n = 0; n < payload.size(); ++n) {
    Hello h;
    CHECK(code_of(decode_hello(bytes_of(payload).first(n), &h)) == ErrorCode::malformed);
  }
  // Branches that break the rules are refused by name, never thrown.
  auto hello_with = [](const std::string& branches) {
    return sample_hello_prefix().u8(0).u8(1).u32(3).u8(2).text(branches).u8(0).s;
  };
  const std::pair<std::string, const char*> bad[] = {
      {Bytes{}.u32(1).u32(5).s, "1 action branches (must be 2 to 64)"},
      {Bytes{}.u32(65).s, "65 action branches"},
      {Bytes{}.u32(2).u32(3).u32(0).s, "action branch 1 has 0 actions"},
      {Bytes{}.u32(2).u32(0x7fffffffu).u32(1).s, "2^31 - 1 in all at most"},
  };
  for (const auto& [branches, expected] : bad) {
    const char* message = expected;  // clang 14 captures no structured binding (CAPTURE's lambda)
    CAPTURE(message);
    Hello h;
    const Verdict v = decode_hello(bytes_of(hello_with(branches)), &h);
    CHECK(code_of(v) == ErrorCode::malformed);
    CHECK(v.error().message.find(message) != std::string::npos);
  }

  // ACTIONS: 2 environments x 3 branches, value i within branch i % 3.
  const ActionSpec& spec = hello.spec.action;
  CHECK(actions_frame_bytes(2, spec) == kHeaderBytes + 4 + 24);
  const std::vector<std::int32_t> actions{2, 1, 3, 0, 0, 1};
  frame.clear();
  encode_actions(frame, 9, actions);
  CHECK(frame.size() == actions_frame_bytes(2, spec));
  std::vector<std::int32_t> received(6, -1);
  REQUIRE(decode_actions(payload_of(frame, FrameType::actions), spec, received).is_ok());
  CHECK(received == actions);
  const std::vector<std::int32_t> outside{2, 1, 3, 0, 2, 1};  // branch 1 has 2 actions
  frame.clear();
  encode_actions(frame, 9, outside);
  const Verdict v = decode_actions(payload_of(frame, FrameType::actions), spec, received);
  CHECK(code_of(v) == ErrorCode::malformed);
  CHECK(v.error().message ==
        "ACTIONS frame: action 2 of branch 1 for environment 1 is outside [0, 2)");
  std::vector<std::int32_t> wrong_room(5);
  CHECK(code_of(decode_actions(payload_of(frame, FrameType::actions), spec, wrong_room)) ==
        ErrorCode::internal);

  // The checked encoder: the same bytes for actions within their branches; an action outside its
  // branch (or below 0) refused by name, nothing appended.
  std::vector<std::int32_t> inside = actions;
  std::string checked;
  REQUIRE(encode_actions(checked, 9, spec, inside).is_ok());
  std::string raw;
  encode_actions(raw, 9, actions);
  CHECK(checked == raw);
  std::vector<std::int32_t> too_big = outside;
  std::string out;
  const Verdict refused = encode_actions(out, 9, spec, too_big);
  CHECK(code_of(refused) == ErrorCode::malformed);
  CHECK(refused.error().message ==
        "ACTIONS frame: action 2 of branch 1 for environment 1 is outside [0, 2)");
  std::vector<std::int32_t> negative{0, 0, 0, -1, 0, 0};
  CHECK(code_of(encode_actions(out, 9, spec, negative)) == ErrorCode::malformed);
  std::vector<std::int32_t> plain{0, 3};
  const Verdict count = encode_actions(out, 9, ActionSpec::discrete(3), plain);
  CHECK(count.error().message == "ACTIONS frame: action 3 for environment 1 is outside [0, 3)");
  CHECK(out.empty());
}

}  // namespace test_protocol_v4
