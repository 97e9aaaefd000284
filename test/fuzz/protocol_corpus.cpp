// Writes a seed corpus for fuzz_protocol: one valid frame of each type, discrete and box (and valid
// sessions: HELLO, STEPs, GOODBYE; a box WELCOME followed by box ACTIONS, which fuzz_protocol reads
// with the box decoder), so the fuzzer starts from frames that get past the header checks.
//
//   protocol_corpus DIR
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "seedrl/experience/unroll.hpp"
#include "seedrl/transport/protocol.hpp"

using namespace seedrl;

namespace {

void write(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::ofstream out(dir + "/" + name, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// STEP and ACTIONS take their sizes from the sequence number (see fuzz_protocol.cpp).
std::uint32_t step_sequence(std::uint32_t num_envs, std::uint32_t observation_bytes) {
  return num_envs | (observation_bytes << 8);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: protocol_corpus DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  protocol::Hello hello;
  hello.token = "secret";
  hello.run_id = 0x1234567890abcdefULL;
  hello.num_envs = 2;
  hello.spec.observation = {{4}, DType::f32};
  hello.spec.action = ActionSpec::discrete(2);
  std::string frame;
  protocol::encode_hello(frame, hello, 0);
  write(dir, "hello", frame);

  protocol::Welcome welcome;
  welcome.spec.observation = {{10, 10, 4}, DType::u8};
  welcome.spec.action = ActionSpec::discrete(6);
  welcome.first_slot = 7;
  welcome.max_frame_bytes = 1 << 20;
  frame.clear();
  protocol::encode_welcome(frame, welcome, 0);
  write(dir, "welcome", frame);

  frame.clear();
  protocol::encode_error(frame, {protocol::ErrorCode::unauthorized, "wrong token"}, 3);
  write(dir, "error", frame);

  const std::vector<float> rewards{1.0f, -0.5f};
  const std::vector<std::uint8_t> flags{step_flags::kFirst, step_flags::kTerminated};
  const std::vector<std::uint8_t> observations(2 * 16, 7);
  std::string session = "";
  protocol::encode_hello(session, hello, 0);
  frame.clear();
  protocol::encode_step(frame, step_sequence(2, 16), rewards, flags, observations);
  write(dir, "step", frame);
  session += frame;
  session += frame;
  protocol::encode_goodbye(session, 5);
  write(dir, "session", session);

  frame.clear();
  const std::vector<std::int32_t> actions{0, 1, 2};
  protocol::encode_actions(frame, 5 | (3u << 8), actions);
  write(dir, "actions", frame);

  // Box actions: Pendulum's torque, and two dimensions of their own bounds.
  const ActionSpec box = ActionSpec::box({-2.0f, -0.5f}, {2.0f, 1.5f});
  protocol::Hello box_hello = hello;
  box_hello.spec.observation = {{3}, DType::f32};
  box_hello.spec.action = ActionSpec::box(1, -2.0f, 2.0f);
  frame.clear();
  protocol::encode_hello(frame, box_hello, 0);
  write(dir, "hello_box", frame);

  protocol::Welcome box_welcome = welcome;
  box_welcome.spec.action = box;
  frame.clear();
  protocol::encode_welcome(frame, box_welcome, 0);
  write(dir, "welcome_box", frame);

  // ACTIONS for 3 environments (the sequence's second byte), read as rows of the WELCOME's box.
  const std::vector<float> rows{-2.0f, 1.5f, 0.25f, -0.5f, 2.0f, 0.0f};
  std::string box_session = frame;
  frame.clear();
  protocol::encode_box_actions(frame, 3u << 8, rows, 2);
  box_session += frame;
  box_session += frame;
  write(dir, "actions_box", box_session);

  std::string hello_session;
  protocol::encode_hello(hello_session, box_hello, 0);
  const std::vector<std::uint8_t> pendulum_obs(2 * 12, 0);
  frame.clear();
  protocol::encode_step(frame, step_sequence(2, 12), rewards, flags, pendulum_obs);
  hello_session += frame;
  protocol::encode_goodbye(hello_session, 2);
  write(dir, "session_box", hello_session);

  // Declared fields: a HELLO with a mask and a player, then a STEP that carries them.
  protocol::Hello field_hello = hello;
  field_hello.spec.fields = {{"mask", {{3}, DType::u8}}, {"player", {{}, DType::i32}}};
  std::string field_session;
  protocol::encode_hello(field_session, field_hello, 0);
  const std::vector<std::uint8_t> mask{1, 0, 1, 0, 1, 1};
  const std::vector<std::uint8_t> players(2 * 4, 1);
  const std::span<const std::uint8_t> fields[] = {mask, players};
  frame.clear();
  protocol::encode_step(frame, step_sequence(2, 16), rewards, flags, observations, fields);
  field_session += frame;
  protocol::encode_goodbye(field_session, 3);
  write(dir, "session_fields", field_session);

  // A legal-action mask of 10 actions, sent as bits (2 bytes per environment), then a STEP whose
  // mask sets a bit beyond the 10 actions (refused as malformed).
  protocol::Hello mask_hello = hello;
  mask_hello.spec.action = ActionSpec::discrete(10);
  mask_hello.spec.fields = {{kActionMaskField, {{10}, DType::u8}}};
  std::string mask_session;
  protocol::encode_hello(mask_session, mask_hello, 0);
  const std::vector<std::uint8_t> mask_values{1, 0, 1, 1, 0, 0, 0, 0, 1, 1,   // environment 0
                                              0, 0, 0, 0, 0, 0, 0, 0, 0, 1};  // environment 1
  std::vector<std::uint8_t> mask_bits(4);
  protocol::pack_bits(mask_values, 10, mask_bits);
  const std::span<const std::uint8_t> mask_fields[] = {mask_bits};
  frame.clear();
  protocol::encode_step(frame, step_sequence(2, 16), rewards, flags, observations, mask_fields);
  mask_session += frame;
  mask_bits[3] |= 0x80;  // environment 1's bit 15: past its 10 actions
  frame.clear();
  protocol::encode_step(frame, step_sequence(2, 16), rewards, flags, observations, mask_fields);
  mask_session += frame;
  protocol::encode_goodbye(mask_session, 4);
  write(dir, "session_mask_bits", mask_session);

  // Action branches of 3 and 2 with a mask of 5 (bits), a STEP, then ACTIONS of 2 environments x
  // 2 branches (sequence: 2 environments in bits 8-15) and ACTIONS whose second branch is out of
  // range (refused as malformed).
  protocol::Hello branch_hello = hello;
  branch_hello.spec.action = ActionSpec::branched({3, 2});
  branch_hello.spec.fields = {{kActionMaskField, {{5}, DType::u8}}};
  std::string branch_session;
  protocol::encode_hello(branch_session, branch_hello, 0);
  std::vector<std::uint8_t> branch_bits(2);
  protocol::pack_bits(std::vector<std::uint8_t>{1, 1, 0, 1, 1, 0, 1, 1, 1, 0}, 5, branch_bits);
  const std::span<const std::uint8_t> branch_fields[] = {branch_bits};
  frame.clear();
  protocol::encode_step(frame, step_sequence(2, 16), rewards, flags, observations, branch_fields);
  branch_session += frame;
  const std::vector<std::int32_t> branch_actions{0, 1, 2, 0};
  frame.clear();
  protocol::encode_actions(frame, 2u << 8, branch_actions);
  branch_session += frame;
  const std::vector<std::int32_t> outside{0, 1, 2, 2};
  frame.clear();
  protocol::encode_actions(frame, 2u << 8, outside);
  branch_session += frame;
  protocol::encode_goodbye(branch_session, 5);
  write(dir, "session_branches", branch_session);
  return 0;
}
