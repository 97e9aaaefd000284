// ReplayItemCodec<Unroll>: how an R2D2 sequence is written into a saved replay state.
//
// Each tensor is written as dtype (u8), rank (u8), dims (i64 each) and its bytes (a blob); an
// undefined tensor (no logits, no recurrent state) as dtype 255. An unroll starts with the byte 254
// and its number of declared step fields (u8), then its tensors, slot and fields; a state written
// before step fields existed starts with its observations' dtype instead and still reads (with
// no fields). Reading checks every field, so a corrupt or truncated state is an error naming the
// source, never a crash.
#pragma once

#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "seedrl/experience/unroll.hpp"
#include "seedrl/replay/item_codec.hpp"

namespace seedrl {

namespace detail {

inline constexpr std::uint8_t kUndefinedTensor = 255;
inline constexpr std::uint8_t kUnrollWithFields = 254;

inline void write_tensor(ByteWriter& w, const Tensor& t) {
  if (!t.defined()) {
    w.put<std::uint8_t>(kUndefinedTensor);
    return;
  }
  w.put<std::uint8_t>(static_cast<std::uint8_t>(t.dtype()));
  w.put<std::uint8_t>(static_cast<std::uint8_t>(t.rank()));
  for (int i = 0; i < t.rank(); ++i) w.put<std::int64_t>(t.dim(i));
  w.blob(std::string_view(static_cast<const char*>(t.raw_data()), t.bytes()));
}

// A tensor whose dtype byte has been read.
inline Tensor read_tensor_after(ByteReader& r, std::uint8_t dtype, std::string_view what) {
  if (dtype == kUndefinedTensor) return {};
  SEEDRL_REQUIRE(dtype <= static_cast<std::uint8_t>(DType::i32), r.source(), ": unroll ", what,
                 " has unknown dtype ", int(dtype));
  const auto rank = r.get<std::uint8_t>();
  SEEDRL_REQUIRE(rank <= 8, r.source(), ": unroll ", what, " has rank ", int(rank));
  std::vector<std::int64_t> dims(rank);
  for (std::int64_t& d : dims) {
    d = r.get<std::int64_t>();
    SEEDRL_REQUIRE(d >= 0 && d <= (std::int64_t{1} << 32), r.source(), ": unroll ", what,
                   " has dimension ", d);
  }
  const Shape shape{std::span<const std::int64_t>(dims)};
  const std::string_view bytes = r.blob();
  const auto type = static_cast<DType>(dtype);
  SEEDRL_REQUIRE(bytes.size() == static_cast<std::size_t>(shape.numel()) * size_of(type),
                 r.source(), ": unroll ", what, " ", shape, " has ", bytes.size(), " bytes");
  Tensor t = Tensor::empty(shape, type);
  if (!bytes.empty()) std::memcpy(t.raw_data(), bytes.data(), bytes.size());
  return t;
}

inline Tensor read_tensor(ByteReader& r, std::string_view what) {
  return read_tensor_after(r, r.get<std::uint8_t>(), what);
}

}  // namespace detail

template <>
struct ReplayItemCodec<Unroll> {
  static void write(ByteWriter& w, const Unroll& u) {
    SEEDRL_REQUIRE(u.fields.size() <= StepSpec::kMaxFields, "replay: an unroll with ",
                   u.fields.size(), " step fields");
    w.put<std::uint8_t>(detail::kUnrollWithFields);
    w.put<std::uint8_t>(static_cast<std::uint8_t>(u.fields.size()));
    detail::write_tensor(w, u.observations);
    detail::write_tensor(w, u.rewards);
    detail::write_tensor(w, u.flags);
    detail::write_tensor(w, u.actions);
    detail::write_tensor(w, u.behaviour);
    detail::write_tensor(w, u.policy_versions);
    detail::write_tensor(w, u.initial_state.h);
    detail::write_tensor(w, u.initial_state.c);
    w.put<std::int32_t>(u.slot);
    for (const Tensor& field : u.fields) detail::write_tensor(w, field);
  }
  static Unroll read(ByteReader& r) {
    Unroll u;
    std::uint8_t first = r.get<std::uint8_t>();
    std::size_t num_fields = 0;
    if (first == detail::kUnrollWithFields) {
      num_fields = r.get<std::uint8_t>();
      SEEDRL_REQUIRE(num_fields <= StepSpec::kMaxFields, r.source(), ": an unroll with ",
                     num_fields, " step fields (at most ", StepSpec::kMaxFields, ")");
      first = r.get<std::uint8_t>();
    }
    u.observations = detail::read_tensor_after(r, first, "observations");
    u.rewards = detail::read_tensor(r, "rewards");
    u.flags = detail::read_tensor(r, "flags");
    u.actions = detail::read_tensor(r, "actions");
    u.behaviour = detail::read_tensor(r, "behaviour");
    u.policy_versions = detail::read_tensor(r, "policy versions");
    u.initial_state.h = detail::read_tensor(r, "state h");
    u.initial_state.c = detail::read_tensor(r, "state c");
    u.slot = r.get<std::int32_t>();
    for (std::size_t k = 0; k < num_fields; ++k)
      u.fields.push_back(detail::read_tensor(r, "step field"));
    return u;
  }
};

/// Whether `u` has exactly the layout `spec` describes (a loaded replay state is checked with it).
inline bool matches(const Unroll& u, const UnrollSpec& spec) {
  auto is = [](const Tensor& t, const Shape& shape, DType dtype) {
    return t.defined() && t.shape() == shape && t.dtype() == dtype;
  };
  const std::int64_t l = spec.length;
  const bool state = spec.state_size > 0 ? is(u.initial_state.h, {spec.state_size}, DType::f32) &&
                                               is(u.initial_state.c, {spec.state_size}, DType::f32)
                                         : !u.initial_state.h.defined();
  const bool behaviour = spec.store_behaviour
                             ? is(u.behaviour, {l, spec.behaviour_size()}, DType::f32)
                             : !u.behaviour.defined();
  if (u.fields.size() != spec.fields.size()) return false;
  for (std::size_t k = 0; k < u.fields.size(); ++k)
    if (!is(u.fields[k], spec.fields[k].spec.shape.prepend({l}), spec.fields[k].spec.dtype))
      return false;
  return is(u.observations, spec.observation.shape.prepend({l}), spec.observation.dtype) &&
         is(u.rewards, {l}, DType::f32) && is(u.flags, {l}, DType::u8) &&
         is(u.actions, spec.action_shape().prepend({l}), spec.action_dtype()) &&
         is(u.policy_versions, {l}, DType::i32) && state && behaviour;
}

}  // namespace seedrl
