// BoxActions: a batch's box actions at the inference server, in the three forms it needs; and
// BoxActionKind, the server's action kind (inference/action_kind.hpp) for a box of floats.
//
//   drawn      the agent's draws, unbounded (the unrolls keep them: their log-probability is of
//              these)
//   clipped    the environments' actions, clipped to the box (a NaN becomes the upper bound,
//              never a NaN)
//   behaviour  the behaviour policy as the unrolls record it: mean, then log std (agents that
//              store logits)
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

#include "seedrl/agent/agent.hpp"
#include "seedrl/core/action_spec.hpp"
#include "seedrl/inference/action_kind.hpp"
#include "seedrl/math/softmax.hpp"
#include "seedrl/nn/network.hpp"

namespace seedrl {

struct BoxActions {
  RowMatrixXf drawn, clipped, behaviour;  // [N, D], [N, D], [N, 2 D]

  /// The batch's actions from `outputs` for N = evaluation.size() frames; `version` is the
  /// parameters' (BoxActingContext).
  template <class A>
  void select(const A& agent, const nn::NetworkOutputs& outputs,
              std::span<const std::uint8_t> evaluation, const ActionSpec& action, Rng& rng,
              std::int64_t version) {
    if constexpr (BoxAgent<A>) {
      const auto frames = static_cast<std::int64_t>(evaluation.size());
      const std::int64_t dims = action.dims();
      drawn.resize(frames, dims);
      clipped.resize(frames, dims);
      select_box_actions(agent, outputs, evaluation, drawn, rng,
                         {action.low, action.high, version});
      for (std::int64_t i = 0; i < frames; ++i)
        for (std::int64_t d = 0; d < dims; ++d)
          clipped(i, d) = action.clip(static_cast<std::size_t>(d), drawn(i, d));
      if constexpr (A::kStoresLogits) {
        behaviour.resize(frames, 2 * dims);
        behaviour.leftCols(dims) = outputs.mean.reshape({frames, dims}).template matrix<float>();
        behaviour.rightCols(dims) =
            outputs.log_std.reshape({frames, dims}).template matrix<float>();
      }
    }
  }
};

/// Every row is in the forward (a box's draws are the whole batch's); opponent sets act in
/// discrete action spaces only. The unrolls keep the drawn action and, for agents that store
/// logits, the behaviour's mean and log std.
template <Agent A, nn::Backend B>
class BoxActionKind final : public ActionKind<A, B> {
 public:
  explicit BoxActionKind(const StepSpec& spec) : action_(spec.action) {}

  void plan(StepBatch& batch, bool) const override { batch.live.plan_all(batch.flags.size()); }
  void select(const A& agent, StepBatch& batch, Rng& rng, BatchOutcomes&) override {
    box_.select(agent, *batch.outputs, batch.evaluation, action_, rng, batch.version);
  }
  void scatter(const StepBatch& batch) const override {
    const std::int64_t dims = action_.dims();
    batch.for_each_row([&](StepRequest& r, std::int32_t e, std::int64_t row) {
      std::memcpy(r.actions.box().data() + e * dims, box_.clipped.row(row).data(),
                  static_cast<std::size_t>(dims) * sizeof(float));
    });
  }
  void record(const StepBatch&, std::int64_t row, UnrollStep& step) const override {
    step.set_action(box_.drawn.row(row).data(), static_cast<std::size_t>(action_.dims()));
    if constexpr (A::kStoresLogits) step.behaviour = box_.behaviour.row(row).data();
  }

  void serve_opponents(const A&) override {
    fail("InferenceServer: opponent sets act in discrete action spaces, not ", action_.to_string());
  }
  const OpponentActing<A, B>* opponents() const override { return nullptr; }

 private:
  const ActionSpec action_;
  BoxActions box_;
};

}  // namespace seedrl
