// StepBatch: one inference batch as it passes through the server's stages (the phases of
// inference/inference_server.hpp): gather fills it from the requests, forward adds the outputs,
// the action kind (inference/action_kinds.hpp) selects and scatters its actions, record reads it
// all. Row r is environment r of the requests in order; "frames" is the number of rows.
//
// Thread-safety: the inference thread's.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "seedrl/acting/inference_endpoint.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/inference/live_rows.hpp"
#include "seedrl/nn/lstm_state.hpp"
#include "seedrl/nn/network.hpp"

namespace seedrl {

struct StepBatch {
  explicit StepBatch(Device pinned_for) : live(pinned_for) {}

  std::span<StepRequest* const> requests;
  std::int64_t frames = 0;
  Tensor observations;                             ///< [1, frames, obs...] (host)
  Tensor resets;                                   ///< [1, frames] u8: the row starts an episode
  std::vector<Tensor> fields;                      ///< [frames, field...] per declared step field
  nn::LstmState state_in;                          ///< [frames, H] each; recurrent networks only
  std::vector<std::int32_t> slots;                 ///< the row's slot
  std::vector<std::int32_t> policies;              ///< policy_ids::kLearner, or an opponent set
  std::vector<std::uint8_t> flags;                 ///< the row's step flags
  std::vector<std::uint8_t> evaluation;            ///< 1: an evaluation slot's row
  std::map<std::int32_t, Tensor> opponent_values;  ///< the opponent sets the batch draws on
  LiveRows live;                                   ///< the rows the learner's network computes
  const nn::NetworkOutputs* outputs = nullptr;     ///< of the live rows; null when none are live
  std::int32_t version = 0;                        ///< of the parameters that computed them

  /// Calls f(request, env, row) for every row, request by request.
  template <class F>
  void for_each_row(F&& f) const {
    std::int64_t row = 0;
    for (StepRequest* r : requests)
      for (std::int32_t e = 0; e < r->connection.num_envs; ++e, ++row) f(*r, e, row);
  }
};

}  // namespace seedrl
