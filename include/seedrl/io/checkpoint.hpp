// Checkpoints: a model's parameters, its optimizer's state and the run's counters in one
// safetensors file (io/safetensors.hpp), so Python tools can read them.
//
//   "<parameter name>"                      the parameter, e.g. "torso.conv1.weight"
//   "optimizer/<slot>/<parameter name>"     optimizer state, e.g. "optimizer/adam.m/torso.fc.bias"
//   __metadata__: format, format_version, seedrl_version, frames, learner_steps, episodes,
//                 episode_window and normalization (when there are), optimizer, optimizer_steps,
//                 plus what the caller adds (e.g. the network)
//
// A checkpoint of several networks (a learner's NetworkSet, learner/network_set.hpp) holds each as
// a part: the first part's tensors under their own names as above, every other part's under
// "<part>/<parameter name>" and "optimizer/<slot>/<part>/<parameter name>", with its optimizer's
// name and steps as "optimizer/<part>" and "optimizer_steps/<part>". A file with one part is the
// file of one network, so that Policy reads the first network of any learner's checkpoint.
//
// Saving is atomic (core/atomic_file.hpp: a temporary file, flushed, renamed, the directory
// flushed): a crash never leaves a torn checkpoint, and a failed write (a full disk) leaves every
// generation as it was. The values are copied out first (snapshot_checkpoint, cheap: a learner
// holds its lock for that alone) and encoded and written afterwards (write_checkpoint). Every
// tensor and the header carry a CRC-32C (io/safetensors.hpp), and parameters or optimizer state
// that are not finite are never written. Loading verifies the checksums and checks the whole file
// against the model first (shapes, agent, finite values) and changes nothing unless everything
// matches; errors name the file and the mismatch.
//
// Generations: save_checkpoint(path, ..., generations = K) keeps the K newest checkpoints,
// "checkpoint.safetensors" the newest and "checkpoint.1.safetensors" .. "checkpoint.<K-1>..." the
// older ones (checkpoint_generations() lists them, newest first), so that a reader can fall back
// to an earlier one when the newest does not verify.
//
// A learner's replay (R2D2 and SAC with checkpoint_replay) belongs to one generation: it is
// written beside the checkpoint as "<stem>.replay.<hash>.seedrl", named by a hash of its bytes
// (64-bit FNV-1a), and the checkpoint's metadata names it ("replay", "replay_fnv1a64"). Older
// generations keep theirs, a fallback loads the matching pair (read_replay_of), and a replay file
// no kept generation names is removed. A replay that is missing or does not match refuses its
// generation, as a corrupt checkpoint does. Checkpoints written before replays were linked read
// "replay.seedrl", as then.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

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
  /// On load: whether the file carried checksums (then all of them verified). Files written
  /// before seedrl recorded checksums load with this false.
  bool checksummed = false;
};

/// One network of a checkpoint (see the top).
struct CheckpointPart {
  std::string name;  ///< "": tensors under their own names (the first part only)
  nn::ParameterStore* parameters = nullptr;
  nn::Optimizer* optimizer = nullptr;  ///< null: parameters only
  /// Loading: a part whose tensors the file lacks altogether is left as it is (and `loaded` stays
  /// false) instead of refusing the file; e.g. a target network that checkpoints written before
  /// seedrl saved targets do not hold, re-derived by the caller.
  bool optional = false;
  bool loaded = false;  ///< set by load_checkpoint
};

/// Generation `n` of the checkpoint at `path`: `path` itself for 0, else the same name with ".n"
/// before the extension ("run/checkpoint.safetensors", 2 -> "run/checkpoint.2.safetensors").
std::string checkpoint_generation(const std::string& path, int n);

/// The generations of `path` that exist, newest first (`path`, then ".1", ".2", ...; gaps allowed).
std::vector<std::string> checkpoint_generations(const std::string& path);

/// What a checkpoint holds, copied out of the live networks to the host: what write_checkpoint
/// encodes and writes while training goes on.
struct CheckpointSnapshot {
  std::vector<NamedTensor> tensors;
  Metadata metadata;
};

