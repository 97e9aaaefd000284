// libFuzzer target for the wire codec (src/transport/protocol.cpp): whatever bytes a peer sends,
// the decoders return a refusing Verdict or a value and never read outside the buffer, crash, hang
// or allocate without bound; and whatever they accept encodes back to the same bytes (so the server
// and the client cannot disagree about a frame).
//
// The input is read as a stream of frames, as a session reads a socket: a header, then its
// payload decoded by the decoder of its type. STEP and ACTIONS need the session's sizes; they
// come from the frame's sequence number, so the fuzzer explores them too, and from the last HELLO
// or WELCOME of the stream: a STEP carries that spec's declared fields after its observations (a
// legal-action mask as bits, which must unpack and pack back to the same bytes),
// and ACTIONS are rows of box actions after a box spec (the box decoders), rows of K actions after
// a spec of K action branches (each within its branch), one discrete action per environment
// otherwise.
//
// Built with clang (-fsanitize=fuzzer,address,undefined) by test/fuzz/CMakeLists.txt; see
// docs/protocol.md for how to run it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "seedrl/core/step_spec.hpp"
#include "seedrl/transport/protocol.hpp"

namespace {

using namespace seedrl;
using Bytes = std::span<const std::uint8_t>;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_protocol: %s\n", what);
  std::abort();
}

// A decoded value, encoded again, must give back the payload it came from.
void expect_same_payload(const std::string& frame, Bytes payload, const char* what) {
  if (frame.size() != protocol::kHeaderBytes + payload.size() ||
      std::memcmp(frame.data() + protocol::kHeaderBytes, payload.data(), payload.size()) != 0)
    fail(what);
}

// An accepted action spec is one the encoders can write: N > 0 actions, 2 to 64 branches of 1 or
// more actions each, or a box of 1 to kMaxActionDims dimensions with finite bounds, low < high.
void expect_valid(const ActionSpec& spec, const char* what) {
  if (spec.is_branched()) {
    try {
      spec.validate(what);
    } catch (const std::exception&) {
      fail(what);
    }
    return;
  }
  if (!spec.is_box()) {
    if (spec.num_actions <= 0 || !spec.low.empty() || !spec.high.empty()) fail(what);
    return;
  }
  if (spec.low.size() > protocol::kMaxActionDims || spec.high.size() != spec.low.size()) fail(what);
  for (std::size_t d = 0; d < spec.low.size(); ++d) {
    if (!std::isfinite(spec.low[d]) || !std::isfinite(spec.high[d]) ||
        !(spec.low[d] < spec.high[d]))
      fail(what);
  }
}

// An accepted step spec: a valid action spec and fields that follow every rule.
void expect_valid(const StepSpec& spec, const char* what) {
  expect_valid(spec.action, what);
  if (!StepSpec::fields_problem(spec.fields).empty()) fail(what);
}

