// The STEP frame of docs/protocol.md: its layout, encoders and decoder, and the bits a legal-action
// mask travels as (version 4). The rest of the codec is protocol.cpp; both read through
// wire_format.hpp's Cursor, so hostile bytes become a refusing Verdict and nothing else.
#include <algorithm>
#include <cmath>

#include "seedrl/core/error.hpp"
#include "seedrl/core/step_flags.hpp"
#include "seedrl/transport/protocol.hpp"

#include "wire_format.hpp"

namespace seedrl::protocol {

using namespace wire;  // the codec's primitives (src/transport/wire_format.hpp)

namespace {
std::uint64_t aligned8(std::uint64_t offset) {
  return (offset + 7) / 8 * 8;
}
}  // namespace

StepLayout step_layout(std::uint32_t num_envs, std::uint64_t observation_bytes,
                       std::span<const std::uint64_t> field_bytes) {
  SEEDRL_REQUIRE(field_bytes.size() <= StepSpec::kMaxFields, "protocol: a STEP of ",
                 field_bytes.size(), " fields (at most ", StepSpec::kMaxFields, ")");
  StepLayout layout;
  layout.num_envs = num_envs;
  layout.observation_bytes = observation_bytes;
  layout.rewards_offset = 4;  // after the u32 environment count
  layout.flags_offset = layout.rewards_offset + 4 * std::size_t{num_envs};
  // Zero padding after the flags puts the observations on a multiple of 8, and so every field.
  layout.observations_offset = aligned8(layout.flags_offset + num_envs);
  std::uint64_t end = layout.observations_end();
  layout.num_fields = field_bytes.size();
  for (std::size_t k = 0; k < field_bytes.size(); ++k) {
    layout.field_bytes[k] = field_bytes[k];
    layout.field_offsets[k] = aligned8(end);
    end = layout.field_end(k);
  }
  layout.payload_bytes = end;
  layout.frame_bytes = kHeaderBytes + layout.payload_bytes;
  return layout;
}

bool travels_as_bits(const StepFieldSpec& field) {
  return field.name == kActionMaskField && field.spec.dtype == DType::u8;
}

std::uint64_t wire_bytes(const StepFieldSpec& field) {
  return travels_as_bits(field) ? (static_cast<std::uint64_t>(field.spec.shape.numel()) + 7) / 8
                                : field.spec.bytes();
}

void pack_bits(std::span<const std::uint8_t> values, std::size_t width,
               std::span<std::uint8_t> bits) {
  const std::size_t row_bytes = (width + 7) / 8, rows = width == 0 ? 0 : values.size() / width;
  SEEDRL_REQUIRE(width > 0 && values.size() == rows * width && bits.size() == rows * row_bytes,
                 "protocol::pack_bits: ", values.size(), " values in rows of ", width, " into ",
                 bits.size(), " bytes");
  std::fill(bits.begin(), bits.end(), std::uint8_t{0});
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t j = 0; j < width; ++j)
      if (values[r * width + j] != 0)
        bits[r * row_bytes + j / 8] |= static_cast<std::uint8_t>(1u << (j % 8));
}

void unpack_bits(std::span<const std::uint8_t> bits, std::size_t width,
                 std::span<std::uint8_t> values) {
  const std::size_t row_bytes = (width + 7) / 8, rows = width == 0 ? 0 : values.size() / width;
  SEEDRL_REQUIRE(width > 0 && values.size() == rows * width && bits.size() == rows * row_bytes,
                 "protocol::unpack_bits: ", bits.size(), " bytes into ", values.size(),
                 " values in rows of ", width);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t j = 0; j < width; ++j)
      values[r * width + j] = (bits[r * row_bytes + j / 8] >> (j % 8)) & 1u;
}

StepLayout step_layout(std::uint32_t num_envs, const StepSpec& spec) {
  std::array<std::uint64_t, StepSpec::kMaxFields> field_bytes{};
  SEEDRL_REQUIRE(spec.fields.size() <= StepSpec::kMaxFields, "protocol: ", spec.fields.size(),
                 " step fields (at most ", StepSpec::kMaxFields, ")");
  for (std::size_t k = 0; k < spec.fields.size(); ++k) field_bytes[k] = wire_bytes(spec.fields[k]);
  StepLayout layout =
      step_layout(num_envs, spec.observation.bytes(),
                  std::span<const std::uint64_t>(field_bytes.data(), spec.fields.size()));
  for (std::size_t k = 0; k < spec.fields.size(); ++k)
    if (travels_as_bits(spec.fields[k]))
      layout.field_bits[k] = static_cast<std::uint32_t>(spec.fields[k].spec.shape.numel());
  return layout;
}

void encode_step_prefix(std::string& out, std::uint32_t sequence, const StepLayout& layout,
                        std::span<const float> rewards, std::span<const std::uint8_t> flags) {
  SEEDRL_REQUIRE(!rewards.empty() && rewards.size() <= kMaxEnvs && flags.size() == rewards.size() &&
                     rewards.size() == layout.num_envs,
                 "protocol: a STEP of this layout needs ", layout.num_envs, " environments (1 to ",
                 kMaxEnvs, ") with one reward and one flag byte each (got ", rewards.size(),
                 " rewards, ", flags.size(), " flags)");
  encode_header(out, FrameType::step, sequence, layout.payload_bytes);
  const std::size_t payload_start = out.size();
  put<std::uint32_t>(out, layout.num_envs);
  for (float r : rewards) put<float>(out, r);
  out.append(reinterpret_cast<const char*>(flags.data()), flags.size());
  out.resize(payload_start + layout.observations_offset, '\0');  // the zero padding
}

