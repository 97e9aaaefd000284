// UnrollStore: builds unrolls slot by slot from the steps inference processes.
//
//   step t of slot s ──append──▶ [ step 0 | step 1 | ... | step L-1 ]  full: returned to the caller
//                                 next unroll starts with the last `overlap` steps of this one
//
// With T transitions per unroll and K burn-in steps, L = K + T + 1 and overlap = K + 1: the last
// step of an unroll (only used to bootstrap) becomes the first of the next, so every transition
// is trained on exactly once. initial_state is the recurrent state before the unroll's step 0.
//
// Not thread-safe: the inference thread owns it.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "seedrl/experience/unroll.hpp"

namespace seedrl {

/// One step as inference saw it, for UnrollStore::append.
struct UnrollStep {
  Tensor observation;  ///< one observation (a view; copied into the unroll)
  float reward = 0.0f;
  std::uint8_t flags = 0;
  /// This step's action as the unroll's action column lays it out (UnrollSpec::action_shape()
  /// and action_dtype(): one i32, K i32 for branches, D f32 for a box): a view, set with
  /// set_action(). The store copies its bytes and asks nothing about the kind.
  std::span<const std::byte> action;
  const float* behaviour = nullptr;  ///< [behaviour_size] when the spec stores the behaviour policy
  std::int32_t policy_version = 0;
  const float* state_h = nullptr;  ///< [H] state before this step; nullptr: zeros
  const float* state_c = nullptr;
  /// The declared fields (UnrollSpec::fields): row `field_row` of each of these tensors, which are
  /// [rows, field...] batches (the inference batch's), is this step's value (copied).
  std::span<const Tensor> fields;
  std::int64_t field_row = 0;

  /// Points `action` at `count` values of the action column's type (they must outlive append()).
  template <class T>
  void set_action(const T* values, std::size_t count = 1) {
    action = std::as_bytes(std::span<const T>(values, count));
  }
};

class UnrollStore {
 public:
  /// `pool`: where unrolls to fill come from (UnrollQueue::pool(): unrolls the learner is done
  /// with), or nullptr to allocate every one.
  UnrollStore(std::int32_t num_slots, const UnrollSpec& spec, UnrollPool* pool = nullptr)
      : spec_(spec), pool_(pool), slots_(static_cast<std::size_t>(num_slots)) {
    SEEDRL_REQUIRE(num_slots > 0, "UnrollStore: num_slots must be positive, got ", num_slots);
    SEEDRL_REQUIRE(spec.length >= 2, "UnrollStore: unroll length must be >= 2 steps, got ",
                   spec.length);
    SEEDRL_REQUIRE(spec.overlap >= 1 && spec.overlap < spec.length,
                   "UnrollStore: overlap must be in [1, ", spec.length, "), got ", spec.overlap);
    if (spec.state_size > 0) {
      for (Slot& s : slots_)
        s.states.resize(static_cast<std::size_t>(2 * spec.length * spec.state_size));
    }
  }

  const UnrollSpec& spec() const { return spec_; }