// `last`: the step spec of the stream's last accepted HELLO or WELCOME, if any.
void decode_payload(const protocol::FrameHeader& header, Bytes payload,
                    std::optional<StepSpec>& last) {
  const ActionSpec* spec = last ? &last->action : nullptr;
  using protocol::FrameType;
  std::string again;
  switch (header.type) {
    case FrameType::hello: {
      protocol::Hello hello;
      if (!protocol::decode_hello(payload, &hello).is_ok()) return;
      expect_valid(hello.spec, "HELLO: an invalid step spec accepted");
      protocol::encode_hello(again, hello, header.sequence);
      expect_same_payload(again, payload, "HELLO does not round-trip");
      last = hello.spec;
      return;
    }
    case FrameType::welcome: {
      protocol::Welcome welcome;
      if (!protocol::decode_welcome(payload, &welcome).is_ok()) return;
      expect_valid(welcome.spec, "WELCOME: an invalid step spec accepted");
      protocol::encode_welcome(again, welcome, header.sequence);
      expect_same_payload(again, payload, "WELCOME does not round-trip");
      last = welcome.spec;
      return;
    }
    case FrameType::error: {
      protocol::ErrorFrame error;
      if (!protocol::decode_error(payload, &error).is_ok()) return;
      protocol::encode_error(again, error, header.sequence);
      expect_same_payload(again, payload, "ERROR does not round-trip");
      return;
    }
    case FrameType::step: {
      const std::uint32_t num_envs = header.sequence & 0xffu;
      const std::size_t observation_bytes = (header.sequence >> 8) & 0xfffu;
      std::vector<std::uint64_t> field_bytes;
      if (last)
        for (const StepFieldSpec& f : last->fields) field_bytes.push_back(protocol::wire_bytes(f));
      protocol::StepLayout layout = protocol::step_layout(num_envs, observation_bytes, field_bytes);
      for (std::size_t k = 0; k < field_bytes.size(); ++k)
        if (protocol::travels_as_bits(last->fields[k]))
          layout.field_bits[k] = static_cast<std::uint32_t>(last->fields[k].spec.shape.numel());
      protocol::StepView view;
      if (!protocol::decode_step(payload, layout, &view).is_ok()) return;
      if (view.num_envs != num_envs) fail("STEP: wrong environment count");
      std::vector<float> rewards(num_envs);
      for (std::uint32_t i = 0; i < num_envs; ++i) rewards[i] = view.reward(i);
      const std::span<const std::uint8_t> flags(view.flags, num_envs);
      const std::span<const std::uint8_t> observations(view.observations,
                                                       num_envs * observation_bytes);
      if (observations.data() + observations.size() > payload.data() + payload.size())
        fail("STEP: observations outside the payload");
      std::vector<std::span<const std::uint8_t>> fields;
      for (std::size_t k = 0; k < field_bytes.size(); ++k) {
        fields.emplace_back(view.fields[k], num_envs * field_bytes[k]);
        if (fields.back().data() + fields.back().size() > payload.data() + payload.size())
          fail("STEP: a declared field outside the payload");
        // An accepted mask of bits unpacks to 0s and 1s that pack back to the same bytes.
        if (const std::uint32_t bits = layout.field_bits[k]; bits > 0) {
          std::vector<std::uint8_t> values(std::size_t{num_envs} * bits),
              packed(fields.back().size());
          protocol::unpack_bits(fields.back(), bits, values);
          protocol::pack_bits(values, bits, packed);
          if (!std::equal(packed.begin(), packed.end(), fields.back().begin()))
            fail("STEP: a mask of bits does not round-trip");
        }
      }
      protocol::encode_step(again, header.sequence, rewards, flags, observations, fields);
      expect_same_payload(again, payload, "STEP does not round-trip");
      return;
    }
    case FrameType::actions: {
      const std::size_t num_envs = (header.sequence >> 8) & 0xffu;
      if (spec) {
        // The connection's action space decodes it, whichever kind; what it accepts lies within
        // the spec and is encoded back to the same bytes.
        const std::size_t dims = static_cast<std::size_t>(spec->dims());
        std::vector<std::int32_t> discrete(spec->is_box() ? 0 : num_envs * dims);
        std::vector<float> box(spec->is_box() ? num_envs * dims : 0);
        const ActionBuffer actions = spec->is_box() ? ActionBuffer(box) : ActionBuffer(discrete);
        if (!protocol::decode_actions(payload, *spec, actions).is_ok()) return;
        for (std::size_t i = 0; i < box.size(); ++i) {
          const float a = box[i];
          if (!std::isfinite(a) || a < spec->low[i % dims] || a > spec->high[i % dims])
            fail("ACTIONS: a box action outside its bounds accepted");
        }
        for (std::size_t i = 0; i < discrete.size(); ++i) {
          const std::int32_t size =
              spec->is_branched() ? spec->branches[i % dims] : spec->num_actions;
          if (discrete[i] < 0 || discrete[i] >= size)
            fail("ACTIONS: an action outside its count or branch accepted");
        }
        if (payload.size() !=
            protocol::actions_frame_bytes(static_cast<std::uint32_t>(num_envs), *spec) -
                protocol::kHeaderBytes)
          fail("ACTIONS: payload size differs from actions_frame_bytes");
        if (!protocol::encode_actions(again, header.sequence, *spec, actions).is_ok())
          fail("ACTIONS: decoded actions refused on the way out");
        expect_same_payload(again, payload, "ACTIONS of the spec do not round-trip");
        return;
      }
      const std::uint32_t num_actions = (header.sequence & 0xffu) + 1;
      std::vector<std::int32_t> actions(num_envs);
      if (!protocol::decode_actions(payload, num_actions, actions).is_ok()) return;
      for (std::int32_t a : actions)
        if (a < 0 || a >= static_cast<std::int32_t>(num_actions)) fail("ACTIONS: out of range");
      protocol::encode_actions(again, header.sequence, actions);
      expect_same_payload(again, payload, "ACTIONS does not round-trip");
      return;
    }
    case FrameType::goodbye:
      return;
  }
  fail("decode_header accepted an unknown frame type");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes rest(data, size);
  std::optional<StepSpec> spec;
  // A small limit, so that the length checks are reached as well as the payload decoders.
  constexpr std::uint32_t kMaxFrameBytes = 1u << 16;
  while (rest.size() >= protocol::kHeaderBytes) {
    protocol::FrameHeader header;
    if (!protocol::decode_header(rest.first(protocol::kHeaderBytes), kMaxFrameBytes, &header)
             .is_ok())
      return 0;  // a session answers with ERROR and closes
    if (header.length < 8 || protocol::kHeaderBytes + header.payload_bytes() > kMaxFrameBytes)
      fail("decode_header accepted a bad length");
    rest = rest.subspan(protocol::kHeaderBytes);
    if (rest.size() < header.payload_bytes()) return 0;  // truncated: wait for more
    // The payload in a buffer of its own size, so that AddressSanitizer catches any overread.
    const std::vector<std::uint8_t> payload(rest.begin(), rest.begin() + header.payload_bytes());
    decode_payload(header, payload, spec);
    rest = rest.subspan(header.payload_bytes());
  }
  return 0;
}