void encode_step(std::string& out, std::uint32_t sequence, std::span<const float> rewards,
                 std::span<const std::uint8_t> flags, std::span<const std::uint8_t> observations,
                 std::span<const std::span<const std::uint8_t>> fields) {
  const std::size_t n = std::max<std::size_t>(rewards.size(), 1);
  SEEDRL_REQUIRE(observations.size() % n == 0 && fields.size() <= StepSpec::kMaxFields,
                 "protocol: ", observations.size(), " observation bytes and ", fields.size(),
                 " fields do not split into ", rewards.size(), " environments");
  std::array<std::uint64_t, StepSpec::kMaxFields> field_bytes{};
  for (std::size_t k = 0; k < fields.size(); ++k) {
    SEEDRL_REQUIRE(fields[k].size() % n == 0, "protocol: field ", k, "'s ", fields[k].size(),
                   " bytes do not split into ", rewards.size(), " environments");
    field_bytes[k] = fields[k].size() / n;
  }
  const StepLayout layout =
      step_layout(static_cast<std::uint32_t>(rewards.size()), observations.size() / n,
                  std::span<const std::uint64_t>(field_bytes.data(), fields.size()));
  const std::size_t payload_start = out.size() + kHeaderBytes;
  encode_step_prefix(out, sequence, layout, rewards, flags);
  out.append(reinterpret_cast<const char*>(observations.data()), observations.size());
  for (std::size_t k = 0; k < fields.size(); ++k) {
    out.resize(payload_start + layout.field_offsets[k], '\0');
    out.append(reinterpret_cast<const char*>(fields[k].data()), fields[k].size());
  }
}

Verdict decode_step(std::span<const std::uint8_t> payload, const StepLayout& layout,
                    StepView* out) {
  Cursor in(payload, "STEP");
  std::uint32_t n = 0;
  if (!in.get(&n)) return in.truncated("environment count");
  if (n == 0 || n > kMaxEnvs)
    return refuse(ErrorCode::malformed,
                  str_cat("STEP frame: ", n, " environments (1 to ", kMaxEnvs, ")"));
  if (n != layout.num_envs) {
    return refuse(ErrorCode::invalid_request,
                  str_cat("STEP frame: ", n, " environments, but this actor connected with ",
                          layout.num_envs));
  }
  const std::uint8_t* rewards = nullptr;
  const std::uint8_t* flags = nullptr;
  // The cursor stands at layout.rewards_offset, after the count.
  if (!in.take(layout.flags_offset - layout.rewards_offset, &rewards))
    return in.truncated("rewards");
  if (!in.take(n, &flags)) return in.truncated("step flags");
  if (payload.size() != layout.payload_bytes) {
    const std::uint64_t after_flags = layout.payload_bytes - in.offset();
    return refuse(
        ErrorCode::invalid_request,
        str_cat("STEP frame: ", in.remaining(), " bytes after the step flags; ", n,
                " observations of ", layout.observation_bytes, " bytes",
                layout.num_fields == 0 ? std::string()
                                       : str_cat(" and ", layout.num_fields, " declared fields"),
                " need ", after_flags));
  }
  // Every padding region (after the flags, after the observations and each field but the last)
  // is zero.
  auto zero = [&](std::uint64_t from, std::uint64_t to) {
    for (std::uint64_t i = from; i < to; ++i)
      if (payload[i] != 0) return false;
    return true;
  };
  if (!zero(in.offset(), layout.observations_offset))
    return refuse(ErrorCode::malformed, "STEP frame: nonzero padding after the step flags");
  std::uint64_t end = layout.observations_end();
  for (std::size_t k = 0; k < layout.num_fields; ++k) {
    if (!zero(end, layout.field_offsets[k]))
      return refuse(ErrorCode::malformed,
                    str_cat("STEP frame: nonzero padding before declared field ", k));
    out->fields[k] = payload.data() + layout.field_offsets[k];
    end = layout.field_end(k);
    // A field of bits: the last byte of each environment's row sets nothing past the actions.
    if (const std::uint32_t bits = layout.field_bits[k]; bits % 8 != 0) {
      const auto unused = static_cast<std::uint8_t>(0xffu << (bits % 8));
      for (std::uint32_t i = 0; i < n; ++i)
        if ((out->fields[k][(i + 1) * layout.field_bytes[k] - 1] & unused) != 0)
          return refuse(ErrorCode::malformed,
                        str_cat("STEP frame: environment ", i, "'s declared field ", k,
                                " (a legal-action mask of ", bits, " actions, sent as bits) sets ",
                                "bits beyond its actions"));
    }
  }
  out->num_envs = n;
  out->rewards = rewards;
  out->flags = flags;
  out->observations = payload.data() + layout.observations_offset;
  for (std::uint32_t i = 0; i < n; ++i) {
    if ((flags[i] & ~step_flags::kAll) != 0) {
      return refuse(ErrorCode::malformed, str_cat("STEP frame: environment ", i,
                                                  " has unknown flag bits ", int{flags[i]}));
    }
    if (!std::isfinite(out->reward(i))) {
      return refuse(ErrorCode::invalid_request,
                    str_cat("STEP frame: environment ", i, " has a non-finite reward"));
    }
  }
  return Verdict::ok();
}

}  // namespace seedrl::protocol
