// seedrl's actor <-> inference wire protocol, version 4 (specified byte by byte in
// docs/protocol.md). Little-endian, fixed-width fields, every frame length-prefixed:
//
//   u32 length | u8 version | u8 type | u16 reserved (0) | u32 sequence | payload (length - 8)
//
//   actor                                   server
//   HELLO (magic, version, token, run id,   ─▶
//          envs, evaluation, step spec:     ◀─ WELCOME (step spec, first slot, max frame) or ERROR
//          observation, actions, fields)
//   STEP  (rewards, flags, observations,    ─▶
//          declared fields)
//                                           ◀─ ACTIONS (one per environment: an i32, or a row of
//                                              D f32 for a box), or ERROR
//   ...                                        ERROR closes the connection
//   GOODBYE                                 ─▶
//
// The codec is independent of any socket library. Decoders validate everything against the
// bytes they are given and return a Verdict: ok, or the ERROR frame to answer with, naming the
// problem. Hostile input is expected and never read out of bounds; decoders never throw.
//
// Version 2 added box actions (ActionSpec::box): the handshake carries a whole action spec, and
// ACTIONS carry rows of floats for a box. Version 3 added declared step fields
// (core/step_spec.hpp): the handshake lists them and every STEP carries them after the
// observations, each region 8-byte aligned. Version 4 sends a legal-action mask (the field
// kActionMaskField, u8 [A]) as bits: ceil(A / 8) bytes per environment, action j at bit j % 8
// (least significant first) of byte j / 8, the unused high bits 0 (travels_as_bits). Peers of
// another version are refused by the header (unsupported_version); ERROR frames have the same
// layout in every version, so a refusal can be written in the old peer's version and read by it
// (docs/protocol.md, Versions).
//
// Thread-safety: free functions on caller-owned values; any thread.
#pragma once

#include <array>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "seedrl/core/action_buffer.hpp"
#include "seedrl/core/binary_io.hpp"
#include "seedrl/core/status.hpp"
#include "seedrl/core/step_spec.hpp"
#include "seedrl/core/tensor_spec.hpp"
#include "seedrl/env/environment.hpp"

namespace seedrl::protocol {

inline constexpr std::uint8_t kVersion = 4;
inline constexpr std::array<char, 8> kMagic{'S', 'E', 'E', 'D', 'R', 'L', '0', '1'};
inline constexpr std::size_t kHeaderBytes = 12;  ///< the fixed frame header
inline constexpr std::size_t kMaxTokenBytes = 1024;
inline constexpr std::uint32_t kMaxEnvs = 65535;
inline constexpr std::size_t kMaxMessageBytes = 1024;  ///< ERROR messages are cut to this
inline constexpr std::uint32_t kDefaultMaxFrameBytes = 64u << 20;
inline constexpr std::uint32_t kMinMaxFrameBytes = 4096;  ///< room for any handshake frame
/// Most dimensions of a box action a handshake can carry: its bounds (8 bytes a dimension) must
/// leave a HELLO with the longest token within the 4 KiB of a handshake frame.
inline constexpr std::uint32_t kMaxActionDims = 256;
/// The action kind byte of HELLO and WELCOME.
enum class ActionKind : std::uint8_t {
  discrete = 0,  ///< then u32 num_actions
  box = 1,       ///< then u32 D, D f32 lower bounds, D f32 upper bounds
  branches = 2,  ///< then u32 K (2 to ActionSpec::kMaxBranches) and K u32 branch sizes (>= 1)
};

enum class FrameType : std::uint8_t {
  hello = 1,    ///< actor -> server, first frame
  welcome = 2,  ///< server -> actor, the answer to HELLO
  error = 3,    ///< server -> actor, then the server closes the connection
  step = 4,     ///< actor -> server
  actions = 5,  ///< server -> actor, the answer to STEP
  goodbye = 6,  ///< actor -> server, orderly close
};

enum class ErrorCode : std::uint16_t {
  malformed = 1,            ///< a frame that does not parse
  unsupported_version = 2,  ///< another protocol version
  unauthorized = 3,         ///< wrong token
  invalid_request = 4,      ///< well-formed but wrong (specs, sizes, a step before the handshake)
  unavailable = 5,          ///< no room now (connections, slots); retry later
  shutting_down = 6,        ///< the learner stops; retry later (it may come back)
  idle_timeout = 7,         ///< no frame for too long
  internal = 8,             ///< a fault on the server
  finished = 9,             ///< training is over; do not reconnect
  frame_too_large = 10,     ///< a length field above the server's limit
};

struct ErrorFrame {
  ErrorCode code = ErrorCode::internal;
  std::string message;
};

/// What a decoder found: ok, or the ERROR frame to answer with (a code and a message naming the
/// problem). Reads like seedrl::Status: ask is_ok(); nothing converts to bool.
///
///   if (protocol::Verdict v = protocol::decode_hello(payload, &hello); !v.is_ok())
///     return refuse(v.error());
class [[nodiscard]] Verdict {
 public:
  static Verdict ok() { return Verdict(); }
  explicit Verdict(ErrorFrame error) : error_(std::move(error)) {}

