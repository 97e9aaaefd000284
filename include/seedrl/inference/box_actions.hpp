// BoxActions: a batch's box actions at the inference server, in the three forms it needs.
//
//   drawn      the agent's draws, unbounded (the unrolls keep them: their log-probability is of
//              these)
//   clipped    the environments' actions, clipped to the box (a NaN becomes the upper bound,
//              never a NaN)
//   behaviour  the behaviour policy as the unrolls record it: mean, then log std (agents that
//              store logits)
#pragma once

#include <cstdint>
#include <span>

#include "seedrl/agent/agent.hpp"
#include "seedrl/core/action_spec.hpp"
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

}  // namespace seedrl
