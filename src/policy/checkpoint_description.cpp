// describe_checkpoint: what a checkpoint says about the agent that wrote it (policy/policy.hpp),
// read from its metadata alone; every field is checked (the fuzz target fuzz_checkpoint reads
// crafted files with it).
#include <sstream>

#include "seedrl/io/safetensors.hpp"
#include "seedrl/policy/policy.hpp"

namespace seedrl {

PolicyDescription describe_checkpoint(const std::string& checkpoint) {
  return describe_checkpoint(io::SafetensorsFile::read(checkpoint));
}

PolicyDescription describe_checkpoint(const io::SafetensorsFile& file) {
  const std::string& checkpoint = file.source();
  const io::Metadata& meta = file.metadata();
  auto find = [&](const char* key) -> const std::string* {
    const auto it = meta.find(key);
    return it == meta.end() ? nullptr : &it->second;
  };
  PolicyDescription d;
  d.counters = io::checkpoint_counters(file);  // also checks the format
  const std::string* network = find("network");
  SEEDRL_REQUIRE(network != nullptr, checkpoint,
                 ": the checkpoint does not name its network (metadata 'network'); it was not "
                 "written by a seedrl learner");
  d.network = nn::parse_description(*network, checkpoint);
  // The network the description asks for must be of the order of the file that holds its
  // values: a crafted description cannot make Policy allocate gigabytes for a small file. (Twice
  // the file plus a million values: a description that merely disagrees with the file is told
  // which tensor is missing.)
  std::int64_t file_values = 0;
  for (const io::SafetensorsFile::Entry& e : file.entries())
    file_values += static_cast<std::int64_t>((e.end - e.begin) / sizeof(float));
  d.network.max_parameters = 2 * file_values + (std::int64_t{1} << 20);
  if (d.network.box_actions()) {
    const std::string* spec = find("action_spec");
    SEEDRL_REQUIRE(
        spec != nullptr, checkpoint, ": network '", *network,
        "' acts on a box of real values but the checkpoint records no bounds (metadata "
        "'action_spec'; written by an older seedrl: train or resume to write a new one)");
    d.action_spec = ActionSpec::parse(*spec, checkpoint);
    SEEDRL_REQUIRE(d.action_spec.is_box() && d.action_spec.dims() == d.network.action_dims,
                   checkpoint, ": the network acts on a box of ", d.network.action_dims,
                   " values but the checkpoint records ", d.action_spec.to_string());
  } else {
    d.action_spec = ActionSpec::discrete(static_cast<std::int32_t>(d.network.num_actions));
    if (const std::string* spec = find("action_spec")) {  // it may have branches
      const ActionSpec recorded = ActionSpec::parse(*spec, checkpoint);
      SEEDRL_REQUIRE(!recorded.is_box() && recorded.num_actions == d.network.num_actions,
                     checkpoint, ": the network has ", d.network.num_actions,
                     " discrete actions but the checkpoint records '", *spec, "'");
      d.action_spec = recorded;
      d.network.require_branches_of(recorded, checkpoint);
    }
  }
  if (const std::string* text = find("normalization")) {
    d.normalization = ObservationNormalization::parse(*text, checkpoint);
    SEEDRL_REQUIRE(!d.normalization.active() ||
                       d.normalization.moments->size() == d.network.observation_shape.numel(),
                   checkpoint, ": observation statistics of ",
                   d.normalization.active() ? d.normalization.moments->size() : 0,
                   " values for observations ", d.network.observation_shape);
  }
  if (const std::string* policy = find("policy")) {
    std::istringstream words(*policy);
    std::string kind;
    SacLogStdBounds bounds;
    words >> kind >> bounds.min >> bounds.max;
    SEEDRL_REQUIRE(kind == "squashed_gaussian" && words && words.eof() && d.network.box_actions(),
                   checkpoint, ": metadata 'policy' is '", *policy,
                   "'; expected 'squashed_gaussian MIN MAX' on a network of box actions");
    try {
      bounds.validate("policy");
    } catch (const Error& e) {
      fail(checkpoint, ": metadata 'policy': ", e.what());
    }
    d.squashed = bounds;
  }
  if (const std::string* fields = find("step_fields"))
    d.step_fields = StepSpec::parse_fields(*fields, checkpoint);
  // The heads, from the parameters the file holds.
  const bool policy =
      file.find("policy.weight") != nullptr || file.find("policy_mean.weight") != nullptr;
  const bool q = file.find("q.weight") != nullptr;
  const bool dueling = file.find("q_value.weight") != nullptr;
  SEEDRL_REQUIRE(policy || q || dueling, checkpoint,
                 ": holds no policy head ('policy.weight') and no Q head ('q.weight' or "
                 "'q_value.weight')");
  SEEDRL_REQUIRE(dueling == d.network.dueling, checkpoint, ": network '", *network, "' ",
                 d.network.dueling ? "is" : "is not", " dueling but the file ",
                 dueling ? "holds" : "lacks", " 'q_value.weight'");
  d.network.policy_value_heads = policy;
  d.network.q_head = q || dueling;
  if (const std::string* agent = find("agent")) d.agent = *agent;
  if (const std::string* acting = find("acting")) {
    d.acting = ActingOptions::parse(*acting, checkpoint);
  }
  return d;
}

}  // namespace seedrl