  bool is_ok() const { return !error_.has_value(); }
  /// The ERROR frame to send; only for a verdict that is not ok.
  const ErrorFrame& error() const {
    assert(error_.has_value());
    return *error_;
  }

 private:
  Verdict() = default;
  std::optional<ErrorFrame> error_;
};

const char* name(ErrorCode code);

struct FrameHeader {
  std::uint32_t length = 0;  ///< bytes after the length field: 8 + payload
  std::uint8_t version = 0;
  FrameType type = FrameType::hello;
  std::uint32_t sequence = 0;
  std::uint32_t payload_bytes() const { return length - 8; }
  std::size_t frame_bytes() const { return std::size_t{length} + 4; }  ///< header and payload
};

struct Hello {
  std::string token;
  std::uint64_t run_id = 0;
  std::uint32_t num_envs = 0;
  bool evaluation = false;
  /// The observation, the actions (N discrete or a box of 1 to kMaxActionDims dimensions) and the
  /// declared fields (at most StepSpec::kMaxFields).
  StepSpec spec;
};

struct Welcome {
  StepSpec spec;  ///< the server's
  std::uint32_t first_slot = 0;
  std::uint32_t max_frame_bytes = 0;
};

/// A decoded STEP payload: views into the received bytes.
struct StepView {
  std::uint32_t num_envs = 0;
  const std::uint8_t* rewards = nullptr;  ///< num_envs little-endian f32, possibly unaligned
  const std::uint8_t* flags = nullptr;    ///< num_envs bytes
  const std::uint8_t* observations =
      nullptr;  ///< num_envs * observation bytes, 8-byte aligned in the payload
  /// Declared field k's num_envs values, 8-byte aligned in the payload (StepLayout::num_fields).
  std::array<const std::uint8_t*, StepSpec::kMaxFields> fields{};
  float reward(std::uint32_t i) const {
    float r;
    std::memcpy(&r, rewards + 4 * i, 4);
    return detail::to_little_endian(r);
  }
};

// ---- Headers ----

/// Appends a frame header for a payload of `payload_bytes`. `version` is kVersion except for an
/// ERROR written to a peer of an older version (see encode_error).
void encode_header(std::string& out, FrameType type, std::uint32_t sequence,
                   std::size_t payload_bytes, std::uint8_t version = kVersion);
/// Decodes and checks the kHeaderBytes at `bytes`: 8 <= length, kHeaderBytes + payload <=
/// max_frame_bytes (frame_too_large), the version (unsupported_version), a known type and zero
/// reserved bits (malformed). `out` is filled as far as it could be read, also on a refusal: on
/// unsupported_version its length, version and sequence are read (the type is not checked, as
/// another version may have other types), so a reader can skip or read that peer's frame.
Verdict decode_header(std::span<const std::uint8_t> bytes, std::uint32_t max_frame_bytes,
                      FrameHeader* out);

// ---- Payloads (encode_* append a whole frame; decode_* read a payload) ----

void encode_hello(std::string& out, const Hello& hello, std::uint32_t sequence = 0);
Verdict decode_hello(std::span<const std::uint8_t> payload, Hello* out);
/// The token of a HELLO payload and nothing after it (its magic, then the token), so that a server
/// checks the secret before it parses anything else an unauthenticated peer sent. `token` views
/// `payload`.
Verdict decode_hello_token(std::span<const std::uint8_t> payload, std::string_view* token);

void encode_welcome(std::string& out, const Welcome& welcome, std::uint32_t sequence = 0);
Verdict decode_welcome(std::span<const std::uint8_t> payload, Welcome* out);

/// Bytes of the largest ERROR frame (a message of kMaxMessageBytes).
std::size_t max_error_frame_bytes();
/// `version` is the version byte of the ERROR's header: kVersion, or the version of an older peer
/// being refused for it (error_version_for), which can then read why.
void encode_error(std::string& out, const ErrorFrame& error, std::uint32_t sequence = 0,
                  std::uint8_t version = kVersion);
/// The version byte of an ERROR to a peer that speaks `peer_version`: that version when it is an
/// older one whose ERROR layout is this version's (every version so far: 1 to kVersion), else
/// kVersion (a newer peer is expected to read the ERROR of an older server, as this one does).
std::uint8_t error_version_for(std::uint8_t peer_version);
Verdict decode_error(std::span<const std::uint8_t> payload, ErrorFrame* out);

/// Whether declared field `field` travels as bits: a legal-action mask (kActionMaskField, u8).
bool travels_as_bits(const StepFieldSpec& field);
/// The bytes one environment's value of `field` takes in a STEP: ceil(values / 8) for a field
/// that travels as bits, else its bytes.
std::uint64_t wire_bytes(const StepFieldSpec& field);
/// Packs rows of `width` u8 values (non-zero: 1) into rows of ceil(width / 8) bytes: value j at bit
/// j % 8 of byte j / 8, the unused high bits 0. `bits` holds as many rows as `values`.
void pack_bits(std::span<const std::uint8_t> values, std::size_t width,
               std::span<std::uint8_t> bits);
/// The inverse: rows of ceil(width / 8) bytes into rows of `width` u8 values of 0 or 1.
void unpack_bits(std::span<const std::uint8_t> bits, std::size_t width,
                 std::span<std::uint8_t> values);

/// Where the parts of a STEP payload lie (docs/protocol.md, STEP). Offsets count from the start
/// of the payload, which is the frame's byte kHeaderBytes. Computed once per connection.
struct StepLayout {
  std::uint32_t num_envs = 0;
  std::uint64_t observation_bytes = 0;  ///< one environment's observation
  std::size_t rewards_offset = 0;       ///< num_envs little-endian f32, after the u32 count
  std::size_t flags_offset = 0;         ///< num_envs step-flag bytes, then zero padding
  std::size_t observations_offset = 0;  ///< a multiple of 8: the observations start aligned
  std::size_t num_fields = 0;           ///< declared fields, after the observations
  /// Field k: num_envs values of field_bytes[k] each, from field_offsets[k] (a multiple of 8; zero
  /// padding before it).
  std::array<std::uint64_t, StepSpec::kMaxFields> field_bytes{};
  std::array<std::uint64_t, StepSpec::kMaxFields> field_offsets{};
  /// > 0 where field k travels as bits (travels_as_bits): its values per environment, packed in
  /// field_bytes[k] = ceil(field_bits[k] / 8) bytes whose unused high bits must be 0.
  std::array<std::uint32_t, StepSpec::kMaxFields> field_bits{};
  std::uint64_t payload_bytes = 0;  ///< up to the end of the last field (or the observations)
  std::uint64_t frame_bytes = 0;    ///< kHeaderBytes + payload_bytes

