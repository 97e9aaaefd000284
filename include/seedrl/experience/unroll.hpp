// Unroll: consecutive steps of one environment slot, the unit the learner trains on.
//
// Step t holds what the server saw and did at that step: the observation, the reward received
// on arriving there, the step's flags, the action chosen, the behaviour policy (V-trace, PPO) and
// the parameter version that chose it. initial_state is the recurrent state before step 0.
//
// Actions are discrete (one i32 per step, or K i32 for K action branches) or a box
// (UnrollSpec::action_dims > 0: D f32 per step, the Gaussian policy's sample before it was clipped
// to the environment's bounds, which is what its log-probability is of). The behaviour policy is
// recorded as the network's policy outputs at acting time: the logits [A] for discrete actions, the
// Gaussian's mean and log standard deviation [2 D] for a box, so a learner recomputes mu(a|x)
// exactly as inference had it. The flags are core/step_flags.hpp's: a last step followed by a first
// one is an episode boundary, not experience. The fields the environments declare
// (core/step_spec.hpp) are kept beside the observations, one [L, field...] tensor each
// (Unroll::fields, UnrollBatch::field).
#pragma once

#include <cstdint>
#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/core/step_flags.hpp"
#include "seedrl/core/step_spec.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/core/tensor_spec.hpp"
#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/experience/acting_gate.hpp"
#include "seedrl/experience/bounded_queue.hpp"
#include "seedrl/nn/lstm_state.hpp"

namespace seedrl {

/// What an unroll holds and how long it is.
struct UnrollSpec {
  TensorSpec observation;
  std::int32_t num_actions = 0;       ///< discrete actions (0 with action_dims)
  std::int64_t action_dims = 0;       ///< > 0: box actions of this many reals
  std::int64_t length = 0;            ///< steps per unroll: burn_in + T + 1
  std::int64_t overlap = 1;           ///< steps shared with the next unroll: burn_in + 1
  bool store_behaviour = true;        ///< keep the behaviour policy (V-trace, PPO)
  std::int64_t state_size = 0;        ///< recurrent state size H (0: not recurrent)
  std::vector<StepFieldSpec> fields;  ///< the steps' declared fields, kept in every unroll
  /// The actions' spec (a box's bounds, for a learner that scales to them: SAC).
  ActionSpec action_spec;

  bool box_actions() const { return action_dims > 0; }
  /// K >= 2 for action branches (action_spec.branches), else 0.
  std::int64_t action_branches() const {
    return box_actions() ? 0 : static_cast<std::int64_t>(action_spec.branches.size());
  }
  /// Shape of one step's action: [] (one i32), [K] (i32, one per branch) or [D] (f32).
  Shape action_shape() const {
    if (box_actions()) return Shape{action_dims};
    if (action_branches() > 0) return Shape{action_branches()};
    return Shape{};
  }
  DType action_dtype() const { return box_actions() ? DType::f32 : DType::i32; }
  /// Floats recording the behaviour policy per step: A logits, or a Gaussian's D means and D log
  /// standard deviations.
  std::int64_t behaviour_size() const { return box_actions() ? 2 * action_dims : num_actions; }
  /// The position of declared field `name`; throws naming `who`, the field and the declared ones
  /// when there is none.
  std::size_t field_index(std::string_view name, std::string_view who) const {
    for (std::size_t i = 0; i < fields.size(); ++i)
      if (fields[i].name == name) return i;
    fail(who, ": no step field '", name, "' (the steps declare ",
         StepSpec::fields_to_string(fields), ")");
  }
};

struct Unroll {
  Tensor observations;  ///< [L, obs...]
  Tensor rewards;       ///< [L] f32
  Tensor flags;         ///< [L] u8
  Tensor actions;       ///< [L] i32, [L, K] i32 for action branches, or [L, D] f32 for a box
  /// The behaviour policy, f32 when stored: logits [L, A], a Gaussian's mean and log std
  /// [L, 2 D], or (R2D2 with actor priorities) the Q-values inference acted on [L, A].
  Tensor behaviour;
  Tensor policy_versions;       ///< [L] i32
  nn::LstmState initial_state;  ///< [H] each when recurrent
  std::vector<Tensor> fields;   ///< [L, field...] per declared field, in UnrollSpec::fields' order
  std::int32_t slot = -1;