  /// Appends a step to `slot`; returns the unroll this step completed, if any.
  std::unique_ptr<Unroll> append(std::int32_t slot, const UnrollStep& step) {
    Slot& s = at(slot);
    if (!s.current) s.current = fresh_unroll();
    Unroll& u = *s.current;
    const std::int64_t t = s.count;
    if (t == 0) copy_state(step, u.initial_state);
    if (spec_.state_size > 0) {
      copy_or_zero(step.state_h, state_h(s, t));
      copy_or_zero(step.state_c, state_c(s, t));
    }
    SEEDRL_REQUIRE(step.observation.defined() &&
                       step.observation.shape() == spec_.observation.shape &&
                       step.observation.dtype() == spec_.observation.dtype,
                   "UnrollStore: the step's observation is ",
                   step.observation.defined() ? step.observation.shape().to_string() : "missing",
                   ", the spec's ", spec_.observation.to_string());
    std::memcpy(u.observations.row_data(t), step.observation.raw_data(),
                u.observations.row_bytes());
    u.rewards.data<float>()[t] = step.reward;
    u.flags.data<std::uint8_t>()[t] = step.flags;
    SEEDRL_REQUIRE(step.action.size() == u.actions.row_bytes(),
                   "UnrollStore: the step's action is ", step.action.size(),
                   " bytes, the spec's actions are ", u.actions.row_bytes(), " bytes a step (",
                   name(spec_.action_dtype()), spec_.action_shape().to_string(), ")");
    std::memcpy(u.actions.row_data(t), step.action.data(), step.action.size());
    u.policy_versions.data<std::int32_t>()[t] = step.policy_version;
    SEEDRL_REQUIRE(step.fields.size() == spec_.fields.size(), "UnrollStore: the step has ",
                   step.fields.size(), " fields, the spec declares ",
                   StepSpec::fields_to_string(spec_.fields));
    for (std::size_t k = 0; k < step.fields.size(); ++k) {
      SEEDRL_REQUIRE(step.fields[k].row_bytes() == u.fields[k].row_bytes(), "UnrollStore: field '",
                     spec_.fields[k].name, "' has rows of ", step.fields[k].row_bytes(),
                     " bytes, the spec's have ", u.fields[k].row_bytes());
      std::memcpy(u.fields[k].row_data(t), step.fields[k].row_data(step.field_row),
                  u.fields[k].row_bytes());
    }
    if (spec_.store_behaviour) {
      SEEDRL_REQUIRE(step.behaviour != nullptr,
                     "UnrollStore: the spec stores the behaviour policy but the step has none");
      std::memcpy(u.behaviour.row_data(t), step.behaviour,
                  static_cast<std::size_t>(spec_.behaviour_size()) * sizeof(float));
    }
    u.slot = slot;
    if (++s.count < spec_.length) return nullptr;

    // Full: start the next unroll with the overlapping steps.
    std::unique_ptr<Unroll> done = std::move(s.current);
    s.current = fresh_unroll();
    const std::int64_t from = spec_.length - spec_.overlap;
    // The overlapping steps are the last rows of every field: one copy per field.
    auto copy_rows = [&](const Tensor& to, const Tensor& from_tensor) {
      std::memcpy(to.raw_data(), from_tensor.row_data(from),
                  static_cast<std::size_t>(spec_.overlap) * from_tensor.row_bytes());
    };
    copy_rows(s.current->observations, done->observations);
    copy_rows(s.current->rewards, done->rewards);
    copy_rows(s.current->flags, done->flags);
    copy_rows(s.current->actions, done->actions);
    copy_rows(s.current->policy_versions, done->policy_versions);
    if (spec_.store_behaviour) copy_rows(s.current->behaviour, done->behaviour);
    for (std::size_t k = 0; k < spec_.fields.size(); ++k)
      copy_rows(s.current->fields[k], done->fields[k]);
    if (spec_.state_size > 0) {
      // The next unroll starts at step `from`: its initial state is the one before that step, and
      // the states before the overlapping steps move to the front.
      const auto n = static_cast<std::size_t>(spec_.state_size);
      std::memcpy(s.current->initial_state.h.raw_data(), state_h(s, from), n * sizeof(float));
      std::memcpy(s.current->initial_state.c.raw_data(), state_c(s, from), n * sizeof(float));
      for (std::int64_t i = 0; i < spec_.overlap; ++i) {
        std::memmove(state_h(s, i), state_h(s, from + i), n * sizeof(float));
        std::memmove(state_c(s, i), state_c(s, from + i), n * sizeof(float));
      }
    }
    s.count = spec_.overlap;
    return done;
  }

  /// Drops the slot's partial unroll (its actor restarted or left).
  void reset(std::int32_t slot) { at(slot).count = 0; }

  /// Steps in the slot's unroll under construction.
  std::int64_t pending_steps(std::int32_t slot) const {
    return slots_.at(static_cast<std::size_t>(slot)).count;
  }

 private:
  struct Slot {
    std::unique_ptr<Unroll> current;
    std::int64_t count = 0;
    std::vector<float> states;  // [L][h, c] state before each step of the current unroll
  };

  std::unique_ptr<Unroll> fresh_unroll() const {
    return pool_ ? pool_->take(spec_) : Unroll::allocate(spec_);
  }
  float* state_h(Slot& s, std::int64_t t) const {
    return s.states.data() + 2 * t * spec_.state_size;
  }
  float* state_c(Slot& s, std::int64_t t) const { return state_h(s, t) + spec_.state_size; }

  Slot& at(std::int32_t slot) {
    SEEDRL_REQUIRE(slot >= 0 && static_cast<std::size_t>(slot) < slots_.size(),
                   "UnrollStore: slot ", slot, " out of range [0, ", slots_.size(), ")");
    return slots_[static_cast<std::size_t>(slot)];
  }
  void copy_or_zero(const float* src, float* dst) const {
    const auto n = static_cast<std::size_t>(spec_.state_size);
    if (src) {
      std::memcpy(dst, src, n * sizeof(float));
    } else {
      std::memset(dst, 0, n * sizeof(float));
    }
  }
  void copy_state(const UnrollStep& step, nn::LstmState& state) const {
    if (spec_.state_size == 0) return;
    copy_or_zero(step.state_h, state.h.data<float>());
    copy_or_zero(step.state_c, state.c.data<float>());
  }

  UnrollSpec spec_;
  UnrollPool* pool_;
  std::vector<Slot> slots_;
};

}  // namespace seedrl