  /// The end of the observations, and of field k: where the next part's padding starts.
  std::uint64_t observations_end() const {
    return observations_offset + std::uint64_t{num_envs} * observation_bytes;
  }
  std::uint64_t field_end(std::size_t k) const {
    return field_offsets[k] + std::uint64_t{num_envs} * field_bytes[k];
  }
};
/// The layout of a STEP of `num_envs` (1 to kMaxEnvs) observations of `observation_bytes` each
/// (at most the 4 GiB a HELLO can describe, so no size overflows), then a value of each declared
/// field of `field_bytes[k]` bytes per environment (at most StepSpec::kMaxFields of them).
StepLayout step_layout(std::uint32_t num_envs, std::uint64_t observation_bytes,
                       std::span<const std::uint64_t> field_bytes = {});
/// The layout of STEPs of `num_envs` environments whose steps are `spec`.
StepLayout step_layout(std::uint32_t num_envs, const StepSpec& spec);
/// Appends a STEP frame's header and payload up to its observations, which are to follow with the
/// declared fields, as `layout` places them (senders that write them from their own buffers, with
/// zero padding before each field, avoid a copy).
void encode_step_prefix(std::string& out, std::uint32_t sequence, const StepLayout& layout,
                        std::span<const float> rewards, std::span<const std::uint8_t> flags);
/// Appends a whole STEP frame: `observations` holds num_envs observations, `fields[k]` num_envs
/// values of declared field k.
void encode_step(std::string& out, std::uint32_t sequence, std::span<const float> rewards,
                 std::span<const std::uint8_t> flags, std::span<const std::uint8_t> observations,
                 std::span<const std::span<const std::uint8_t>> fields = {});
/// Checks a STEP payload against the connection's `layout`: exactly its environments,
/// observations and fields, valid flags, finite rewards, zero padding, no bit set beyond the
/// actions of a field that travels as bits (the receiver unpacks those: unpack_bits).
Verdict decode_step(std::span<const std::uint8_t> payload, const StepLayout& layout, StepView* out);

/// Bytes of the ACTIONS frame that answers a STEP of `num_envs` environments with discrete
/// actions.
std::size_t actions_frame_bytes(std::uint32_t num_envs);
/// The same for actions of `spec`: num_envs i32 (discrete) or num_envs rows of D f32 (a box).
std::size_t actions_frame_bytes(std::uint32_t num_envs, const ActionSpec& spec);
/// Appends the ACTIONS frame of `spec`'s actions, whichever kind: `actions` holds num_envs rows of
/// spec.dims() values of the spec's kind (i32 for discrete actions and branches, f32 for a box).
/// Checked first, and nothing appended when refused: room of another kind or not whole rows
/// (internal), an action outside its count or branch, or a box value not finite or outside its
/// dimension's bounds (malformed, naming the environment, and the branch or dimension).
Verdict encode_actions(std::string& out, std::uint32_t sequence, const ActionSpec& spec,
                       ActionBuffer actions);
/// Checks an ACTIONS payload of `spec`'s actions and copies them into `actions` (room for exactly
/// num_envs rows of the spec's kind): the count, every value within its action count, branch
/// (value i within branch i % K) or box bounds, no byte left over.
Verdict decode_actions(std::span<const std::uint8_t> payload, const ActionSpec& spec,
                       ActionBuffer actions);

/// The frame's primitives, unchecked, for tests and tools that build frames of their own:
/// num_envs discrete actions (or rows of K branches) as they are.
void encode_actions(std::string& out, std::uint32_t sequence,
                    std::span<const std::int32_t> actions);
/// num_envs rows of `dims` box values (environment e's at [e * dims, (e + 1) * dims)) as they are.
void encode_box_actions(std::string& out, std::uint32_t sequence, std::span<const float> actions,
                        std::uint32_t dims);
/// Checks an ACTIONS payload of num_envs actions, each in [0, num_actions), and copies them out.
Verdict decode_actions(std::span<const std::uint8_t> payload, std::uint32_t num_actions,
                       std::span<std::int32_t> actions);

void encode_goodbye(std::string& out, std::uint32_t sequence = 0);

/// Equal tokens, in time that does not depend on where they differ.
bool tokens_equal(std::string_view a, std::string_view b);

}  // namespace seedrl::protocol
