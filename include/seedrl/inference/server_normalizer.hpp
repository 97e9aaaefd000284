// ServerNormalizer: the agent's normalisation at the inference server (NormalizationOptions,
// experience/normalization.hpp): observations normalised in the gathered batch, rewards scaled
// before they are recorded. Nothing when the agent normalises nothing.
//
// Thread-safety: the inference thread uses it; the lock lets checkpoints read (text()) and a
// resumed run restore the statistics meanwhile. Compiled in the library
// (src/inference/server_normalizer.cpp), not in every program that includes the server.
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
                   float discount, std::int32_t max_slots);

  /// The batch's observations, in place (evaluation rows do not move the statistics).
  void normalize_observations(StepBatch& batch) SEEDRL_EXCLUDES(mutex_);
  /// The batch's rewards, row by row, scaled; empty when the agent does not scale them.
  std::span<const float> scaled_rewards(const StepBatch& batch) SEEDRL_EXCLUDES(mutex_);
  void restart_slot(std::int32_t slot) SEEDRL_EXCLUDES(mutex_);

  /// ExperienceNormalizer::to_text, empty when the agent normalises nothing. Any thread.
  std::string text() const SEEDRL_EXCLUDES(mutex_);
  /// Restores text() from a checkpoint at `source`; refuses statistics that do not fit.
  void restore(std::string_view text, std::string_view source) SEEDRL_EXCLUDES(mutex_);

 private:
  const std::int64_t observation_size_;
  const bool observations_, rewards_;  // what the agent normalises (set once)
  std::vector<float> rewards_buffer_;  // the batch's, scaled (inference thread)
  mutable Mutex mutex_;
  std::optional<ExperienceNormalizer> normalizer_ SEEDRL_GUARDED_BY(mutex_);
};

}  // namespace seedrl
