// ActionBuffer's check against a spec and ActionValues' room (core/action_buffer.hpp): compiled
// once here, not in every program that includes the header.
#include "seedrl/core/action_buffer.hpp"

namespace seedrl {

std::string ActionBuffer::mismatch(const ActionSpec& spec, std::size_t num_envs) const {
  const std::size_t values = num_envs * static_cast<std::size_t>(spec.dims());
  const DType want = spec.is_box() ? DType::f32 : DType::i32;
  if (size_ == values && (dtype_ == want || values == 0)) return "";
  return str_cat(spec.is_box() ? "box" : "discrete", " actions need room for ", values, " values (",
                 num_envs, " environments x ", spec.dims(),
                 spec.is_box()        ? ""
                 : spec.is_branched() ? " branches"
                                      : " action",
                 "), got ", size_, dtype_ == DType::f32 ? " box" : " discrete", " values");
}

ActionValues::ActionValues(const ActionSpec& spec, std::size_t num_envs)
    : box_kind_(spec.is_box()) {
  const std::size_t values = num_envs * static_cast<std::size_t>(spec.dims());
  if (box_kind_)
    box_.assign(values, 0.0f);
  else
    discrete_.assign(values, 0);
}

}  // namespace seedrl
