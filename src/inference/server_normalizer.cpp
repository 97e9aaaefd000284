// ServerNormalizer (inference/server_normalizer.hpp): the agent's normalisation at the inference
// server, compiled once here.
#include "seedrl/inference/server_normalizer.hpp"

namespace seedrl {

ServerNormalizer::ServerNormalizer(const NormalizationOptions& options,
                                   const TensorSpec& observation, float discount,
                                   std::int32_t max_slots)
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

void ServerNormalizer::normalize_observations(StepBatch& batch) {
  if (!observations_) return;
  MutexLock lock(mutex_);
  normalizer_->normalize_observations(
      batch.observations.reshape({batch.frames, observation_size_}).matrix<float>(),
      batch.evaluation);
}

std::span<const float> ServerNormalizer::scaled_rewards(const StepBatch& batch) {
  if (!rewards_) return {};
  rewards_buffer_.clear();
  for (const StepRequest* r : batch.requests)
    rewards_buffer_.insert(rewards_buffer_.end(), r->step.rewards.begin(), r->step.rewards.end());
  MutexLock lock(mutex_);
  normalizer_->scale_rewards(batch.slots, batch.flags, batch.evaluation, rewards_buffer_);
  return rewards_buffer_;
}

void ServerNormalizer::restart_slot(std::int32_t slot) {
  if (!rewards_) return;
  MutexLock lock(mutex_);
  normalizer_->restart_slot(slot);
}

std::string ServerNormalizer::text() const {
  MutexLock lock(mutex_);
  return normalization_text(normalizer_);
}

void ServerNormalizer::restore(std::string_view text, std::string_view source) {
  MutexLock lock(mutex_);
  restore_normalization(normalizer_, text, source);
}

}  // namespace seedrl
