// ServerNormalizer: the agent's normalisation at the inference server (NormalizationOptions,
// experience/normalization.hpp): observations normalised in the gathered batch, rewards scaled
// before they are recorded. Nothing when the agent normalises nothing.
//
// Thread-safety: the inference thread uses it; the lock lets checkpoints read (text()) and a
// resumed run restore the statistics meanwhile.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/core/tensor_spec.hpp"
#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/experience/normalization.hpp"
#include "seedrl/inference/step_batch.hpp"

namespace seedrl {

class ServerNormalizer {
 public:
  ServerNormalizer(const NormalizationOptions& options, const TensorSpec& observation,
                   float discount, std::int32_t max_slots)
      : observation_size_(observation.shape.numel()),
        observations_(options.observations),
        rewards_(options.rewards) {
    if (!options.any()) return;
    SEEDRL_REQUIRE(!options.observations || observation.dtype == DType::f32,
                   "InferenceServer: normalization.observations needs f32 observations, got ",
                   observation.to_string());
    MutexLock lock(mutex_);
    normalizer_.emplace(options, observation_size_, discount, max_slots);
  }

  /// The batch's observations, in place (evaluation rows do not move the statistics).
  void normalize_observations(StepBatch& batch) SEEDRL_EXCLUDES(mutex_) {
    if (!observations_) return;
    MutexLock lock(mutex_);
    normalizer_->normalize_observations(
        batch.observations.reshape({batch.frames, observation_size_}).template matrix<float>(),
        batch.evaluation);
  }
  /// The batch's rewards, row by row, scaled; empty when the agent does not scale them.
  std::span<const float> scaled_rewards(const StepBatch& batch) SEEDRL_EXCLUDES(mutex_) {
    if (!rewards_) return {};
    rewards_buffer_.clear();
    for (const StepRequest* r : batch.requests)
      rewards_buffer_.insert(rewards_buffer_.end(), r->step.rewards.begin(), r->step.rewards.end());
    MutexLock lock(mutex_);
    normalizer_->scale_rewards(batch.slots, batch.flags, batch.evaluation, rewards_buffer_);
    return rewards_buffer_;
  }
  void restart_slot(std::int32_t slot) SEEDRL_EXCLUDES(mutex_) {
    if (!rewards_) return;
    MutexLock lock(mutex_);
    normalizer_->restart_slot(slot);
  }

  /// ExperienceNormalizer::to_text, empty when the agent normalises nothing. Any thread.
  std::string text() const SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return normalization_text(normalizer_);
  }
  /// Restores text() from a checkpoint at `source`; refuses statistics that do not fit.
  void restore(std::string_view text, std::string_view source) SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    restore_normalization(normalizer_, text, source);
  }

 private:
  const std::int64_t observation_size_;
  const bool observations_, rewards_;  // what the agent normalises (set once)
  std::vector<float> rewards_buffer_;  // the batch's, scaled (inference thread)
  mutable Mutex mutex_;
  std::optional<ExperienceNormalizer> normalizer_ SEEDRL_GUARDED_BY(mutex_);
};

}  // namespace seedrl
