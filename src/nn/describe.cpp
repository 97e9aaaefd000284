// nn::parse_description: reads back what nn::describe() wrote (checkpoints record it); each head
// kind reads its own words.
#include <charconv>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/nn/description.hpp"
#include "seedrl/nn/description_reader.hpp"

namespace seedrl::nn {
NetworkOptions parse_description(std::string_view text, std::string_view source) {
  DescriptionReader r(text, source);
  NetworkOptions c;
  const std::string_view torso = r.word();
  if (torso == "mlp") {
    c.torso = Torso::mlp;
  } else if (torso == "minatar") {
    c.torso = Torso::minatar;
  } else if (torso == "nature") {
    c.torso = Torso::nature;
  } else if (torso == "board") {
    c.torso = Torso::board;
  } else {
    r.fail("unknown torso '", torso, "' (mlp, minatar, nature or board)");
  }
  r.expect("observation");
  const std::vector<std::int64_t> dims = r.list();
  if (dims.empty() || dims.size() > static_cast<std::size_t>(Shape::kMaxRank))
    r.fail("observation shape of rank ", dims.size());
  c.observation_shape = Shape(std::span<const std::int64_t>(dims));
  const std::string_view kind = r.word();
  if (kind == "actions") {
    c.num_actions = r.number();
  } else if (kind == "box") {
    c.gaussian(r.number());
  } else {
    r.fail("expected 'actions' or 'box', found '", kind, "'");
  }
  r.expect("lstm");
  c.lstm_size = r.number();
  if (c.torso == Torso::board) {
    r.expect("conv");
    c.conv_channels = r.list();
  }
  if (c.torso == Torso::mlp || c.torso == Torso::board) {
    r.expect("hidden");
    c.mlp_hidden = r.list();
  }
  while (!r.done()) {
    const std::string_view flag = r.word();
    bool read = false;
    for_each_head_kind([&](auto head) { read = read || decltype(head)::parse(flag, r, c); });
    if (read) continue;
    if (flag == "tanh") {
      c.mlp_activation = Activation::tanh;
    } else if (flag == "value_torso") {
      c.separate_value_torso = true;
    } else if (flag == "branches") {
      c.action_branches = r.list();
    } else {
      r.fail("unknown part '", flag, "'");
    }
  }
  try {
    c.validate();
  } catch (const Error& e) {
    r.fail(e.what());
  }
  return c;
}

}  // namespace seedrl::nn
