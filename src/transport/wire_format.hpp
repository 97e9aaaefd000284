// The wire codec's primitives (src/transport/protocol.cpp): little-endian puts, the frame length
// patch, the bounds-checked Cursor that never throws, the spec fields of HELLO and WELCOME, and the
// refusals they give. Private to the codec; docs/protocol.md has the format.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/transport/protocol.hpp"

namespace seedrl::protocol::wire {

// Largest observation a spec may describe; far above any real one, low enough that sizes computed
// from hostile dimensions cannot overflow.
constexpr std::uint64_t kMaxObservationBytes = std::uint64_t{1} << 32;

// The largest HELLO (the longest token, an observation of the highest rank, the widest box, the
// most fields with the longest names and highest ranks) fits a handshake frame, which is all a
// server reads before the handshake.
static_assert(kHeaderBytes + 8 + 2 + kMaxTokenBytes + 8 + 4 + 1 + 1 + 1 + 4 * Shape::kMaxRank + 1 +
                  4 + 8 * std::size_t{kMaxActionDims} + 1 +
                  StepSpec::kMaxFields * (1 + StepFieldSpec::kMaxNameBytes + 1 + 1 +
                                          4 * std::size_t{StepFieldSpec::kMaxRank}) <=
              kMinMaxFrameBytes);

template <class T>
inline void put(std::string& out, T value) {
  value = detail::to_little_endian(value);
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

// Overwrites the u32 length field of the frame that starts at `start` once its payload is known.
inline void patch_length(std::string& out, std::size_t start) {
  const std::size_t length = out.size() - start - 4;
  SEEDRL_REQUIRE(length <= std::numeric_limits<std::uint32_t>::max(), "protocol: frame of ", length,
                 " bytes exceeds the 4 GiB the length field can describe");
  const std::uint32_t le = detail::to_little_endian(static_cast<std::uint32_t>(length));
  std::memcpy(out.data() + start, &le, 4);
}

inline std::size_t begin_frame(std::string& out, FrameType type, std::uint32_t sequence,
                               std::uint8_t version = kVersion) {
  const std::size_t start = out.size();
  encode_header(out, type, sequence, 0, version);
  return start;
}

inline void put_spec(std::string& out, const TensorSpec& spec) {
  put<std::uint8_t>(out, static_cast<std::uint8_t>(spec.dtype));
  put<std::uint8_t>(out, static_cast<std::uint8_t>(spec.shape.rank()));
  for (std::int64_t d : spec.shape.dims()) {
    SEEDRL_REQUIRE(d >= 1 && d <= std::numeric_limits<std::int32_t>::max(),
                   "protocol: a dimension of ", d, " cannot be sent");
    put<std::uint32_t>(out, static_cast<std::uint32_t>(d));
  }
}

// The action kind byte, then the number of actions, the branches' count and sizes, or a box's D
// and its 2 D bounds.
inline void put_action_spec(std::string& out, const ActionSpec& spec) {
  spec.validate("protocol: action spec");
  if (spec.is_branched()) {
    put<std::uint8_t>(out, static_cast<std::uint8_t>(ActionKind::branches));
    put<std::uint32_t>(out, static_cast<std::uint32_t>(spec.branches.size()));
    for (std::int32_t n : spec.branches) put<std::uint32_t>(out, static_cast<std::uint32_t>(n));
    return;
  }
  if (!spec.is_box()) {
    put<std::uint8_t>(out, static_cast<std::uint8_t>(ActionKind::discrete));
    put<std::uint32_t>(out, static_cast<std::uint32_t>(spec.num_actions));
    return;
  }
  SEEDRL_REQUIRE(spec.low.size() <= kMaxActionDims, "protocol: a box action of ", spec.low.size(),
                 " dimensions cannot be sent (at most ", kMaxActionDims, ")");
  put<std::uint8_t>(out, static_cast<std::uint8_t>(ActionKind::box));
  put<std::uint32_t>(out, static_cast<std::uint32_t>(spec.low.size()));
  for (float v : spec.low) put<float>(out, v);
  for (float v : spec.high) put<float>(out, v);
}

inline Verdict refuse(ErrorCode code, std::string message) {
  return Verdict(ErrorFrame{code, std::move(message)});
}

// Reads fixed-width little-endian fields; every read checks the remaining length first.
class Cursor {
 public:
  Cursor(std::span<const std::uint8_t> bytes, const char* what) : bytes_(bytes), what_(what) {}

  template <class T>
  bool get(T* value) {
    if (remaining() < sizeof(T)) return false;
    std::memcpy(value, bytes_.data() + offset_, sizeof(T));
    *value = detail::to_little_endian(*value);
    offset_ += sizeof(T);
    return true;
  }
  bool take(std::size_t size, const std::uint8_t** data) {
    if (remaining() < size) return false;
    *data = bytes_.data() + offset_;
    offset_ += size;
    return true;
  }
  std::size_t remaining() const { return bytes_.size() - offset_; }
  std::size_t offset() const { return offset_; }

  Verdict truncated(const char* field) const {
    return refuse(ErrorCode::malformed,
                  str_cat(what_, " frame: payload of ", bytes_.size(), " bytes ends before its ",
                          field, " (offset ", offset_, ")"));
  }
  Verdict trailing() const {
    return refuse(ErrorCode::malformed,
                  str_cat(what_, " frame: ", remaining(),
                          " unexpected bytes after the last field (offset ", offset_, ")"));
  }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t offset_ = 0;
  const char* what_;
};

// `what` names the tensor in the messages ("observation", "step field 'mask'").
inline Verdict get_spec(Cursor& in, TensorSpec* spec, const std::string& what = "observation") {
  std::uint8_t dtype = 0, rank = 0;
  if (!in.get(&dtype) || !in.get(&rank)) return in.truncated("observation spec");
  if (dtype > static_cast<std::uint8_t>(DType::i32)) {
    return refuse(ErrorCode::malformed, str_cat(what, " spec: unknown dtype code ", int{dtype}));
  }
  if (rank > Shape::kMaxRank) {
    return refuse(ErrorCode::malformed, str_cat(what, " spec: rank ", int{rank},
                                                " exceeds the maximum of ", Shape::kMaxRank));
  }
  std::int64_t dims[Shape::kMaxRank];
  std::uint64_t bytes = size_of(static_cast<DType>(dtype));
  for (int i = 0; i < rank; ++i) {
    std::uint32_t d = 0;
    if (!in.get(&d)) return in.truncated("dimensions");
    if (d == 0 || d > static_cast<std::uint32_t>(std::numeric_limits<std::int32_t>::max())) {
      return refuse(ErrorCode::malformed, str_cat(what, " spec: dimension ", i, " is ", d));
    }
    bytes *= d;
    if (bytes > kMaxObservationBytes) {
      return refuse(ErrorCode::malformed, str_cat(what, " spec: a tensor of more than 4 GiB"));
    }
    dims[i] = d;
  }
  spec->dtype = static_cast<DType>(dtype);
  spec->shape = Shape(std::span<const std::int64_t>(dims, rank));
  return Verdict::ok();
}

// `what` names the frame ("HELLO", "WELCOME") in the messages.
inline Verdict get_action_spec(Cursor& in, const char* what, ActionSpec* spec) {
  std::uint8_t kind = 0;
  if (!in.get(&kind)) return in.truncated("action kind");
  if (kind == static_cast<std::uint8_t>(ActionKind::discrete)) {
    std::uint32_t n = 0;
    if (!in.get(&n)) return in.truncated("action count");
    if (n == 0 || n > static_cast<std::uint32_t>(std::numeric_limits<std::int32_t>::max())) {
      return refuse(ErrorCode::malformed,
                    str_cat(what, " frame: ", n, " discrete actions (must be 1 to 2^31 - 1)"));
    }
    *spec = ActionSpec::discrete(static_cast<std::int32_t>(n));
    return Verdict::ok();
  }
  if (kind == static_cast<std::uint8_t>(ActionKind::branches)) {
    std::uint32_t count = 0;
    if (!in.get(&count)) return in.truncated("branch count");
    if (count < 2 || count > ActionSpec::kMaxBranches) {
      return refuse(ErrorCode::malformed,
                    str_cat(what, " frame: ", count, " action branches (must be 2 to ",
                            ActionSpec::kMaxBranches, ")"));
    }
    std::vector<std::int32_t> sizes(count);
    std::int64_t total = 0;
    for (std::uint32_t k = 0; k < count; ++k) {
      std::uint32_t n = 0;
      if (!in.get(&n)) return in.truncated("branch sizes");
      total += n;
      if (n == 0 || total > std::numeric_limits<std::int32_t>::max()) {
        return refuse(ErrorCode::malformed,
                      str_cat(what, " frame: action branch ", k, " has ", n,
                              " actions (every branch 1 or more, 2^31 - 1 in all at most)"));
      }
      sizes[k] = static_cast<std::int32_t>(n);
    }
    *spec = ActionSpec::branched(std::move(sizes));
    return Verdict::ok();
  }
  if (kind != static_cast<std::uint8_t>(ActionKind::box)) {
    return refuse(ErrorCode::malformed, str_cat(what, " frame: unknown action kind ", int{kind},
                                                " (0 = discrete, 1 = box, 2 = branches)"));
  }
  std::uint32_t dims = 0;
  if (!in.get(&dims)) return in.truncated("box dimensions");
  if (dims == 0 || dims > kMaxActionDims) {
    return refuse(ErrorCode::malformed, str_cat(what, " frame: a box action of ", dims,
                                                " dimensions (must be 1 to ", kMaxActionDims, ")"));
  }
  // Both bounds are present before anything is allocated.
  const std::uint8_t* bounds = nullptr;
  if (!in.take(8 * std::size_t{dims}, &bounds)) return in.truncated("box bounds");
  std::vector<float> low(dims), high(dims);
  for (std::uint32_t d = 0; d < dims; ++d) {
    std::memcpy(&low[d], bounds + 4 * d, 4);
    std::memcpy(&high[d], bounds + 4 * (dims + d), 4);
    low[d] = detail::to_little_endian(low[d]);
    high[d] = detail::to_little_endian(high[d]);
    if (!std::isfinite(low[d]) || !std::isfinite(high[d])) {
      return refuse(ErrorCode::malformed,
                    str_cat(what, " frame: box dimension ", d, " has a non-finite bound [", low[d],
                            ", ", high[d], "]"));
    }
    if (!(low[d] < high[d])) {
      return refuse(ErrorCode::malformed,
                    str_cat(what, " frame: box dimension ", d, " has bounds [", low[d], ", ",
                            high[d], "]: the lower bound must be below the upper"));
    }
  }
  *spec = ActionSpec::box(std::move(low), std::move(high));
  return Verdict::ok();
}

// The declared fields: a u8 count, then for each a u8 name length, the name and its tensor spec.
inline void put_fields(std::string& out, const std::vector<StepFieldSpec>& fields) {
  StepSpec::validate_fields(fields, "protocol");
  put<std::uint8_t>(out, static_cast<std::uint8_t>(fields.size()));
  for (const StepFieldSpec& f : fields) {
    put<std::uint8_t>(out, static_cast<std::uint8_t>(f.name.size()));
    out.append(f.name);
    put_spec(out, f.spec);
  }
}

inline Verdict get_fields(Cursor& in, const char* what, std::vector<StepFieldSpec>* fields) {
  std::uint8_t count = 0;
  if (!in.get(&count)) return in.truncated("step field count");
  if (count > StepSpec::kMaxFields) {
    return refuse(
        ErrorCode::malformed,
        str_cat(what, " frame: ", int{count}, " step fields (at most ", StepSpec::kMaxFields, ")"));
  }
  fields->clear();
  for (int k = 0; k < count; ++k) {
    std::uint8_t name_bytes = 0;
    const std::uint8_t* name = nullptr;
    if (!in.get(&name_bytes)) return in.truncated("step field name length");
    if (name_bytes > StepFieldSpec::kMaxNameBytes) {
      return refuse(ErrorCode::malformed,
                    str_cat(what, " frame: step field ", k, " has a name of ", int{name_bytes},
                            " bytes (at most ", StepFieldSpec::kMaxNameBytes, ")"));
    }
    if (!in.take(name_bytes, &name)) return in.truncated("step field name");
    StepFieldSpec field;
    field.name.assign(reinterpret_cast<const char*>(name), name_bytes);
    if (Verdict v = get_spec(in, &field.spec, str_cat("step field ", k)); !v.is_ok()) return v;
    fields->push_back(std::move(field));
  }
  if (std::string problem = StepSpec::fields_problem(*fields); !problem.empty())
    return refuse(ErrorCode::malformed, str_cat(what, " frame: ", problem));
  return Verdict::ok();
}

inline void put_step_spec(std::string& out, const StepSpec& spec) {
  put_spec(out, spec.observation);
  put_action_spec(out, spec.action);
  put_fields(out, spec.fields);
}

inline Verdict get_step_spec(Cursor& in, const char* what, StepSpec* spec) {
  if (Verdict v = get_spec(in, &spec->observation); !v.is_ok()) return v;
  if (Verdict v = get_action_spec(in, what, &spec->action); !v.is_ok()) return v;
  return get_fields(in, what, &spec->fields);
}

inline std::uint32_t checked_u32(std::size_t value, const char* what) {
  SEEDRL_REQUIRE(value <= std::numeric_limits<std::uint32_t>::max(), "protocol: ", what, " ", value,
                 " does not fit the wire format");
  return static_cast<std::uint32_t>(value);
}

}  // namespace seedrl::protocol::wire
