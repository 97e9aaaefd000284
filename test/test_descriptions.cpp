// The text forms a checkpoint's metadata carries, read back exactly and refused by name when
// malformed: ActionSpec ("action_spec"), the network description ("network", nn::describe and
// nn::parse_description) and ActingOptions ("acting").
#include <doctest/doctest.h>

#include <vector>

#include "seedrl/agent/acting.hpp"
#include "seedrl/core/action_spec.hpp"
#include "seedrl/nn/description.hpp"

namespace test_descriptions {

using namespace seedrl;

TEST_CASE("ActionSpec: exact text both ways, and bad text named") {
  const ActionSpec box = ActionSpec::box({-0.1f, -3.0e-7f, 1.0f / 3.0f}, {0.4f, 1e30f, 2.5f});
  CHECK(ActionSpec::parse(box.to_text(), "test") == box);  // floats round-trip exactly
  CHECK(ActionSpec::parse("discrete 6", "test") == ActionSpec::discrete(6));
  CHECK(ActionSpec::discrete(6).to_text() == "discrete 6");
  CHECK(ActionSpec::box(2, -1.0f, 1.0f).to_text() == "box 2 low -1 -1 high 1 1");
  CHECK_THROWS_WITH_AS(ActionSpec::parse("box 2 low -1 high 1 1", "ckpt"),
                       doctest::Contains("ckpt: action spec 'box 2 low -1 high 1 1'"), Error);
  CHECK_THROWS_WITH_AS(ActionSpec::parse("box 0 low high", "ckpt"),
                       doctest::Contains("1 to 65536 dimensions"), Error);
  CHECK_THROWS_WITH_AS(ActionSpec::parse("discrete 0", "ckpt"),
                       doctest::Contains("N > 0 discrete actions"), Error);
  CHECK_THROWS_WITH_AS(ActionSpec::parse("box 1 low nan high 1", "ckpt"),
                       doctest::Contains("bounds"), Error);
  CHECK_THROWS_WITH_AS(ActionSpec::parse("discrete 3 4", "ckpt"),
                       doctest::Contains("unexpected text"), Error);
  CHECK_THROWS_WITH_AS(ActionSpec::parse("cube 3", "ckpt"),
                       doctest::Contains("expected 'discrete', 'branches' or 'box'"), Error);
}

TEST_CASE("parse_description reads back what describe writes, and names what it cannot read") {
  std::vector<nn::NetworkOptions> configs = {
      nn::NetworkOptions::mlp(4, 2, {64, 64}), nn::NetworkOptions::mlp(7, 3, {}),
      nn::NetworkOptions::minatar(4, 6), nn::NetworkOptions::nature(18),
      nn::NetworkOptions::board({2, 6, 7}, 7, {8}, {})};
  configs[2].lstm_size = 64;
  configs.push_back(nn::NetworkOptions::minatar(2, 5));  // a recurrent dueling Q-network
  configs.back().lstm_size = 6;
  configs.back().q_head = true;
  configs.back().policy_value_heads = false;
  configs.back().dueling = true;
  for (const nn::NetworkOptions& c : configs) {
    const nn::NetworkOptions back = nn::parse_description(nn::describe(c), "test");
    CHECK(nn::describe(back) == nn::describe(c));
    CHECK(back.torso == c.torso);
    CHECK(back.observation_shape == c.observation_shape);
    CHECK(back.conv_channels == c.conv_channels);  // (describe() holds the widths it writes)
    CHECK(back.lstm_size == c.lstm_size);
    CHECK(back.dueling == c.dueling);
  }
  for (const char* bad : {"", "mlp", "mlp observation [4 actions 2 lstm 0 hidden []",
                          "mlp observation [4] actions x lstm 0 hidden []",
                          "minatar observation [10, 10, 4] actions 6 lstm 0 wide",
                          "mlp observation [4] actions 0 lstm 0 hidden [8]",
                          // Numbers out of bounds, and a list too long to be a network's.
                          "mlp observation [4] actions 2 lstm 0 hidden [2000000000]",
                          "mlp observation [4] actions 2 lstm -1 hidden [8]",
                          "mlp observation [4] actions 99999999999999999999 lstm 0 hidden [8]"}) {
    CHECK_THROWS_WITH_AS(nn::parse_description(bad, "file.safetensors"),
                         doctest::Contains("file.safetensors: network"), Error);
  }
  std::string long_list = "mlp observation [4] actions 2 lstm 0 hidden [1";
  for (int i = 0; i < 300; ++i) long_list += ",1";
  CHECK_THROWS_WITH_AS(nn::parse_description(long_list + "]", "file.safetensors"),
                       doctest::Contains("a list of more than 256 numbers"), Error);
  // Dimensions whose product overflows are refused by Shape itself.
  CHECK_THROWS_WITH_AS(Shape({1 << 30, 1 << 30, 1 << 30}), doctest::Contains("overflow 64 bits"),
                       Error);
}

TEST_CASE("ActingOptions: text form both ways, and bad text named") {
  for (const ActingOptions& s :
       {ActingOptions{ActionMode::greedy}, ActingOptions{ActionMode::sample},
        ActingOptions{ActionMode::epsilon_greedy, 0.001}}) {
    const ActingOptions back = ActingOptions::parse(s.to_text(), "test");
    CHECK(back.mode == s.mode);
    CHECK(back.epsilon == doctest::Approx(s.epsilon));
  }
  for (const char* bad : {"", "greedy 0.1", "epsilon_greedy", "epsilon_greedy -1", "softmax"})
    CHECK_THROWS_WITH_AS(ActingOptions::parse(bad, "src"), doctest::Contains("src: acting"), Error);
  CHECK_THROWS_AS((ActingOptions{ActionMode::epsilon_greedy, 1.5}.validate()), Error);
}

}  // namespace test_descriptions
