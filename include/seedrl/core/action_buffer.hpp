// ActionBuffer: where a step's actions are written, of whichever kind: a view of num_envs *
// ActionSpec::dims() values, i32 for discrete actions and branches, f32 for a box. One member of
// a request instead of one per kind; who writes it asks for the type it writes (discrete() or
// box()), and a check compares it with a spec once (mismatch()). ActionValues owns such room,
// of the kind a spec says, for whoever keeps actions between steps (a socket session).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "seedrl/core/action_spec.hpp"
#include "seedrl/core/dtype.hpp"
#include "seedrl/core/error.hpp"

namespace seedrl {

class ActionBuffer {
 public:
  ActionBuffer() = default;
  ActionBuffer(std::span<std::int32_t> discrete)  // NOLINT: a span of i32 is discrete actions
      : data_(discrete.data()), size_(discrete.size()), dtype_(DType::i32) {}
  ActionBuffer(std::span<float> box)  // NOLINT: a span of f32 is box actions
      : data_(box.data()), size_(box.size()), dtype_(DType::f32) {}
  ActionBuffer(std::vector<std::int32_t>& discrete)  // NOLINT: as its span
      : ActionBuffer(std::span<std::int32_t>(discrete)) {}
  ActionBuffer(std::vector<float>& box)  // NOLINT: as its span
      : ActionBuffer(std::span<float>(box)) {}

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  DType dtype() const { return dtype_; }

  /// The values as discrete actions (i32: one per environment, or K per environment for
  /// branches); throws where they are a box's.
  std::span<std::int32_t> discrete() const {
    SEEDRL_REQUIRE(dtype_ == DType::i32 || size_ == 0,
                   "ActionBuffer: asked for discrete actions, holds box actions");
    return {static_cast<std::int32_t*>(data_), size_};
  }
  /// The values as box actions (f32: D per environment); throws where they are discrete.
  std::span<float> box() const {
    SEEDRL_REQUIRE(dtype_ == DType::f32 || size_ == 0,
                   "ActionBuffer: asked for box actions, holds discrete actions");
    return {static_cast<float*>(data_), size_};
  }

  /// "" when the buffer holds room for `num_envs` environments' actions of `spec`, else what is
  /// wrong ("box actions need room for 8 values (4 environments x 2), got 6 discrete values").
  std::string mismatch(const ActionSpec& spec, std::size_t num_envs) const;

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
  DType dtype_ = DType::i32;
};

/// Room for `num_envs` environments' actions of `spec`, of its kind (zeros); view() lends it.
class ActionValues {
 public:
  ActionValues() = default;
  ActionValues(const ActionSpec& spec, std::size_t num_envs);

  ActionBuffer view() { return box_kind_ ? ActionBuffer(box_) : ActionBuffer(discrete_); }

 private:
  std::vector<std::int32_t> discrete_;
  std::vector<float> box_;
  bool box_kind_ = false;
};

}  // namespace seedrl
