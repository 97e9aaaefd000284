// LiveRows: the rows of an inference batch that the learner's network must compute (issue 37's
// self-play throughput).
//
//   batch rows ──plan(waiting, policies)──▶ live: not waiting, not served by an opponent set
//              ──observations(), resets()──▶ the live rows only, [1, live, ...]: the forward
//              ──select()──▶ the agent's actions on the live rows, written back to their rows
//
// In a turn-based game every seat sends a row at every step, and only the seats whose player
// moves act: half of a two-player batch waits, and the rows an opponent set serves are computed
// by that set's network (inference/opponents.hpp). Neither needs the learner's forward. A
// feed-forward network computes each row apart from the others, so the live rows' outputs are the
// same whether the dead ones are in the forward or not. A dead row's action is 0 (a waiting
// seat's is never played; an opponent set writes its rows' afterwards).
//
// Thread-safety: the inference thread's.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "seedrl/agent/agent.hpp"
#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/core/step_flags.hpp"
#include "seedrl/core/tensor.hpp"

namespace seedrl {

class LiveRows {
 public:
  explicit LiveRows(Device pinned_for)
      : observation_buffer_(ScratchBuffer::pinned(pinned_for)),
        reset_buffer_(ScratchBuffer::pinned(pinned_for)) {}

  /// Row i is live unless `flags[i]` waits or `policies[i]` is an opponent set (>= 1).
  void plan(std::span<const std::uint8_t> flags, std::span<const std::int32_t> policies) {
    const std::size_t n = flags.size();
    index_.assign(n, -1);
    rows_.clear();
    for (std::size_t i = 0; i < n; ++i) {
      if (is_waiting(flags[i]) || policies[i] >= 1) continue;
      index_[i] = static_cast<std::int64_t>(rows_.size());
      rows_.push_back(static_cast<std::int64_t>(i));
    }
  }

  /// Every one of `n` rows is live (recurrent networks and box actions: their forward is the
  /// whole batch's).
  void plan_all(std::size_t n) {
    index_.resize(n);
    rows_.resize(n);
    for (std::size_t i = 0; i < n; ++i) rows_[i] = index_[i] = static_cast<std::int64_t>(i);
  }

  /// Every row is live: the batch goes to the network as it is.
  bool all() const { return rows_.size() == index_.size(); }
  std::int64_t count() const { return static_cast<std::int64_t>(rows_.size()); }
  /// Where batch row `row` is among the live rows; -1 for a dead row.
  std::int64_t index(std::int64_t row) const {
    return all() ? row : index_[static_cast<std::size_t>(row)];
  }

  /// The live rows of the batch's observations [1, N, ...] (host): [1, live, ...].
  Tensor observations(const Tensor& batch) {
    const Tensor frames = batch[0];
    const Tensor out =
        observation_buffer_.view(frames.shape().drop_front().prepend({1, count()}), frames.dtype());
    const Tensor rows = out[0];
    const auto row_bytes =
        static_cast<std::size_t>(frames.bytes() / std::max<std::int64_t>(frames.dim(0), 1));
    for (std::size_t j = 0; j < rows_.size(); ++j)
      std::memcpy(rows.row_data(static_cast<std::int64_t>(j)), frames.row_data(rows_[j]),
                  row_bytes);
    return out;
  }
  /// The live rows of the batch's resets [1, N]: [1, live].
  Tensor resets(const Tensor& batch) {
    const Tensor out = reset_buffer_.view({1, count()}, DType::u8);
    for (std::size_t j = 0; j < rows_.size(); ++j)
      out.data<std::uint8_t>()[j] = batch.data<std::uint8_t>()[rows_[j]];
    return out;
  }

  /// The agent's actions for the live rows from `outputs` (the forward of the live rows; null
  /// when there are none), K per row into the batch's `actions` (K * N); the dead rows get 0.
  /// `slots`, `evaluation` and the context's mask are the whole batch's.
  template <Agent A>
  void select(const A& agent, const nn::NetworkOutputs* outputs,
              std::span<const std::int32_t> slots, std::span<const std::uint8_t> evaluation,
              const ActingContext& context, std::span<std::int32_t> actions, Rng& rng) {
    const std::size_t n = index_.size();
    const std::size_t k = actions.size() / std::max<std::size_t>(n, 1);
    const std::size_t mask_width = context.action_mask.size() / std::max<std::size_t>(n, 1);
    slots_.resize(rows_.size());
    evaluation_.resize(rows_.size());
    masks_.resize(rows_.size() * mask_width);
    actions_.resize(rows_.size() * k);
    for (std::size_t j = 0; j < rows_.size(); ++j) {
      const auto row = static_cast<std::size_t>(rows_[j]);
      slots_[j] = slots[row];
      evaluation_[j] = evaluation[row];
      std::copy_n(context.action_mask.begin() + static_cast<std::ptrdiff_t>(row * mask_width),
                  mask_width, masks_.begin() + static_cast<std::ptrdiff_t>(j * mask_width));
    }
    std::fill(actions.begin(), actions.end(), 0);
    if (rows_.empty()) return;
    select_actions(agent, *outputs, slots_, evaluation_, actions_, rng,
                   ActingContext{masks_, context.branches});
    for (std::size_t j = 0; j < rows_.size(); ++j) {
      std::copy_n(
          actions_.begin() + static_cast<std::ptrdiff_t>(j * k), k,
          actions.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(rows_[j]) * k));
    }
  }

 private:
  std::vector<std::int64_t> index_, rows_;  // batch row -> live index; live index -> batch row
  std::vector<std::int32_t> slots_, actions_;
  std::vector<std::uint8_t> evaluation_, masks_;
  ScratchBuffer observation_buffer_, reset_buffer_;
};

}  // namespace seedrl
