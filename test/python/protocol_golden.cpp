// protocol_golden: frames of every type written by the reference codec
// (src/transport/protocol.cpp), one JSON line each ({"name": ..., "hex": ...}), for the Python
// codec's test (test/python/test_protocol.py), which builds the same frames with
// python/seedrl/protocol.py and decodes these. The cases here and there are the same by name;
// generated at test time, so that the two implementations cannot drift.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "seedrl/transport/protocol.hpp"

namespace {

using namespace seedrl;
namespace p = seedrl::protocol;

void emit(const char* name, const std::string& frame) {
  std::string hex;
  static const char* digits = "0123456789abcdef";
  for (unsigned char c : frame) {
    hex.push_back(digits[c >> 4]);
    hex.push_back(digits[c & 15]);
  }
  std::printf("{\"name\":\"%s\",\"hex\":\"%s\"}\n", name, hex.c_str());
}

std::span<const std::uint8_t> bytes(const std::vector<std::uint8_t>& v) {
  return v;
}

// The specs of the cases (test_protocol.py has the same).
StepSpec cartpole() {
  return {TensorSpec{{4}, DType::f32}, ActionSpec::discrete(2), {}};
}
StepSpec pendulum() {
  return {TensorSpec{{3}, DType::f32}, ActionSpec::box({-2.0f}, {2.0f}), {}};
}
StepSpec gunner() {
  return {TensorSpec{{16}, DType::f32},
          ActionSpec::branched({3, 2}),
          {{kActionMaskField, TensorSpec{{5}, DType::u8}}}};
}
StepSpec pixels_with_fields() {
  return {TensorSpec{{2, 3, 3}, DType::u8},
          ActionSpec::discrete(10),
          {{kActionMaskField, TensorSpec{{10}, DType::u8}}, {"goal", TensorSpec{{2}, DType::i32}}}};
}

}  // namespace

int main() {
  std::string f;
  p::encode_hello(f, {"s3cret", 0x0102030405060708ULL, 2, false, cartpole()}, 1);
  emit("hello_cartpole", f);
  f.clear();
  p::encode_hello(f, {"", 42, 1, true, pendulum()}, 0);
  emit("hello_pendulum_evaluation", f);
  f.clear();
  p::encode_hello(f, {"tok", 9, 3, false, gunner()}, 5);
  emit("hello_gunner", f);
  f.clear();
  p::encode_hello(f, {"tok", 10, 2, false, pixels_with_fields()}, 6);
  emit("hello_pixels_fields", f);

  f.clear();
  p::encode_welcome(f, {cartpole(), 16, 1u << 20}, 1);
  emit("welcome_cartpole", f);
  f.clear();
  p::encode_welcome(f, {gunner(), 0, p::kDefaultMaxFrameBytes}, 5);
  emit("welcome_gunner", f);

  f.clear();
  p::encode_error(f, {p::ErrorCode::unauthorized, "wrong token"}, 1);
  emit("error_unauthorized", f);
  f.clear();
  p::encode_error(f, {p::ErrorCode::finished, "training is over"}, 0);
  emit("error_finished", f);

  // STEPs: CartPole (2 environments), Gunner (3, a mask of 5 as bits), pixels (2, a mask of 10
  // and an i32 field).
  {
    const std::vector<float> rewards{0.0f, 1.0f};
    const std::vector<std::uint8_t> flags{1, 2};
    std::vector<float> obs{0.5f, -0.25f, 1.0f, 2.0f, -1.0f, 0.125f, 3.0f, -4.0f};
    const auto* raw = reinterpret_cast<const std::uint8_t*>(obs.data());
    f.clear();
    p::encode_step(f, 7, rewards, flags, {raw, obs.size() * 4});
    emit("step_cartpole", f);
  }
  {
    const std::vector<float> rewards{0.5f, -1.0f, 2.0f};
    const std::vector<std::uint8_t> flags{0, 4, 8};
    std::vector<float> obs(3 * 16);
    for (std::size_t i = 0; i < obs.size(); ++i) obs[i] = static_cast<float>(i) * 0.5f - 3.0f;
    const auto* raw = reinterpret_cast<const std::uint8_t*>(obs.data());
    const std::vector<std::uint8_t> mask{1, 1, 0, 1, 0, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1};
    std::vector<std::uint8_t> packed(3);
    p::pack_bits(mask, 5, packed);
    const std::vector<std::span<const std::uint8_t>> fields{bytes(packed)};
    f.clear();
    p::encode_step(f, 8, rewards, flags, {raw, obs.size() * 4}, fields);
    emit("step_gunner", f);
  }
  {
    const std::vector<float> rewards{0.0f, 0.0f};
    const std::vector<std::uint8_t> flags{1, 0};
    std::vector<std::uint8_t> obs(2 * 18);
    for (std::size_t i = 0; i < obs.size(); ++i) obs[i] = static_cast<std::uint8_t>(i * 7);
    std::vector<std::uint8_t> mask(20, 0);
    for (std::size_t i = 0; i < mask.size(); i += 3) mask[i] = 1;
    std::vector<std::uint8_t> packed(4);
    p::pack_bits(mask, 10, packed);
    const std::vector<std::int32_t> goal{3, -4, 100000, 0};
    const std::vector<std::uint8_t> goal_bytes(
        reinterpret_cast<const std::uint8_t*>(goal.data()),
        reinterpret_cast<const std::uint8_t*>(goal.data()) + goal.size() * 4);
    const std::vector<std::span<const std::uint8_t>> fields{bytes(packed), bytes(goal_bytes)};
    f.clear();
    p::encode_step(f, 9, rewards, flags, obs, fields);
    emit("step_pixels_fields", f);
  }

  // ACTIONS through the action space's section (the spec chooses i32 rows or f32 rows).
  auto actions = [&](const char* name, std::uint32_t sequence, const StepSpec& spec,
                     ActionBuffer values) {
    f.clear();
    if (!p::encode_actions(f, sequence, spec.action, values).is_ok()) {
      std::fprintf(stderr, "protocol_golden: %s refused\n", name);
      std::exit(1);
    }
    emit(name, f);
  };
  std::vector<std::int32_t> cartpole_actions{1, 0}, gunner_actions{2, 1, 0, 0, 1, 1};
  std::vector<float> pendulum_actions{-1.5f, 2.0f};
  actions("actions_cartpole", 7, cartpole(), cartpole_actions);
  actions("actions_gunner", 8, gunner(), gunner_actions);
  actions("actions_pendulum", 3, pendulum(), pendulum_actions);

  f.clear();
  p::encode_goodbye(f, 11);
  emit("goodbye", f);
  return 0;
}
