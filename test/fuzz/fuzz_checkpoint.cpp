// libFuzzer target for what seedrl reads from a checkpoint before it trusts it, in two modes (the
// input's first byte):
//
//   even  the bytes are a file: SafetensorsFile::parse (the header's JSON, offsets, dtypes,
//         shapes, duplicate names, checksums), then every reader of its metadata
//   odd   the bytes are metadata ("key=value" lines) on a valid checkpoint of a small network,
//         written with its checksums, so that the readers of the metadata are reached whatever the
//         values: checkpoint_counters, describe_checkpoint (the network description, the action
//         spec, the normalisation, the step fields, the acting record, the squash)
//
// Whatever the bytes, the readers return or throw seedrl::Error: they never read outside the
// file, crash, hang or allocate without bound.
//
// Built with clang (-fsanitize=fuzzer,address,undefined) by test/fuzz/CMakeLists.txt.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/io/checkpoint.hpp"
#include "seedrl/io/safetensors.hpp"
#include "seedrl/policy/policy.hpp"

namespace {

using namespace seedrl;

void read_everything(const io::SafetensorsFile& file) {
  for (const io::SafetensorsFile::Entry& e : file.entries()) {
    (void)file.first_non_finite(e.name);
    (void)file.tensor(e.name);
  }
  try {
    (void)io::checkpoint_counters(file);
  } catch (const Error&) {
  }
  try {
    (void)describe_checkpoint(file);
  } catch (const Error&) {
  }
}

// A checkpoint of an MLP of 4 observations and 3 actions (policy and value heads) whose metadata
// is `text`'s "key=value" lines on top of what a learner writes.
std::string checkpoint_with(std::string_view text) {
  io::Metadata metadata{{"format", "seedrl.checkpoint"},
                        {"format_version", "1"},
                        {"frames", "100"},
                        {"learner_steps", "10"},
                        {"episodes", "3"},
                        {"network", "mlp observation [4] actions 3 lstm 0 hidden [2]"}};
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    const std::size_t equals = line.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string key(line.substr(0, equals));
    if (key.empty() || key.starts_with(io::kChecksumKey)) continue;
    metadata[key] = std::string(line.substr(equals + 1));
  }
  const std::vector<io::NamedTensor> tensors{
      {"torso.fc0.weight", Tensor::zeros({2, 4})}, {"torso.fc0.bias", Tensor::zeros({2})},
      {"policy.weight", Tensor::zeros({3, 2})},    {"policy.bias", Tensor::zeros({3})},
      {"value.weight", Tensor::zeros({1, 2})},     {"value.bias", Tensor::zeros({1})}};
  try {
    return io::encode_safetensors(tensors, metadata);
  } catch (const Error&) {  // metadata that is not UTF-8 has no JSON form
    return {};
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string bytes = (data[0] & 1) == 0 ? std::string(input) : checkpoint_with(input);
  if (bytes.empty()) return 0;
  try {
    read_everything(io::SafetensorsFile::parse(std::move(bytes), "fuzz.safetensors"));
  } catch (const Error&) {
  }
  return 0;
}