  static std::unique_ptr<Unroll> allocate(const UnrollSpec& spec) {
    auto u = std::make_unique<Unroll>();
    u->observations =
        Tensor::empty(spec.observation.shape.prepend({spec.length}), spec.observation.dtype);
    u->rewards = Tensor::empty({spec.length});
    u->flags = Tensor::empty({spec.length}, DType::u8);
    u->actions = Tensor::empty(spec.action_shape().prepend({spec.length}), spec.action_dtype());
    if (spec.store_behaviour) u->behaviour = Tensor::empty({spec.length, spec.behaviour_size()});
    u->policy_versions = Tensor::empty({spec.length}, DType::i32);
    if (spec.state_size > 0)
      u->initial_state = {Tensor::empty({spec.state_size}), Tensor::empty({spec.state_size})};
    for (const StepFieldSpec& f : spec.fields)
      u->fields.push_back(Tensor::empty(f.spec.shape.prepend({spec.length}), f.spec.dtype));
    return u;
  }

  /// Whether this unroll has `spec`'s fields and shapes, each in a buffer no other tensor views:
  /// then it can be filled again in place (UnrollPool).
  bool reusable_for(const UnrollSpec& spec) const {
    auto fits = [](const Tensor& t, const Shape& shape, DType dtype) {
      return t.defined() && t.sole_view() && t.shape() == shape && t.dtype() == dtype;
    };
    const std::int64_t n = spec.length;
    if (!fits(observations, spec.observation.shape.prepend({n}), spec.observation.dtype) ||
        !fits(rewards, {n}, DType::f32) || !fits(flags, {n}, DType::u8) ||
        !fits(actions, spec.action_shape().prepend({n}), spec.action_dtype()) ||
        !fits(policy_versions, {n}, DType::i32))
      return false;
    if (spec.store_behaviour ? !fits(behaviour, {n, spec.behaviour_size()}, DType::f32)
                             : behaviour.defined())
      return false;
    if (fields.size() != spec.fields.size()) return false;
    for (std::size_t k = 0; k < fields.size(); ++k)
      if (!fits(fields[k], spec.fields[k].spec.shape.prepend({n}), spec.fields[k].spec.dtype))
        return false;
    if (spec.state_size == 0) return !initial_state.h.defined() && !initial_state.c.defined();
    return fits(initial_state.h, {spec.state_size}, DType::f32) &&
           fits(initial_state.c, {spec.state_size}, DType::f32);
  }
};

/// Unrolls their consumer is done with, kept for the producer to fill again: the inference
/// thread's UnrollStore takes one per unroll it starts, and the learner gives each batch back when
/// it pops the next (UnrollQueue::pop_many), so a run in its steady state allocates no unroll
/// memory. (Allocating tens of kilobytes per unroll on the inference thread and freeing it on the
/// learner's kept glibc's malloc consolidating its heap: docs/performance.md, issue 19.)
///
/// Thread-safe. Keeps at most `capacity` unrolls; an unroll that does not fit the spec asked for,
/// or one whose buffers another tensor still views, is freed rather than reused.
class UnrollPool {
 public:
  explicit UnrollPool(std::size_t capacity) : capacity_(capacity) {}

  /// A kept unroll that fits `spec` (its contents are stale: the caller overwrites every step),
  /// or a newly allocated one.
  std::unique_ptr<Unroll> take(const UnrollSpec& spec) SEEDRL_EXCLUDES(mutex_) {
    std::unique_ptr<Unroll> u;
    {
      MutexLock lock(mutex_);
      if (!kept_.empty()) {
        u = std::move(kept_.back());
        kept_.pop_back();
      }
    }
    if (u && u->reusable_for(spec)) return u;
    return Unroll::allocate(spec);  // `u`, if any, is freed
  }

