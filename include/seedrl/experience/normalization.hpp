// ExperienceNormalizer: the running normalisations PPO trains with (observations and rewards),
// applied once, by the inference server, to what every actor sends.
//
//   observations  x' = clip((x - mean) / sqrt(var + 1e-8), -clip, clip), the mean and variance
//                 running over every training observation so far (Gymnasium's
//                 NormalizeObservation); evaluation observations are normalised, not counted
//   rewards       r' = clip(r / sqrt(var_G + 1e-8), -clip, clip), var_G the running variance of
//                 each slot's discounted return G = gamma G + r (reset at every episode start;
//                 Gymnasium's NormalizeReward)
//
// The statistics move with every inference batch: the batch's training observations and returns
// are added first, then the batch is normalised with them. The unrolls keep what the network saw
// (normalised observations, scaled rewards) so the learner trains on exactly that, while episode
// returns are counted in raw rewards. The statistics are part of a run's checkpoint (to_text in
// the "normalization" metadata, restored on resume) and of a Policy made from it, which
// normalises observations the same way.
//
// Not thread-safe: the inference thread owns it; to_text()/restore() are called by the training
// session while the server is not processing (construction, checkpoints under a pause), see
// InferenceServer::normalization_text.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/core/step_flags.hpp"
#include "seedrl/math/running_moments.hpp"

namespace seedrl {

/// Which normalisations a run applies (AgentOptions::normalization).
struct NormalizationOptions {
  bool observations = false;       ///< running mean/variance of f32 observations
  float observation_clip = 10.0f;  ///< bound of the normalised observations
  bool rewards = false;            ///< scale rewards by the running std of the discounted return
  float reward_clip = 10.0f;       ///< bound of the scaled rewards

  bool any() const { return observations || rewards; }
  void validate(std::string_view owner) const {
    SEEDRL_REQUIRE(observation_clip > 0.0f && std::isfinite(observation_clip), owner,
                   ".normalization.observation_clip must be finite and > 0, got ",
                   observation_clip);
    SEEDRL_REQUIRE(reward_clip > 0.0f && std::isfinite(reward_clip), owner,
                   ".normalization.reward_clip must be finite and > 0, got ", reward_clip);
  }
};

class ExperienceNormalizer {
 public:
  /// `observation_size`: values per observation; `discount`: gamma of the returns; `slots`: the
  /// server's slots (one return accumulator each).
  ExperienceNormalizer(const NormalizationOptions& options, std::int64_t observation_size,
                       float discount, std::int32_t slots)
      : options_(options),
        discount_(discount),
        observations_(observation_size),
        returns_(1),
        slot_returns_(static_cast<std::size_t>(slots), 0.0) {}

  const NormalizationOptions& options() const { return options_; }
  const math::RunningMoments& observation_moments() const { return observations_; }
  const math::RunningMoments& return_moments() const { return returns_; }

  /// Normalises `batch` [N, size] in place after adding the rows not flagged in `evaluation` to
  /// the statistics. Rows must be finite (the server checks what actors send).
  void normalize_observations(math::MatrixRef batch, std::span<const std::uint8_t> evaluation) {
    if (!options_.observations) return;
    training_rows_.resize(batch.rows(), batch.cols());
    std::int64_t n = 0;
    for (std::int64_t i = 0; i < batch.rows(); ++i)
      if (!evaluation[static_cast<std::size_t>(i)]) training_rows_.row(n++) = batch.row(i);
    if (n > 0) observations_.update(training_rows_.topRows(n));
    observations_.normalize(batch, batch, options_.observation_clip);
  }

  /// Scales the rewards of one batch: reward i arrived at `slots[i]` with `flags[i]` (a first step
  /// restarts the slot's return). Evaluation rows are scaled without being counted.
  void scale_rewards(std::span<const std::int32_t> slots, std::span<const std::uint8_t> flags,
                     std::span<const std::uint8_t> evaluation, std::span<float> rewards) {
    if (!options_.rewards) return;
    training_returns_.resize(static_cast<Eigen::Index>(rewards.size()), 1);
    std::int64_t n = 0;
    for (std::size_t i = 0; i < rewards.size(); ++i) {
      double& g = slot_returns_[static_cast<std::size_t>(slots[i])];
      if (is_first(flags[i])) g = 0.0;
      g = discount_ * g + rewards[i];
      if (!evaluation[i]) training_returns_(n++, 0) = static_cast<float>(g);
    }
    if (n > 0) returns_.update(training_returns_.topRows(n));
    const double scale = 1.0 / std::sqrt(returns_.variance()(0) + 1e-8);
    for (float& r : rewards) {
      r = static_cast<float>(
          std::clamp(r * scale, -double{options_.reward_clip}, double{options_.reward_clip}));
    }
  }

  /// A slot restarts (its actor reconnected): its return starts again.
  void restart_slot(std::int32_t slot) { slot_returns_[static_cast<std::size_t>(slot)] = 0.0; }

  /// The statistics as text (checkpoint metadata "normalization"): exact, versioned.
  std::string to_text() const;
  /// Restores to_text()'s statistics; errors name `source` and what does not fit (another
  /// observation size, a normalisation the run does not apply, malformed numbers).
  void restore(std::string_view text, std::string_view source);

 private:
  NormalizationOptions options_;
  double discount_;
  math::RunningMoments observations_, returns_;
  std::vector<double> slot_returns_;
  RowMatrixXf training_rows_, training_returns_;
};

/// A checkpoint's observation statistics, applied as inference applied them (Policy).
struct ObservationNormalization {
  std::optional<math::RunningMoments> moments;  ///< none: no normalisation
  float clip = 10.0f;

  bool active() const { return moments.has_value(); }
  /// From a checkpoint's "normalization" metadata (empty: inactive); errors name `source`.
  static ObservationNormalization parse(std::string_view text, std::string_view source);
  /// Normalises `batch` [N, size] in place.
  void apply(math::MatrixRef batch) const;
};

/// A run's normaliser, if its agent has one, as text for a checkpoint ("" without one).
std::string normalization_text(const std::optional<ExperienceNormalizer>& normalizer);
/// Restores normalization_text() of a checkpoint at `source` into `normalizer`: statistics for a
/// run that normalises nothing, and a run that normalises without statistics, are refused naming
/// `source`.
void restore_normalization(std::optional<ExperienceNormalizer>& normalizer, std::string_view text,
                           std::string_view source);

}  // namespace seedrl
