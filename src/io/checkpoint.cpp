#include "seedrl/io/checkpoint.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "checkpoint_generations.hpp"
#include "seedrl/core/atomic_file.hpp"
#include "seedrl/version.hpp"

namespace seedrl::io {

namespace {

constexpr const char* kFormat = "seedrl.checkpoint";
constexpr const char* kFormatVersion = "1";

Tensor slot_view(const Tensor& flat, const nn::Parameter& p) {
  return flat.slice(p.offset, p.offset + p.shape.numel()).reshape(p.shape);
}

std::int64_t parse_count(const SafetensorsFile& file, const std::string& key) {
  const auto it = file.metadata().find(key);
  SEEDRL_REQUIRE(it != file.metadata().end(), file.source(), ": metadata has no '", key, "'");
  std::int64_t value = 0;
  const std::string& text = it->second;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  SEEDRL_REQUIRE(error == std::errc() && end == text.data() + text.size() && value >= 0,
                 file.source(), ": metadata '", key, "' is not a count: '", text, "'");
  return value;
}

// The index of the first element of a CPU f32 tensor that is not finite; -1 where all are.
std::int64_t first_non_finite(const Tensor& t) {
  const float* values = t.data<float>();
  for (std::int64_t i = 0; i < t.numel(); ++i)
    if (!std::isfinite(values[i])) return i;
  return -1;
}

void require_finite(const Tensor& t, const std::string& path, const std::string& name) {
  const std::int64_t bad = first_non_finite(t);
  SEEDRL_REQUIRE(bad < 0, path, ": not written: tensor '", name, "' holds ", t.data<float>()[bad],
                 " at element ", bad,
                 "; a checkpoint never records parameters or optimizer state that are not finite");
}

// A part's tensors are named "<prefix><parameter name>"; its metadata keys "<key>" (the first
// part) or "<key>/<part>".
std::string part_prefix(const CheckpointPart& part) {
  return part.name.empty() ? std::string() : part.name + "/";
}
std::string part_key(const char* key, const CheckpointPart& part) {
  return part.name.empty() ? std::string(key) : std::string(key) + "/" + part.name;
}

// Only the first part may be nameless, names are distinct and every part has parameters.
void check_parts(std::span<const CheckpointPart> parts) {
  SEEDRL_REQUIRE(!parts.empty(), "checkpoint: no network to save or load");
  for (std::size_t i = 0; i < parts.size(); ++i) {
    SEEDRL_REQUIRE(parts[i].parameters != nullptr, "checkpoint: part ", i, " has no parameters");
    SEEDRL_REQUIRE(i == 0 || !parts[i].name.empty(), "checkpoint: part ", i,
                   " needs a name (only the first network's tensors go under their own names)");
    SEEDRL_REQUIRE(parts[i].name.find('/') == std::string::npos, "checkpoint: part name '",
                   parts[i].name, "' may not contain '/'");
    for (std::size_t j = 0; j < i; ++j)
      SEEDRL_REQUIRE(parts[i].name != parts[j].name, "checkpoint: two parts named '", parts[i].name,
                     "'");
  }
}

}  // namespace

void save_checkpoint(const std::string& path, const nn::ParameterStore& parameters,
                     const nn::Optimizer* optimizer, const CheckpointCounters& counters,
                     const Metadata& metadata, int generations) {
  const CheckpointPart part{"", const_cast<nn::ParameterStore*>(&parameters),
                            const_cast<nn::Optimizer*>(optimizer)};
  save_checkpoint(path, std::span<const CheckpointPart>(&part, 1), counters, metadata, generations);
}

CheckpointSnapshot snapshot_checkpoint(std::span<const CheckpointPart> parts,
                                       const CheckpointCounters& counters,
                                       const Metadata& metadata) {
  check_parts(parts);
  CheckpointSnapshot snapshot;
  Metadata& meta = snapshot.metadata;
  meta = metadata;
  meta["format"] = kFormat;
  meta["format_version"] = kFormatVersion;
  meta["seedrl_version"] = kVersion;
  meta["frames"] = std::to_string(counters.frames);
  meta["learner_steps"] = std::to_string(counters.learner_steps);
  meta["episodes"] = std::to_string(counters.episodes);
  if (!counters.episode_window.empty()) meta["episode_window"] = counters.episode_window;
  if (!counters.normalization.empty()) meta["normalization"] = counters.normalization;
  // One copy of each flat buffer (from a device, or within the host), then views of it by name.
  auto copy = [](const Tensor& t) { return t.clone(Device::cpu); };
  for (const CheckpointPart& part : parts) {
    const std::string prefix = part_prefix(part);
    const Tensor values = copy(part.parameters->values());
    for (const nn::Parameter& p : part.parameters->parameters())
      snapshot.tensors.push_back({prefix + p.name, slot_view(values, p)});
    if (!part.optimizer) continue;
    meta[part_key("optimizer", part)] = part.optimizer->name();
    meta[part_key("optimizer_steps", part)] = std::to_string(part.optimizer->steps());
    for (const nn::OptimizerSlot& slot : part.optimizer->slots()) {
      const Tensor host = copy(slot.value);
      for (const nn::Parameter& p : part.parameters->parameters())
        snapshot.tensors.push_back(
            {"optimizer/" + slot.name + "/" + prefix + p.name, slot_view(host, p)});
    }
  }
  return snapshot;
}

void write_checkpoint(const std::string& path, const CheckpointSnapshot& snapshot, int generations,
                      std::string_view replay) {
  SEEDRL_REQUIRE(generations >= 1, "save_checkpoint: generations must be >= 1, got ", generations);
  for (const NamedTensor& t : snapshot.tensors) require_finite(t.tensor, path, t.name);
  Metadata meta = snapshot.metadata;
  // The replay goes first: a checkpoint on disk never names a replay that is not. A replay file of
  // that name is already the same state (named by its hash); a new one is removed again when the
  // checkpoint cannot be written, as nothing names it then.
  std::string new_replay;
  if (!replay.empty()) {
    const ReplayLink link = link_replay(path, replay);
    meta[std::string(kReplayKey)] = link.name;
    meta[std::string(kReplayHashKey)] = link.hash;
    if (!std::filesystem::exists(link.path)) {
      PendingFile(link.path, replay).commit();
      new_replay = link.path;
    }
  }
  std::optional<PendingFile> checkpoint;
  try {
    checkpoint.emplace(path, encode_safetensors(snapshot.tensors, meta));
    if (generations > 1) make_room_for_generation(path, generations);
    checkpoint->commit();
  } catch (...) {
    std::error_code ignored;
    if (!new_replay.empty() && !(checkpoint && checkpoint->committed()))
      std::filesystem::remove(new_replay, ignored);
    throw;
  }
  remove_unlinked_replays(path);
}

void save_checkpoint(const std::string& path, std::span<const CheckpointPart> parts,
                     const CheckpointCounters& counters, const Metadata& metadata,
                     int generations) {
  write_checkpoint(path, snapshot_checkpoint(parts, counters, metadata), generations);
}

CheckpointCounters checkpoint_counters(const SafetensorsFile& file) {
  const std::string& path = file.source();
  const Metadata& meta = file.metadata();
  const auto format = meta.find("format");
  SEEDRL_REQUIRE(format != meta.end() && format->second == kFormat, path,
                 ": not a seedrl checkpoint (metadata format is '",
                 format == meta.end() ? std::string("missing") : format->second, "')");
  const auto version = meta.find("format_version");
  SEEDRL_REQUIRE(version != meta.end() && version->second == kFormatVersion, path,
                 ": checkpoint format version '",
                 version == meta.end() ? std::string("missing") : version->second,
                 "', this build reads ", kFormatVersion);
  CheckpointCounters counters;
  counters.checksummed = file.checksummed();
  counters.frames = parse_count(file, "frames");
  counters.learner_steps = parse_count(file, "learner_steps");
  counters.episodes = parse_count(file, "episodes");
  if (const auto it = meta.find("episode_window"); it != meta.end())
    counters.episode_window = it->second;
  if (const auto it = meta.find("normalization"); it != meta.end())
    counters.normalization = it->second;
  return counters;
}

CheckpointCounters load_checkpoint(const std::string& path, nn::ParameterStore& parameters,
                                   nn::Optimizer* optimizer, const Metadata& expected) {
  return load_checkpoint(SafetensorsFile::read(path), parameters, optimizer, expected);
}

CheckpointCounters load_checkpoint(const SafetensorsFile& file, nn::ParameterStore& parameters,
                                   nn::Optimizer* optimizer, const Metadata& expected) {
  CheckpointPart part{"", &parameters, optimizer};
  return load_checkpoint(file, std::span<CheckpointPart>(&part, 1), expected);
}

CheckpointCounters load_checkpoint(const SafetensorsFile& file, std::span<CheckpointPart> parts,
                                   const Metadata& expected) {
  check_parts(parts);
  const std::string& path = file.source();
  const Metadata& meta = file.metadata();
  const CheckpointCounters counters = checkpoint_counters(file);
  for (const auto& [key, value] : expected) {
    const auto it = meta.find(key);
    SEEDRL_REQUIRE(it != meta.end() && it->second == value, path, ": was written with ", key, " '",
                   it == meta.end() ? std::string("(none)") : it->second, "', this run has ", key,
                   " '", value, "'");
  }

  // Check everything before changing anything.
  auto check = [&](const std::string& name, const nn::Parameter& p) {
    const SafetensorsFile::Entry* e = file.find(name);
    SEEDRL_REQUIRE(e != nullptr, path, ": missing tensor '", name,
                   "' (the checkpoint is of another model?)");
    SEEDRL_REQUIRE(e->dtype == DType::f32 && e->shape == p.shape, path, ": tensor '", name, "' is ",
                   seedrl::name(e->dtype), e->shape, " in the file but f32", p.shape,
                   " in this model");
    const std::int64_t bad = file.first_non_finite(name);
    SEEDRL_REQUIRE(bad < 0, path, ": tensor '", name,
                   "' holds a value that is not finite (element ", bad,
                   "); parameters and optimizer state must be finite");
  };
  std::vector<std::int64_t> optimizer_steps(parts.size(), 0);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    CheckpointPart& part = parts[i];
    const std::string prefix = part_prefix(part);
    const auto& params = part.parameters->parameters();
    part.loaded = !part.optional || params.empty() ||
                  std::any_of(params.begin(), params.end(),
                              [&](const nn::Parameter& p) { return file.find(prefix + p.name); });
    if (!part.loaded) continue;
    for (const nn::Parameter& p : params) check(prefix + p.name, p);
    if (!part.optimizer) continue;
    const std::string key = part_key("optimizer", part);
    const auto it = meta.find(key);
    SEEDRL_REQUIRE(it != meta.end(), path, ": has no optimizer state",
                   part.name.empty() ? std::string() : " for network '" + part.name + "'",
                   "; this run uses ", part.optimizer->name());
    SEEDRL_REQUIRE(it->second == part.optimizer->name(), path, ": optimizer state",
                   part.name.empty() ? std::string() : " of network '" + part.name + "'",
                   " is for '", it->second, "', this run uses '", part.optimizer->name(), "'");
    optimizer_steps[i] = parse_count(file, part_key("optimizer_steps", part));
    for (const nn::OptimizerSlot& slot : part.optimizer->slots())
      for (const nn::Parameter& p : params)
        check("optimizer/" + slot.name + "/" + prefix + p.name, p);
  }

  for (std::size_t i = 0; i < parts.size(); ++i) {
    const CheckpointPart& part = parts[i];
    if (!part.loaded) continue;
    const std::string prefix = part_prefix(part);
    for (const nn::Parameter& p : part.parameters->parameters())
      file.copy_to(prefix + p.name, p.value);
    part.parameters->bump_version();
    if (!part.optimizer) continue;
    for (const nn::OptimizerSlot& slot : part.optimizer->slots())
      for (const nn::Parameter& p : part.parameters->parameters())
        file.copy_to("optimizer/" + slot.name + "/" + prefix + p.name, slot_view(slot.value, p));
    part.optimizer->set_steps(optimizer_steps[i]);
  }
  return counters;
}

}  // namespace seedrl::io
