// ReplayItemCodec<Unroll>: how an R2D2 sequence is written into a saved replay state.
//
// Each tensor is written as dtype (u8), rank (u8), dims (i64 each) and its bytes (a blob); an
// undefined tensor (no logits, no recurrent state) as dtype 255. Reading checks every field, so a
// corrupt or truncated state is an error naming the source, never a crash.
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

inline Tensor read_tensor(ByteReader& r, const char* what) {
  const auto dtype = r.get<std::uint8_t>();
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

}  // namespace detail

template <>
struct ReplayItemCodec<Unroll> {
  static void write(ByteWriter& w, const Unroll& u) {
    detail::write_tensor(w, u.observations);
    detail::write_tensor(w, u.rewards);
    detail::write_tensor(w, u.flags);
    detail::write_tensor(w, u.actions);
    detail::write_tensor(w, u.behaviour);
    detail::write_tensor(w, u.policy_versions);
    detail::write_tensor(w, u.initial_state.h);
    detail::write_tensor(w, u.initial_state.c);
    w.put<std::int32_t>(u.slot);
  }
  static Unroll read(ByteReader& r) {
    Unroll u;
    u.observations = detail::read_tensor(r, "observations");
    u.rewards = detail::read_tensor(r, "rewards");
    u.flags = detail::read_tensor(r, "flags");
    u.actions = detail::read_tensor(r, "actions");
    u.behaviour = detail::read_tensor(r, "behaviour");
    u.policy_versions = detail::read_tensor(r, "policy versions");
    u.initial_state.h = detail::read_tensor(r, "state h");
    u.initial_state.c = detail::read_tensor(r, "state c");
    u.slot = r.get<std::int32_t>();
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
  return is(u.observations, spec.observation.shape.prepend({l}), spec.observation.dtype) &&
         is(u.rewards, {l}, DType::f32) && is(u.flags, {l}, DType::u8) &&
         is(u.actions, spec.action_shape().prepend({l}), spec.action_dtype()) &&
         is(u.policy_versions, {l}, DType::i32) && state && behaviour;
}

}  // namespace seedrl