  /// Keeps the unrolls of `done` (null ones skipped) up to the capacity, frees the rest, and
  /// empties `done`.
  void give(std::vector<std::unique_ptr<Unroll>>& done) SEEDRL_EXCLUDES(mutex_) {
    {
      MutexLock lock(mutex_);
      for (std::unique_ptr<Unroll>& u : done) {
        if (u && kept_.size() < capacity_) kept_.push_back(std::move(u));
      }
    }
    done.clear();
  }

  std::size_t size() const SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return kept_.size();
  }
  std::size_t capacity() const { return capacity_; }

 private:
  const std::size_t capacity_;
  mutable Mutex mutex_;
  std::vector<std::unique_ptr<Unroll>> kept_ SEEDRL_GUARDED_BY(mutex_);
};

/// Full unrolls on their way from inference to the learner (a full queue blocks inference: the
/// learner's back-pressure on the actors), with the pool that brings them back for reuse.
///
/// pop_many and pop_available first give the unrolls still in `out` (the previous batch, which
/// the consumer is done with once it asks for the next) to pool(); the inference server's store
/// takes its unrolls from there. A consumer that keeps an unroll moves it out of `out` first
/// (null entries are skipped); one that keeps a tensor of it only stops its reuse.
///
/// acting() is the gate a synchronous consumer uses to pause the producers (acting_gate.hpp):
/// push() counts toward its hold, close() opens it for good.
class UnrollQueue : public BoundedQueue<std::unique_ptr<Unroll>> {
  using Base = BoundedQueue<std::unique_ptr<Unroll>>;

 public:
  /// `capacity` unrolls queued at most; the pool keeps as many.
  explicit UnrollQueue(std::size_t capacity) : Base(capacity), pool_(capacity) {}

  bool pop_many(std::size_t count, std::vector<std::unique_ptr<Unroll>>& out) {
    pool_.give(out);
    const bool popped = Base::pop_many(count, out);
    acting_.taken(static_cast<long long>(out.size()));
    return popped;
  }
  bool pop_available(std::size_t max_count, std::vector<std::unique_ptr<Unroll>>& out) {
    pool_.give(out);
    const bool popped = Base::pop_available(max_count, out);
    acting_.taken(static_cast<long long>(out.size()));
    return popped;
  }

  /// Hides BoundedQueue::push (call it on the UnrollQueue): the gate counts the unroll first, so
  /// that a consumer woken by the push never takes it before it was counted.
  bool push(std::unique_ptr<Unroll> unroll) {
    acting_.pushed();
    return Base::push(std::move(unroll));
  }
  /// Hides BoundedQueue::close (call it on the UnrollQueue): the gate opens too.
  void close() {
    acting_.close();
    Base::close();
  }

  UnrollPool& pool() { return pool_; }
  ActingGate& acting() { return acting_; }

 private:
  UnrollPool pool_;
  ActingGate acting_;
};

/// B unrolls stacked time-major: [L, B, ...] tensors, built by stack().
struct UnrollBatch {
  Tensor observations;  ///< [L, B, obs...]
  Tensor rewards;       ///< [L, B]
  Tensor flags;         ///< [L, B] u8
  Tensor actions;       ///< [L, B] i32, [L, B, K] i32 for action branches, or [L, B, D] f32 (a box)
  Tensor behaviour;     ///< [L, B, A], or [L, B, 2 D] for box actions
  Tensor policy_versions;       ///< [L, B] i32
  nn::LstmState initial_state;  ///< [B, H] each
  std::vector<Tensor> fields;   ///< [L, B, field...] per declared field, in the spec's order

  /// The declared field `name`, [L, B, field...]; throws naming it and the declared ones when
  /// the steps have no such field.
  const Tensor& field(std::string_view name) const { return fields[field_index_of(name)]; }
  /// The declared field `name`, or nullptr where the steps have no such field.
  const Tensor* find_field(std::string_view name) const {
    for (std::size_t k = 0; k < field_names_.size(); ++k)
      if (field_names_[k] == name) return &fields[k];
    return nullptr;
  }

