// UnrollRecorder: the server's record stage. Every row that acted for the learner (not a waiting
// seat's, nor an opponent set's) counts toward its slot's episode (raw rewards: EpisodeStats); a
// training slot's row is also a step of its unroll (scaled rewards when the agent scales them),
// and each full unroll goes to the learner's queue (a full queue blocks here: back-pressure to
// the actors).
//
// Thread-safety: the inference thread's; training_frames() and episodes() from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "seedrl/experience/episode_stats.hpp"
#include "seedrl/experience/unroll_store.hpp"
#include "seedrl/inference/action_kind.hpp"
#include "seedrl/inference/batch_outcomes.hpp"
#include "seedrl/inference/opponents.hpp"
#include "seedrl/inference/step_batch.hpp"

namespace seedrl {

class UnrollRecorder {
 public:
  UnrollRecorder(std::int32_t max_slots, const UnrollSpec& spec, UnrollQueue& unrolls)
      : unrolls_(unrolls),
        store_(max_slots, spec, &unrolls.pool()),
        episodes_in_progress_(static_cast<std::size_t>(max_slots)) {}

  /// Records the batch; `kind` gives each row's action and behaviour, `scaled_rewards` the rows'
  /// rewards for the unrolls (empty: the raw ones). The rows of failed requests leave nothing.
  template <class Kind>
  void record(const StepBatch& batch, const Kind& kind, std::span<const float> scaled_rewards,
              const BatchOutcomes& outcomes) {
    std::int64_t row = 0;
    const Tensor frame_observations = batch.observations[0];
    for (std::size_t request = 0; request < batch.requests.size(); ++request) {
      const StepRequest* r = batch.requests[request];
      if (outcomes.failed(request)) {
        row += r->connection.num_envs;
        continue;
      }
      for (std::int32_t e = 0; e < r->connection.num_envs; ++e, ++row) {
        const auto i = static_cast<std::size_t>(row);
        const std::int32_t slot = batch.slots[i];
        const std::uint8_t flags = r->step.flags[static_cast<std::size_t>(e)];
        const float reward = r->step.rewards[static_cast<std::size_t>(e)];
        if (is_waiting(flags) || batch.policies[i] != policy_ids::kLearner) continue;
        const bool evaluation = r->connection.evaluation;
        if (!is_first(flags) && !evaluation) ++training_frames_;
        if (const auto done = episodes_in_progress_[static_cast<std::size_t>(slot)].step(
                flags, reward, evaluation))
          episodes_.record(*done);
        if (evaluation) continue;
        UnrollStep step;
        step.observation = frame_observations[row];
        step.reward = scaled_rewards.empty() ? reward : scaled_rewards[i];
        step.flags = flags;
        kind.record(batch, row, step);
        step.policy_version = batch.version;
        step.fields = batch.fields;
        step.field_row = row;
        if (batch.state_in.h.defined()) {
          step.state_h = batch.state_in.h.template row_data<float>(row);
          step.state_c = batch.state_in.c.template row_data<float>(row);
        }
        if (std::unique_ptr<Unroll> unroll = store_.append(slot, step))
          unrolls_.push(std::move(unroll));
      }
    }
  }

  /// The slot's partial unroll and episode are dropped.
  void restart_slot(std::int32_t slot) {
    store_.reset(slot);
    episodes_in_progress_[static_cast<std::size_t>(slot)] = {};
  }

  const UnrollSpec& spec() const { return store_.spec(); }
  EpisodeStats& episodes() { return episodes_; }
  /// Environment steps taken by training (non-evaluation) slots.
  std::int64_t training_frames() const { return training_frames_.load(); }
  void set_training_frames(std::int64_t frames) { training_frames_ = frames; }

 private:
  UnrollQueue& unrolls_;
  UnrollStore store_;
  std::vector<EpisodeInProgress> episodes_in_progress_;
  EpisodeStats episodes_;
  std::atomic<std::int64_t> training_frames_{0};
};

}  // namespace seedrl
