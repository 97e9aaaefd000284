// What the wire codec's version 3 added: declared step fields in HELLO and WELCOME and after the
// observations of every STEP (exact bytes, 8-byte alignment, round trips, every refusal), and the
// refusal of older peers in words they can read.
#include <doctest/doctest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "seedrl/core/step_flags.hpp"
#include "seedrl/transport/protocol.hpp"
#include "support/protocol_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_protocol_v3 {

using namespace seedrl;
using namespace seedrl::protocol;
using namespace seedrl::test;

namespace {

// A mask of 5 bytes and a player id: neither a multiple of 8 bytes, so every region is padded.
const std::vector<StepFieldSpec> kFields = {{"mask", {{5}, DType::u8}},
                                            {"player", {{}, DType::i32}}};

}  // namespace

TEST_CASE("protocol: version 1 to 3 peers are refused in words they can read") {
  for (std::uint8_t old : {std::uint8_t{1}, std::uint8_t{2}, std::uint8_t{3}}) {
    CAPTURE(int{old});
    // An old HELLO's header: refused by version, with its length and sequence read, so that a
    // server can skip the frame and answer to its sequence.
    FrameHeader h;
    const Verdict v = decode_header(bytes_of(Bytes{}.u32(60).u8(old).u8(1).u16(0).u32(77).s),
                                    kMinMaxFrameBytes, &h);
    CHECK(code_of(v) == ErrorCode::unsupported_version);
    CHECK(v.error().message == str_cat("frame header: protocol version ", int{old},
                                       " is not supported: this side speaks version 4"));
    CHECK(h.version == old);
    CHECK(h.length == 60);
    CHECK(h.sequence == 77);
    // The refusal goes out with the old peer's version byte; only that byte differs from this
    // version's ERROR (code, length, text: one layout since version 1).
    CHECK(error_version_for(old) == old);
    const ErrorFrame refusal{ErrorCode::unsupported_version, "protocol version 2 is not supported"};
    std::string old_frame, frame;
    encode_error(old_frame, refusal, 77, error_version_for(old));
    encode_error(frame, refusal, 77);
    CHECK(old_frame.substr(0, kHeaderBytes) ==
          Bytes{}.u32(8 + 4 + 35).u8(old).u8(3).u16(0).u32(77).s);
    CHECK(old_frame.substr(kHeaderBytes) == frame.substr(kHeaderBytes));
    CHECK(frame[4] == 4);
  }
  CHECK(error_version_for(0) == protocol::kVersion);
  CHECK(error_version_for(5) == protocol::kVersion);
}

TEST_CASE("protocol: HELLO and WELCOME list the declared fields: name, dtype, rank, dimensions") {
  Hello hello = sample_hello();
  hello.spec.observation = TensorSpec{Shape{3}, DType::f32};
  hello.spec.fields = kFields;
  std::string frame;
  encode_hello(frame, hello, 4);
  const std::string fields = Bytes{}
                                 .u8(2)  // two fields
                                 .u8(4)
                                 .text("mask")
                                 .u8(1)  // u8
                                 .u8(1)  // rank 1
                                 .u32(5)
                                 .u8(6)
                                 .text("player")
                                 .u8(2)  // i32
                                 .u8(0)  // rank 0
                                 .s;
  const std::string payload = sample_hello_prefix().u8(0).u8(1).u32(3).u8(0).u32(6).text(fields).s;
  CHECK(frame.substr(kHeaderBytes) == payload);
  Hello back;
  REQUIRE(decode_hello(payload_of(frame, FrameType::hello), &back).is_ok());
  CHECK(back.spec == hello.spec);
  for (std::size_t n = 0; n < payload.size(); ++n) {
    Hello h;
    CHECK(code_of(decode_hello(bytes_of(payload).first(n), &h)) == ErrorCode::malformed);
  }

  frame.clear();
  encode_welcome(frame, Welcome{hello.spec, 5, 1 << 20}, 4);
  CHECK(frame.substr(kHeaderBytes) ==
        Bytes{}.u8(0).u8(1).u32(3).u8(0).u32(6).text(fields).u32(5).u32(1 << 20).s);
  Welcome w;
  REQUIRE(decode_welcome(payload_of(frame, FrameType::welcome), &w).is_ok());
  CHECK(w.spec == hello.spec);

  // The most fields, with the longest names and highest ranks, beside the longest token and the
  // widest box, still fit a handshake frame.
  hello.token.assign(kMaxTokenBytes, 't');
  hello.spec.observation = TensorSpec{Shape{2, 2, 2, 2, 2, 2}, DType::u8};
  hello.spec.action = ActionSpec::box(static_cast<std::int32_t>(kMaxActionDims), -1.0f, 1.0f);
  hello.spec.fields.clear();
  for (std::size_t k = 0; k < StepSpec::kMaxFields; ++k) {
    std::string name(StepFieldSpec::kMaxNameBytes, 'f');
    name.back() = static_cast<char>('a' + k);
    hello.spec.fields.push_back({name, {{2, 2, 2, 2}, DType::f32}});
  }
  frame.clear();
  encode_hello(frame, hello);
  CHECK(frame.size() <= kMinMaxFrameBytes);
  REQUIRE(decode_hello(payload_of(frame, FrameType::hello), &back).is_ok());
  CHECK(back.spec == hello.spec);
}