/// The snapshot of `parts` with `counters` and `metadata` (see the top): every value copied to
/// the host. Call it where the values cannot change (under the learner's lock); it does no I/O.
CheckpointSnapshot snapshot_checkpoint(std::span<const CheckpointPart> parts,
                                       const CheckpointCounters& counters,
                                       const Metadata& metadata = {});

/// Writes `snapshot` as the newest generation of `path`, keeping `generations` of them (see
/// save_checkpoint), with `replay` (when not empty: a learner's replay state) linked to it (see
/// the top). Throws naming the tensor when a value is not finite, or the file and the system's
/// reason on an I/O fault; then nothing was replaced and no generation moved.
void write_checkpoint(const std::string& path, const CheckpointSnapshot& snapshot,
                      int generations = 1, std::string_view replay = {});

/// The replay state of the checkpoint `file` (its generation's, see the top), verified against the
/// checkpoint's record of it; std::nullopt when the checkpoint has none. A checkpoint written
/// before replays were linked gets "replay.seedrl" beside it, when there is one. Throws naming
/// both files when the replay is missing or is not the one the checkpoint names.
std::optional<std::string> read_replay_of(const SafetensorsFile& file);

/// Writes a checkpoint. `optimizer` may be null (parameters only). `metadata` entries are stored
/// as they are and checked on load when passed as `expected`. With `generations` > 1 the older
/// generations of `path` move one place back first (the oldest beyond `generations` is removed),
/// once the new file is fully on disk. Throws naming the tensor when a parameter or optimizer
/// value is not finite; then nothing is written and no generation moves.
void save_checkpoint(const std::string& path, const nn::ParameterStore& parameters,
                     const nn::Optimizer* optimizer, const CheckpointCounters& counters,
                     const Metadata& metadata = {}, int generations = 1);

/// save_checkpoint() of several networks, `parts[0]` the first (see the top).
void save_checkpoint(const std::string& path, std::span<const CheckpointPart> parts,
                     const CheckpointCounters& counters, const Metadata& metadata = {},
                     int generations = 1);

/// Restores parameters (and optimizer state, when `optimizer` is given) from `path`; returns the
/// saved counters. Every key of `expected` must be present in the file's metadata with the same
/// value. On any error nothing is changed.
CheckpointCounters load_checkpoint(const std::string& path, nn::ParameterStore& parameters,
                                   nn::Optimizer* optimizer, const Metadata& expected = {});
/// load_checkpoint() from a file already read (SafetensorsFile::read).
CheckpointCounters load_checkpoint(const SafetensorsFile& file, nn::ParameterStore& parameters,
                                   nn::Optimizer* optimizer, const Metadata& expected = {});

/// load_checkpoint() of several networks: every part (but optional ones the file lacks) is
/// checked before anything changes, then restored; sets each part's `loaded`.
CheckpointCounters load_checkpoint(const SafetensorsFile& file, std::span<CheckpointPart> parts,
                                   const Metadata& expected = {});

/// Where a run resumes: the newest generation of a checkpoint that loads.
struct LoadedGeneration {
  std::string path;                            ///< the generation loaded; empty: none exists
  std::optional<CheckpointCounters> counters;  ///< what load() returned for it
  /// One line each: a newer generation skipped and why, a file without checksums.
  std::vector<std::string> notes;
};

/// Tries the generations of `path` newest first with `load` (which restores everything from one
/// file, or throws and changes nothing) until one loads. No generation at all: an empty
/// LoadedGeneration. Every generation refused: throws seedrl::Error listing each file and its
/// fault.
LoadedGeneration load_newest_generation(
    const std::string& path, const std::function<CheckpointCounters(const std::string&)>& load);

/// Checks that `file` is a seedrl checkpoint in a format this build reads and returns its
/// counters; throws naming the file and what is wrong.
CheckpointCounters checkpoint_counters(const SafetensorsFile& file);

}  // namespace seedrl::io
