// Checkpoints: a model's parameters, its optimizer's state and the run's counters in one
// safetensors file (io/safetensors.hpp), so Python tools can read them.
//
//   "<parameter name>"                      the parameter, e.g. "torso.conv1.weight"
//   "optimizer/<slot>/<parameter name>"     optimizer state, e.g. "optimizer/adam.m/torso.fc.bias"
//   __metadata__: format, format_version, seedrl_version, frames, learner_steps, episodes,
//                 episode_window and normalization (when there are), optimizer, optimizer_steps,
//                 plus what the caller adds (e.g. the network)
//
// Saving is atomic (temporary file, flush, rename): a crash never leaves a torn checkpoint.
// Loading checks the whole file against the model first and changes nothing unless everything
// matches; errors name the file and the mismatch.
#pragma once

#include <cstdint>
#include <string>

#include "seedrl/io/safetensors.hpp"
#include "seedrl/nn/optimizer.hpp"
#include "seedrl/nn/parameter.hpp"

namespace seedrl::io {

struct CheckpointCounters {
  std::int64_t frames = 0;         ///< environment frames the run has consumed
  std::int64_t learner_steps = 0;  ///< updates applied
  std::int64_t episodes = 0;       ///< training episodes completed
  /// The runtime's window of recent episodes (EpisodeStats::window_text), so that a resumed run
  /// reports what it stopped with; empty: none (also what checkpoints without one read as).
  std::string episode_window;
  /// The inference server's normalisation statistics (ExperienceNormalizer::to_text); empty:
  /// none. Stored as the metadata "normalization".
  std::string normalization;
};

/// Writes a checkpoint. `optimizer` may be null (parameters only). `metadata` entries are stored
/// as they are and checked on load when passed as `expected`.
void save_checkpoint(const std::string& path, const nn::ParameterStore& parameters,
                     const nn::Optimizer* optimizer, const CheckpointCounters& counters,
                     const Metadata& metadata = {});

/// Restores parameters (and optimizer state, when `optimizer` is given) from `path`; returns the
/// saved counters. Every key of `expected` must be present in the file's metadata with the same
/// value. On any error nothing is changed.
CheckpointCounters load_checkpoint(const std::string& path, nn::ParameterStore& parameters,
                                   nn::Optimizer* optimizer, const Metadata& expected = {});
/// load_checkpoint() from a file already read (SafetensorsFile::read).
CheckpointCounters load_checkpoint(const SafetensorsFile& file, nn::ParameterStore& parameters,
                                   nn::Optimizer* optimizer, const Metadata& expected = {});

/// Checks that `file` is a seedrl checkpoint in a format this build reads and returns its
/// counters; throws naming the file and what is wrong.
CheckpointCounters checkpoint_counters(const SafetensorsFile& file);

}  // namespace seedrl::io
