#include "seedrl/io/checkpoint.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <deque>
#include <filesystem>
#include <utility>
#include <vector>

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

// The existing generations of `path` with their numbers, newest (lowest number) first.
std::vector<std::pair<int, std::string>> existing_generations(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const std::string stem = p.stem().string() + ".", extension = p.extension().string();
  std::vector<std::pair<int, std::string>> found;
  if (fs::exists(p)) found.emplace_back(0, path);
  const fs::path directory = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(stem) || !name.ends_with(extension) ||
        name.size() <= stem.size() + extension.size())
      continue;
    const std::string_view digits =
        std::string_view(name).substr(stem.size(), name.size() - stem.size() - extension.size());
    int n = 0;
    const auto [end, status] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (status != std::errc() || end != digits.data() + digits.size() || n < 1 ||
        checkpoint_generation(path, n) != (p.parent_path() / name).string())
      continue;  // not a generation's name (e.g. a leading zero, a temporary file)
    found.emplace_back(n, checkpoint_generation(path, n));
  }
  std::sort(found.begin(), found.end());
  return found;
}

// Moves the existing generations of `path` one place back, so that `path` is free for a new
// newest one, keeping `generations` - 1 of them; the oldest beyond that are removed. Gaps (a
// crash between two renames, a file removed by hand) close up on the way.
void make_room_for_generation(const std::string& path, int generations) {
  namespace fs = std::filesystem;
  std::vector<std::pair<int, std::string>> found = existing_generations(path);
  struct Move {
    std::string from, to;
  };
  std::vector<Move> moves;
  for (std::size_t i = 0; i < found.size(); ++i) {
    const int target = static_cast<int>(i) + 1;
    if (target >= generations) {
      fs::remove(found[i].second);
    } else if (target != found[i].first) {
      moves.push_back({found[i].second, checkpoint_generation(path, target)});
    }
  }
  // Every target is distinct and each file keeps its place in the order, so a move whose target
  // is free always exists until all are done: never overwrite a generation still to move.
  while (!moves.empty()) {
    const auto ready =
        std::find_if(moves.begin(), moves.end(), [](const Move& m) { return !fs::exists(m.to); });
    SEEDRL_REQUIRE(ready != moves.end(), path, ": cannot move its older checkpoints back (",
                   moves.front().to, " is in the way)");
    fs::rename(ready->from, ready->to);
    moves.erase(ready);
  }
}

}  // namespace

std::string checkpoint_generation(const std::string& path, int n) {
  SEEDRL_REQUIRE(n >= 0, "checkpoint_generation: generation ", n, " must be >= 0");
  if (n == 0) return path;
  const std::filesystem::path p(path);
  return (p.parent_path() / (p.stem().string() + "." + std::to_string(n) + p.extension().string()))
      .string();
}

std::vector<std::string> checkpoint_generations(const std::string& path) {
  std::vector<std::string> paths;
  for (auto& [n, name] : existing_generations(path)) paths.push_back(std::move(name));
  return paths;
}

LoadedGeneration load_newest_generation(
    const std::string& path, const std::function<CheckpointCounters(const std::string&)>& load) {
  LoadedGeneration point;
  std::vector<std::string> faults;
  for (const std::string& generation : checkpoint_generations(path)) {
    try {
      point.counters = load(generation);
    } catch (const std::exception& e) {
      // Errors name the file already, as a rule; say it once.
      const std::string what = e.what();
      faults.push_back(what.starts_with(generation) ? what : generation + ": " + what);
      continue;
    }
    point.path = generation;
    for (const std::string& fault : faults)
      point.notes.push_back("warning: skipped a newer checkpoint that does not load: " + fault);
    if (!point.counters->checksummed)
      point.notes.push_back("warning: " + generation +
                            " carries no checksums (written before seedrl recorded them): its "
                            "data could not be verified");
    return point;
  }
  if (faults.empty()) return point;
  std::string message = "no checkpoint of " + path + " loads (newest first):";
  for (const std::string& fault : faults) message += "\n  " + fault;
  fail(message);
}

void save_checkpoint(const std::string& path, const nn::ParameterStore& parameters,
                     const nn::Optimizer* optimizer, const CheckpointCounters& counters,
                     const Metadata& metadata, int generations) {
  const CheckpointPart part{"", const_cast<nn::ParameterStore*>(&parameters),
                            const_cast<nn::Optimizer*>(optimizer)};
  save_checkpoint(path, std::span<const CheckpointPart>(&part, 1), counters, metadata, generations);
}

void save_checkpoint(const std::string& path, std::span<const CheckpointPart> parts,
                     const CheckpointCounters& counters, const Metadata& metadata,
                     int generations) {
  SEEDRL_REQUIRE(generations >= 1, "save_checkpoint: generations must be >= 1, got ", generations);
  check_parts(parts);
  Metadata meta = metadata;
  meta["format"] = kFormat;
  meta["format_version"] = kFormatVersion;
  meta["seedrl_version"] = kVersion;
  meta["frames"] = std::to_string(counters.frames);
  meta["learner_steps"] = std::to_string(counters.learner_steps);
  meta["episodes"] = std::to_string(counters.episodes);
  if (!counters.episode_window.empty()) meta["episode_window"] = counters.episode_window;
  if (!counters.normalization.empty()) meta["normalization"] = counters.normalization;
  std::vector<NamedTensor> tensors;
  std::deque<Tensor> host_copies;  // device tensors are brought to the host first
  auto on_host = [&](const Tensor& t) -> const Tensor& {
    return t.device() == Device::cpu ? t : host_copies.emplace_back(t.clone(Device::cpu));
  };
  for (const CheckpointPart& part : parts) {
    const std::string prefix = part_prefix(part);
    const Tensor values = on_host(part.parameters->values());
    for (const nn::Parameter& p : part.parameters->parameters())
      tensors.push_back({prefix + p.name, slot_view(values, p)});
    if (!part.optimizer) continue;
    meta[part_key("optimizer", part)] = part.optimizer->name();
    meta[part_key("optimizer_steps", part)] = std::to_string(part.optimizer->steps());
    for (const nn::OptimizerSlot& slot : part.optimizer->slots()) {
      const Tensor host = on_host(slot.value);
      for (const nn::Parameter& p : part.parameters->parameters())
        tensors.push_back({"optimizer/" + slot.name + "/" + prefix + p.name, slot_view(host, p)});
    }
  }
  for (const NamedTensor& t : tensors) require_finite(t.tensor, path, t.name);
  std::function<void()> before_replace;
  if (generations > 1) before_replace = [&] { make_room_for_generation(path, generations); };
  write_safetensors(path, tensors, meta, before_replace);
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
