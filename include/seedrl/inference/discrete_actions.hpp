// DiscreteActionKind: discrete actions at the inference server, one per row or K per row for
// action branches, under the batch's legal-action masks where the environment declares them
// (a mask field, StepSpec::action_mask_index). Rows that wait or that an opponent set serves are
// left out of the learner's forward (LiveRows) unless the network is recurrent; the opponent
// sets act for theirs (inference/opponents.hpp). The unrolls keep each row's actions and, when
// the agent stores them, the logits (or the Q-values R2D2's actor priorities act on).
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "seedrl/inference/action_kind.hpp"
#include "seedrl/math/masked_categorical.hpp"

namespace seedrl {

template <Agent A, nn::Backend B>
class DiscreteActionKind final : public ActionKind<A, B> {
 public:
  DiscreteActionKind(const A& agent, const StepSpec& spec)
      : branches_(math::branches_of(spec.action)),
        k_(static_cast<std::size_t>(branches_.count())),
        mask_field_(spec.action_mask_index("InferenceServer")),
        records_q_(records_q_values(agent)) {}

  void plan(StepBatch& batch, bool whole_batch) const override {
    if (whole_batch) {
      batch.live.plan_all(batch.flags.size());
    } else {
      batch.live.plan(batch.flags, batch.policies);
    }
  }

  void select(const A& agent, StepBatch& batch, Rng& rng, BatchOutcomes& outcomes) override {
    actions_.resize(static_cast<std::size_t>(batch.frames) * k_);
    ActingContext context{{}, branches_};
    if (mask_field_ >= 0) {  // a branch that allows nothing (a last step's: validate_step)
      const Tensor& masks = batch.fields[static_cast<std::size_t>(mask_field_)];
      const std::span<std::uint8_t> m(masks.data<std::uint8_t>(), masks.numel());
      math::allow_all_where_none(m, branches_);
      context.action_mask = m;
    }
    if (batch.live.all()) {
      select_actions(agent, *batch.outputs, batch.slots, batch.evaluation, actions_, rng, context);
    } else {
      batch.live.select(agent, batch.outputs, batch.slots, batch.evaluation, context, actions_,
                        rng);
    }
    if (!batch.opponent_values.empty()) {
      opponents_->act(agent, batch.policies, batch.flags, batch.opponent_values, batch.observations,
                      batch.slots, context, actions_, rng, outcomes);
    }
    // The behaviour numbers the unrolls keep: logits, or the Q-values (R2D2's actor priorities).
    behaviour_ = {};
    if constexpr (A::kStoresLogits) {
      if (batch.outputs != nullptr) behaviour_ = batch.outputs->logits[0];
    } else if (records_q_ && batch.outputs != nullptr) {
      behaviour_ = batch.outputs->q[0];
    }
  }

  void scatter(const StepBatch& batch) const override {
    batch.for_each_row([&](StepRequest& r, std::int32_t e, std::int64_t row) {
      const auto first = actions_.begin() + row * static_cast<std::ptrdiff_t>(k_);
      std::copy(first, first + static_cast<std::ptrdiff_t>(k_), &r.actions.discrete()[e * k_]);
    });
  }

  void record(const StepBatch& batch, std::int64_t row, UnrollStep& step) const override {
    const std::size_t first = static_cast<std::size_t>(row) * k_;
    step.set_action(&actions_[first], k_);
    if (behaviour_.defined()) step.behaviour = behaviour_.row_data<float>(batch.live.index(row));
  }

  void serve_opponents(const A& agent) override { opponents_.emplace(agent); }
  const OpponentActing<A, B>* opponents() const override {
    return opponents_ ? &*opponents_ : nullptr;
  }

 private:
  const math::Branches branches_;      // one branch for a plain discrete action
  const std::size_t k_;                // actions per row
  const int mask_field_;               // -1: no masks
  const bool records_q_;               // the unrolls keep the Q-values
  std::vector<std::int32_t> actions_;  // the batch's, K per row
  Tensor behaviour_;                   // [live rows, A] or undefined
  std::optional<OpponentActing<A, B>> opponents_;
};

}  // namespace seedrl