  /// Copies `unrolls` (a random-access range of pointers to unrolls of `spec`: unique_ptr,
  /// shared_ptr or raw) into this batch, reusing its storage when the shape repeats.
  template <std::ranges::random_access_range Range>
  void stack(const Range& unrolls, const UnrollSpec& spec) {
    const auto b = static_cast<std::int64_t>(unrolls.size());
    SEEDRL_REQUIRE(b > 0, "UnrollBatch::stack: no unrolls");
    const std::int64_t length = spec.length;
    ensure(observations, spec.observation.shape.prepend({length, b}), spec.observation.dtype);
    ensure(rewards, {length, b}, DType::f32);
    ensure(flags, {length, b}, DType::u8);
    ensure(actions, spec.action_shape().prepend({length, b}), spec.action_dtype());
    ensure(policy_versions, {length, b}, DType::i32);
    if (spec.store_behaviour) ensure(behaviour, {length, b, spec.behaviour_size()}, DType::f32);
    if (spec.state_size > 0) {
      ensure(initial_state.h, {b, spec.state_size}, DType::f32);
      ensure(initial_state.c, {b, spec.state_size}, DType::f32);
    }
    const bool per_step_actions = spec.action_shape().rank() > 0;  // [D] or [K] per step
    if (field_names_.size() != spec.fields.size()) field_names_.resize(spec.fields.size());
    fields.resize(spec.fields.size());
    for (std::size_t k = 0; k < spec.fields.size(); ++k) {
      if (field_names_[k] != spec.fields[k].name) field_names_[k] = spec.fields[k].name;
      ensure(fields[k], spec.fields[k].spec.shape.prepend({length, b}), spec.fields[k].spec.dtype);
    }
    for (std::int64_t j = 0; j < b; ++j) {
      const Unroll& u = *unrolls[static_cast<std::size_t>(j)];
      SEEDRL_REQUIRE(u.observations.dim(0) == length, "UnrollBatch::stack: unroll ", j, " has ",
                     u.observations.dim(0), " steps, expected ", length);
      for (std::int64_t t = 0; t < length; ++t) {
        observations[t][j].copy_from(u.observations[t]);
        if (spec.store_behaviour) behaviour[t][j].copy_from(u.behaviour[t]);
        if (per_step_actions) actions[t][j].copy_from(u.actions[t]);
        for (std::size_t k = 0; k < fields.size(); ++k) {
          std::memcpy(fields[k][t].row_data(j), u.fields[k].row_data(t), u.fields[k].row_bytes());
        }
      }
      scatter_column(rewards, u.rewards, j);
      scatter_column(flags, u.flags, j);
      if (!per_step_actions) scatter_column(actions, u.actions, j);
      scatter_column(policy_versions, u.policy_versions, j);
      if (spec.state_size > 0) {
        initial_state.h[j].copy_from(u.initial_state.h);
        initial_state.c[j].copy_from(u.initial_state.c);
      }
    }
  }

 private:
  std::size_t field_index_of(std::string_view name) const {
    for (std::size_t k = 0; k < field_names_.size(); ++k)
      if (field_names_[k] == name) return k;
    std::string declared;
    for (const std::string& n : field_names_) declared += (declared.empty() ? "" : ", ") + n;
    fail("UnrollBatch: no step field '", name, "' (the steps declare ",
         declared.empty() ? "none" : declared, ")");
  }
  static void ensure(Tensor& t, const Shape& shape, DType dtype) {
    if (!t.defined() || t.shape() != shape || t.dtype() != dtype) t = Tensor::empty(shape, dtype);
  }
  std::vector<std::string> field_names_;  // the stacked spec's field names, in order
  // column j of a [L, B] tensor = the [L] tensor `src`
  static void scatter_column(const Tensor& dst, const Tensor& src, std::int64_t j) {
    const std::int64_t length = dst.dim(0), b = dst.dim(1);
    const std::size_t element = size_of(dst.dtype());
    const auto* from = static_cast<const char*>(src.raw_data());
    auto* to = static_cast<char*>(dst.raw_data());
    for (std::int64_t t = 0; t < length; ++t) {
      std::memcpy(to + static_cast<std::size_t>(t * b + j) * element,
                  from + static_cast<std::size_t>(t) * element, element);
    }
  }
};

}  // namespace seedrl
