#include "seedrl/io/checkpoint.hpp"

#include <charconv>
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

}  // namespace

void save_checkpoint(const std::string& path, const nn::ParameterStore& parameters,
                     const nn::Optimizer* optimizer, const CheckpointCounters& counters,
                     const Metadata& metadata) {
  // Device tensors are brought to the host first.
  const Tensor values = parameters.values().device() == Device::cpu
                            ? parameters.values()
                            : parameters.values().clone(Device::cpu);
  std::vector<NamedTensor> tensors;
  for (const nn::Parameter& p : parameters.parameters())
    tensors.push_back({p.name, slot_view(values, p)});
  Metadata meta = metadata;
  meta["format"] = kFormat;
  meta["format_version"] = kFormatVersion;
  meta["seedrl_version"] = kVersion;
  meta["frames"] = std::to_string(counters.frames);
  meta["learner_steps"] = std::to_string(counters.learner_steps);
  meta["episodes"] = std::to_string(counters.episodes);
  if (!counters.episode_window.empty()) meta["episode_window"] = counters.episode_window;
  if (!counters.normalization.empty()) meta["normalization"] = counters.normalization;
  if (optimizer) {
    meta["optimizer"] = optimizer->name();
    meta["optimizer_steps"] = std::to_string(optimizer->steps());
    for (const nn::OptimizerSlot& slot : optimizer->slots()) {
      const Tensor host =
          slot.value.device() == Device::cpu ? slot.value : slot.value.clone(Device::cpu);
      for (const nn::Parameter& p : parameters.parameters()) {
        tensors.push_back({"optimizer/" + slot.name + "/" + p.name, slot_view(host, p)});
      }
    }
  }
  write_safetensors(path, tensors, meta);
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
  };
  for (const nn::Parameter& p : parameters.parameters()) check(p.name, p);
  std::int64_t optimizer_steps = 0;
  if (optimizer) {
    const auto it = meta.find("optimizer");
    SEEDRL_REQUIRE(it != meta.end(), path, ": has no optimizer state; this run uses ",
                   optimizer->name());
    SEEDRL_REQUIRE(it->second == optimizer->name(), path, ": optimizer state is for '", it->second,
                   "', this run uses '", optimizer->name(), "'");
    optimizer_steps = parse_count(file, "optimizer_steps");
    for (const nn::OptimizerSlot& slot : optimizer->slots())
      for (const nn::Parameter& p : parameters.parameters())
        check("optimizer/" + slot.name + "/" + p.name, p);
  }

  for (const nn::Parameter& p : parameters.parameters()) file.copy_to(p.name, p.value);
  parameters.bump_version();
  if (optimizer) {
    for (const nn::OptimizerSlot& slot : optimizer->slots())
      for (const nn::Parameter& p : parameters.parameters())
        file.copy_to("optimizer/" + slot.name + "/" + p.name, slot_view(slot.value, p));
    optimizer->set_steps(optimizer_steps);
  }
  return counters;
}

}  // namespace seedrl::io