TEST_CASE("protocol: declared fields that break the rules are refused by name, never thrown") {
  // A WELCOME for observations f32[1] and 2 actions whose field list is `fields`.
  auto welcome_with = [](const std::string& fields) {
    return Bytes{}.u8(0).u8(1).u32(1).u8(0).u32(2).text(fields).u32(0).u32(4096).s;
  };
  auto field = [](std::string_view name, unsigned dtype, std::vector<std::uint32_t> dims) {
    Bytes b;
    b.u8(static_cast<unsigned>(name.size()))
        .text(name)
        .u8(dtype)
        .u8(static_cast<unsigned>(dims.size()));
    for (std::uint32_t d : dims) b.u32(d);
    return b.s;
  };
  struct Case {
    const char* what;
    std::string fields;
    const char* message;
  };
  const Case cases[] = {
      {"9 fields", Bytes{}.u8(9).s, "9 step fields (at most 8)"},
      {"a name of 33 bytes", Bytes{}.u8(1).u8(33).text(std::string(33, 'a')).s,
       "a name of 33 bytes"},
      {"an upper-case name", Bytes{}.u8(1).text(field("Mask", 1, {5})).s, "is named 'Mask'"},
      {"an empty name", Bytes{}.u8(1).text(field("", 1, {5})).s, "is named ''"},
      {"a reserved name", Bytes{}.u8(1).text(field("reward", 0, {})).s,
       "'reward' has the name of a part every step has"},
      {"a name twice", Bytes{}.u8(2).text(field("m", 1, {1})).text(field("m", 1, {2})).s,
       "'m' is declared twice"},
      {"rank 5", Bytes{}.u8(1).text(field("m", 1, {1, 1, 1, 1, 1})).s, "has rank 5; at most 4"},
      {"2 MiB a step", Bytes{}.u8(1).text(field("m", 1, {2u << 20})).s, "bytes per step"},
      {"an unknown dtype", Bytes{}.u8(1).text(field("m", 3, {1})).s,
       "step field 0 spec: unknown dtype code 3"},
      {"a zero dimension", Bytes{}.u8(1).text(field("m", 1, {0})).s,
       "step field 0 spec: dimension 0 is 0"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    Welcome w;
    const Verdict v = decode_welcome(bytes_of(welcome_with(c.fields)), &w);
    CHECK(code_of(v) == ErrorCode::malformed);
    CHECK(v.error().message.find(c.message) != std::string::npos);
  }
  // A list cut short after its first field.
  Welcome w;
  const std::string cut = Bytes{}.u8(0).u8(1).u32(1).u8(0).u32(2).u8(2).text(field("m", 1, {1})).s;
  const Verdict v = decode_welcome(bytes_of(cut), &w);
  CHECK(code_of(v) == ErrorCode::malformed);
  CHECK(v.error().message.find("ends before its step field name length") != std::string::npos);
  // An encoder refuses fields the format cannot carry.
  Hello hello = sample_hello();
  hello.spec.fields = {{"bad name", {{1}, DType::u8}}};
  std::string out;
  CHECK_THROWS_WITH_AS(encode_hello(out, hello), doctest::Contains("is named 'bad name'"), Error);
}

TEST_CASE("protocol: a STEP's fields follow its observations, each on an 8-byte boundary") {
  const std::vector<float> rewards{1.0f, 2.0f, 3.0f};
  const std::vector<std::uint8_t> flags{step_flags::kFirst, 0, 0};
  const std::vector<std::uint8_t> observations(3 * 4, 7);  // 3 observations of 4 bytes
  const std::vector<std::uint8_t> mask = {1, 0, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 0, 1, 0};
  const std::vector<std::int32_t> player = {0, 1, -1};
  const std::span<const std::uint8_t> field_bytes[] = {
      mask, {reinterpret_cast<const std::uint8_t*>(player.data()), 12}};
  std::string frame;
  encode_step(frame, 9, rewards, flags, observations, field_bytes);

  const StepSpec spec{{{4}, DType::u8}, {2}, kFields};
  const StepLayout layout = step_layout(3, spec);
  CHECK(layout.observations_offset == 24);  // 4 + 12 + 3 = 19, padded
  CHECK(layout.num_fields == 2);
  CHECK(layout.field_offsets[0] == 40);  // observations end at 36
  CHECK(layout.field_offsets[1] == 56);  // the mask ends at 55
  CHECK(layout.payload_bytes == 68);
  CHECK(layout.frame_bytes == frame.size());
  const std::string payload = Bytes{}
                                  .u32(3)
                                  .f32(1.0f)
                                  .f32(2.0f)
                                  .f32(3.0f)
                                  .u8(1)
                                  .u8(0)
                                  .u8(0)
                                  .text(std::string(5, '\0'))
                                  .text(std::string(observations.begin(), observations.end()))
                                  .text(std::string(4, '\0'))
                                  .text(std::string(mask.begin(), mask.end()))
                                  .u8(0)
                                  .u32(0)
                                  .u32(1)
                                  .u32(0xffffffffu)
                                  .s;
  CHECK(frame.substr(kHeaderBytes) == payload);

  StepView view;
  REQUIRE(decode_step(bytes_of(payload), layout, &view).is_ok());
  CHECK(view.fields[0] - view.observations == 16);
  CHECK(std::memcmp(view.fields[0], mask.data(), mask.size()) == 0);
  CHECK(std::memcmp(view.fields[1], player.data(), 12) == 0);

  // Every truncation; a byte more; the layout of a connection without the fields.
  for (std::size_t n = 0; n < payload.size(); ++n)
    CHECK_FALSE(decode_step(bytes_of(payload).first(n), layout, &view).is_ok());
  const Verdict longer = decode_step(bytes_of(payload + "x"), layout, &view);
  CHECK(code_of(longer) == ErrorCode::invalid_request);
  CHECK(longer.error().message.find("and 2 declared fields need 49") != std::string::npos);
  CHECK(code_of(decode_step(bytes_of(payload), step_layout(3, 4), &view)) ==
        ErrorCode::invalid_request);
  // Nonzero padding before either field.
  for (std::size_t at : {std::size_t{36}, std::size_t{55}}) {
    CAPTURE(at);
    std::string padded = payload;
    padded[at] = 1;
    const Verdict v = decode_step(bytes_of(padded), layout, &view);
    CHECK(code_of(v) == ErrorCode::malformed);
    CHECK(v.error().message.find("nonzero padding before declared field") != std::string::npos);
  }
}

}  // namespace test_protocol_v3
