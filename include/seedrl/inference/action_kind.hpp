// ActionKind<A, B>: what the inference server does differently for each kind of action, chosen
// once from the step spec when the server is built (make_action_kind, inference/action_kinds.hpp).
// The server's stages ask it, never the spec, how to:
//
//   plan       which rows the learner's network computes (StepBatch::live)
//   select     the batch's actions from the forward's outputs (and an opponent set's rows)
//   scatter    each row's action into its request's answer
//   record     each row's action and behaviour policy into its unroll step
//
// Kinds: discrete actions, action branches and legal-action masks (DiscreteActionKind,
// inference/discrete_actions.hpp); a box of floats (BoxActionKind, inference/box_actions.hpp).
// A new kind is one file with a class like these and a line in make_action_kind.
//
// Thread-safety: the inference thread's, except serve_opponents (before start()).
#pragma once

#include <cstdint>

#include "seedrl/core/random.hpp"
#include "seedrl/experience/unroll_store.hpp"
#include "seedrl/inference/batch_outcomes.hpp"
#include "seedrl/inference/opponents.hpp"
#include "seedrl/inference/step_batch.hpp"
#include "seedrl/nn/backend.hpp"

namespace seedrl {

template <Agent A, nn::Backend B>
class ActionKind {
 public:
  virtual ~ActionKind() = default;

  /// Sets batch.live: every row (`whole_batch`: a recurrent network's state is the batch's), or
  /// the rows the kind can leave out.
  virtual void plan(StepBatch& batch, bool whole_batch) const = 0;
  /// The batch's actions from batch.outputs; a row an opponent set serves that fails is answered
  /// through `outcomes`.
  virtual void select(const A& agent, StepBatch& batch, Rng& rng, BatchOutcomes& outcomes) = 0;
  /// Every row's action into its request (StepRequest::actions, of its kind).
  virtual void scatter(const StepBatch& batch) const = 0;
  /// Row `row`'s action and behaviour policy (when the unrolls keep one) into `step`.
  virtual void record(const StepBatch& batch, std::int64_t row, UnrollStep& step) const = 0;

  /// Self-play: rows of opponent sets are acted by those sets' values (inference/opponents.hpp);
  /// refused by kinds opponents cannot act in.
  virtual void serve_opponents(const A& agent) = 0;
  /// The opponents' acting, once serve_opponents was called; null before.
  virtual const OpponentActing<A, B>* opponents() const = 0;
};

}  // namespace seedrl
