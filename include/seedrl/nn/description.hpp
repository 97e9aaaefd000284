// A network's architecture in words, which checkpoints record ("minatar observation [10, 10, 4]
// actions 6 lstm 64 dueling"): describe() writes it from NetworkOptions, parse_description reads
// it back. The torso and core write their own words here; each head kind (nn/heads/) writes and
// reads its own.
#pragma once

#include <sstream>
#include <string>
#include <string_view>

#include "seedrl/nn/heads/head_kinds.hpp"
#include "seedrl/nn/network_options.hpp"

namespace seedrl::nn {

/// The architecture in words; a learner refuses a checkpoint of another architecture.
inline std::string describe(const NetworkOptions& n) {
  const char* torso = n.torso == Torso::mlp       ? "mlp"
                      : n.torso == Torso::minatar ? "minatar"
                      : n.torso == Torso::board   ? "board"
                                                  : "nature";
  std::ostringstream s;
  s << torso << " observation " << n.observation_shape;
  if (n.box_actions()) {
    s << " box " << n.action_dims;
  } else {
    s << " actions " << n.num_actions;
  }
  s << " lstm " << n.lstm_size;
  auto list = [&s](const std::vector<std::int64_t>& v) {
    s << "[";
    for (std::size_t i = 0; i < v.size(); ++i) s << (i ? "," : "") << v[i];
    s << "]";
  };
  if (n.torso == Torso::board) {
    s << " conv ";
    list(n.conv_channels);
  }
  if (n.torso == Torso::mlp || n.torso == Torso::board) {
    s << " hidden ";
    list(n.mlp_hidden);
    if (n.mlp_activation == Activation::tanh) s << " tanh";
  }
  if (n.separate_value_torso) s << " value_torso";
  for_each_head_kind([&](auto kind) {
    if (decltype(kind)::in(n)) decltype(kind)::describe(n, s);
  });
  if (!n.action_branches.empty()) {
    s << " branches ";
    list(n.action_branches);
  }
  return s.str();
}

/// The inverse of describe(): the torso, observation shape, actions (and their branches), LSTM
/// size, the board torso's convolutions, MLP widths and activation, the separate value torso, and
/// each head kind's words
/// ("dueling": a dueling Q head alone; "critic [...]": a critic alone); without such words the
/// result has the policy and value heads, and a caller that knows better (Policy, from a
/// checkpoint's parameter names) sets them. Throws naming `source` and the text where it is not
/// describe()'s format.
NetworkOptions parse_description(std::string_view text, std::string_view source);

}  // namespace seedrl::nn
