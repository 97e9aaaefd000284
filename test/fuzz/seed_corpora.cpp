// Writes the seed corpora of fuzz_session, fuzz_checkpoint and fuzz_description, from seedrl's own
// writers, so that the fuzzers start from inputs that get past the first checks and the seeds
// follow the formats as they change:
//
//   seed_corpora session|checkpoint|description DIR
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "seedrl/agent/acting.hpp"
#include "seedrl/core/step_flags.hpp"
#include "seedrl/experience/normalization.hpp"
#include "seedrl/io/safetensors.hpp"
#include "seedrl/nn/description.hpp"
#include "seedrl/transport/protocol.hpp"
#include "session_fixtures.hpp"

using namespace seedrl;

namespace {

void write(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::ofstream out(dir + "/" + name, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// fuzz_session's input: the listener (0: masked, 1: box), a split seed, then the stream.
std::string session_input(int listener, std::uint8_t split, const std::string& stream) {
  return std::string(1, static_cast<char>(listener)) + static_cast<char>(split) + stream;
}

void session(const std::string& dir) {
  const std::vector<float> rewards{0.5f, -1.0f};
  const std::vector<std::uint8_t> first(2, step_flags::kFirst), mid(2, 0);
  for (int listener = 0; listener < 2; ++listener) {
    const StepSpec spec = listener == 0 ? fuzz_session::masked_spec() : fuzz_session::box_spec();
    protocol::Hello hello;
    hello.token = fuzz_session::kToken;
    hello.run_id = 42;
    hello.num_envs = 2;
    hello.spec = spec;
    std::string stream;
    protocol::encode_hello(stream, hello, 1);
    const std::vector<std::uint8_t> observations(2 * spec.observation.bytes(), 0);
    std::vector<std::uint8_t> mask_bits(2);
    protocol::pack_bits(std::vector<std::uint8_t>{1, 1, 0, 0, 1, 1}, 3, mask_bits);
    std::vector<std::span<const std::uint8_t>> fields;
    if (!spec.fields.empty()) fields.push_back(mask_bits);
    for (std::uint32_t t = 0; t < 3; ++t)
      protocol::encode_step(stream, 2 + t, rewards, t == 0 ? first : mid, observations, fields);
    const std::string steps = stream;
    protocol::encode_goodbye(stream, 9);
    const std::string name = listener == 0 ? "masked" : "box";
    write(dir, name + "_session", session_input(listener, 7, stream));
    write(dir, name + "_no_goodbye", session_input(listener, 200, steps));
    hello.token = "wrong";
    std::string wrong;
    protocol::encode_hello(wrong, hello, 1);
    write(dir, name + "_wrong_token", session_input(listener, 3, wrong));
  }
}

// A checkpoint file of `metadata` without checksums (so that the fuzzer's changes reach the
// readers behind them), in fuzz_checkpoint's file mode.
std::string unchecked_file(const io::Metadata& metadata) {
  std::string header = "{";
  std::string data;
  const std::vector<std::pair<std::string, std::vector<std::int64_t>>> tensors{
      {"torso.fc0.weight", {2, 4}}, {"torso.fc0.bias", {2}},  {"policy.weight", {3, 2}},
      {"policy.bias", {3}},         {"value.weight", {1, 2}}, {"value.bias", {1}}};
  for (const auto& [name, shape] : tensors) {
    std::int64_t n = 1;
    std::string dims;
    for (const std::int64_t d : shape) {
      n *= d;
      dims += (dims.empty() ? "" : ",") + std::to_string(d);
    }
    const std::size_t begin = data.size();
    data.append(static_cast<std::size_t>(n) * 4, '\0');
    header += "\"" + name + "\":{\"dtype\":\"F32\",\"shape\":[" + dims + "],\"data_offsets\":[" +
              std::to_string(begin) + "," + std::to_string(data.size()) + "]},";
  }
  header += "\"__metadata__\":{";
  bool first = true;
  for (const auto& [key, value] : metadata) {
    header += (first ? "\"" : ",\"") + key + "\":\"" + value + "\"";
    first = false;
  }
  header += "}}";
  std::string bytes(8, '\0');
  const std::uint64_t size = header.size();
  for (int i = 0; i < 8; ++i)
    bytes[static_cast<std::size_t>(i)] = static_cast<char>(size >> (8 * i));
  return std::string(1, '\0') + bytes + header + data;
}

void checkpoint(const std::string& dir) {
  ExperienceNormalizer normalizer({.observations = true}, 4, 0.99f, 2);
  const std::vector<std::pair<std::string, std::string>> extras{
      {"action_spec", ActionSpec::discrete(3).to_text()},
      {"acting", ActingOptions{ActionMode::epsilon_greedy, 0.05}.to_text()},
      {"normalization", normalizer.to_text()},
      {"step_fields", StepSpec::fields_to_text(fuzz_session::masked_spec().fields)},
      {"episode_window", "train 1.5 10 eval -2 7"}};
  io::Metadata base{{"format", "seedrl.checkpoint"},
                    {"format_version", "1"},
                    {"frames", "100"},
                    {"learner_steps", "10"},
                    {"episodes", "3"},
                    {"network", "mlp observation [4] actions 3 lstm 0 hidden [2]"}};
  write(dir, "file_plain", unchecked_file(base));
  std::string lines;
  for (const auto& [key, value] : extras) {
    io::Metadata with = base;
    with[key] = value;
    write(dir, "file_" + key, unchecked_file(with));
    lines += key + "=" + value + "\n";
    write(dir, "metadata_" + key, "\x01" + key + "=" + value + "\n");
  }
  write(dir, "metadata_all", "\x01" + lines);
  write(dir, "metadata_box",
        "\x01network=mlp observation [4] box 2 lstm 0 hidden [2]\naction_spec=" +
            ActionSpec::box(2, -1.0f, 1.0f).to_text() + "\npolicy=squashed_gaussian -5 2\n");
}

void description(const std::string& dir) {
  std::vector<nn::NetworkOptions> networks{
      nn::NetworkOptions::mlp(4, 2, {64, 64}), nn::NetworkOptions::minatar(4, 6),
      nn::NetworkOptions::nature(18), nn::NetworkOptions::board({2, 6, 7}, 7, {8}, {16})};
  networks[1].lstm_size = 64;
  networks[1].q_head = true;
  networks[1].policy_value_heads = false;
  networks[1].dueling = true;
  networks.push_back(nn::NetworkOptions::mlp(3, 0, {8}).gaussian(2));
  nn::NetworkOptions branched = nn::NetworkOptions::mlp(5, 5, {8});
  branched.action_branches = {3, 2};
  networks.push_back(branched);
  for (std::size_t i = 0; i < networks.size(); ++i)
    write(dir, "network_" + std::to_string(i), nn::describe(networks[i]));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: seed_corpora session|checkpoint|description DIR\n");
    return 2;
  }
  const std::string kind = argv[1], dir = argv[2];
  if (kind == "session") {
    session(dir);
  } else if (kind == "checkpoint") {
    checkpoint(dir);
  } else if (kind == "description") {
    description(dir);
  } else {
    std::fprintf(stderr, "seed_corpora: unknown corpus '%s'\n", kind.c_str());
    return 2;
  }
  return 0;
}
