// NetworkOptions: the architecture of a Network (nn/network.hpp) as a value: its torso, core and
// heads (the head kinds of nn/heads/), and what a forward and a backward exchange with the caller
// (NetworkOutputs, NetworkGrads). Its text form, which checkpoints record, is nn/description.hpp.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/core/action_spec.hpp"
#include "seedrl/core/dtype.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/core/shape.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/nn/layer_options.hpp"
#include "seedrl/nn/lstm_state.hpp"

namespace seedrl::nn {

enum class Torso {
  mlp,      ///< observation [D] f32: Linear+activation per entry of mlp_hidden
  minatar,  ///< observation [10, 10, C] (channels-last, as MinAtar emits it), f32 or u8
  nature,   ///< observation [C, 84, 84] u8 (stacked frames first), scaled by 1/255
  /// observation [C, H, W] f32 planes (a board game's: [2, 6, 7] for Connect Four): a 3x3
  /// convolution (padding 1, stride 1, ReLU) per entry of conv_channels, which keeps the board's
  /// size, then Linear+ReLU per entry of mlp_hidden on the flattened maps
  board,
};

struct NetworkOptions {
  Torso torso = Torso::mlp;
  Shape observation_shape;  ///< one frame, see Torso
  std::vector<std::int64_t> mlp_hidden{64, 64};
  Activation mlp_activation = Activation::relu;     ///< the MLP torso's hidden layers: relu or tanh
  std::vector<std::int64_t> conv_channels{32, 32};  ///< the board torso's convolutions
  /// The value head gets a torso of its own (feed-forward networks with policy and value heads).
  bool separate_value_torso = false;
  std::int64_t lstm_size = 0;    ///< 0: no LSTM core
  std::int64_t num_actions = 0;  ///< discrete actions (logits, Q-values); 0 with action_dims
  /// K >= 2 discrete action branches (ActionSpec::branched), their sizes summing to num_actions:
  /// a dueling Q head centres each branch's advantages on their own mean (branching dueling
  /// Q-networks); logits and Q-values lie side by side. Empty: one branch.
  std::vector<std::int64_t> action_branches;
  std::int64_t action_dims = 0;          ///< > 0: a Gaussian policy over a box of this many reals
  bool state_dependent_log_std = false;  ///< Gaussian: log std from the features, not free
  float initial_log_std = 0.0f;          ///< Gaussian: the free log std's initial value
  bool policy_value_heads = true;  ///< policy (logits, or Gaussian mean and log std) and value
  bool q_head = false;             ///< action values
  bool dueling = false;            ///< the Q head is a value and an advantage stream (R2D2)
  /// A critic Q(x, a) of an action of action_dims values given beside the observations (SAC;
  /// nn/heads/critic.hpp), with these hidden layers after the features; no other head.
  bool critic = false;
  std::vector<std::int64_t> critic_hidden{256, 256};
  /// Layer normalisation (learned scale and shift) of each of the critic's hidden layers before
  /// its ReLU, which keeps a critic stable at high update ratios. The description's word:
  /// "critic_layernorm".
  bool critic_layer_norm = false;
  /// > 0: this many learned values that depend on no input (SAC's temperature;
  /// nn/heads/scalars.hpp), starting at initial_scalar.
  std::int64_t scalars = 0;
  float initial_scalar = 0.0f;
  std::uint64_t seed = 0;  ///< parameter initialisation
  /// Parameters at most (0: no limit), checked before any is allocated: a network built from a
  /// file's description (Policy) may hold no more values than the file does.
  std::int64_t max_parameters = 0;

  static NetworkOptions mlp(std::int64_t observation_size, std::int64_t num_actions,
                            std::vector<std::int64_t> hidden = {64, 64}) {
    NetworkOptions c;
    c.torso = Torso::mlp;
    c.observation_shape = {observation_size};
    c.mlp_hidden = std::move(hidden);
    c.num_actions = num_actions;
    return c;
  }
  static NetworkOptions minatar(std::int64_t channels, std::int64_t num_actions) {
    NetworkOptions c;
    c.torso = Torso::minatar;
    c.observation_shape = {10, 10, channels};
    c.num_actions = num_actions;
    return c;
  }
  /// The board torso on planes [channels, rows, columns], its fully connected layers `hidden`.
  static NetworkOptions board(Shape planes, std::int64_t num_actions,
                              std::vector<std::int64_t> conv = {32, 32},
                              std::vector<std::int64_t> hidden = {256}) {
    NetworkOptions c;
    c.torso = Torso::board;
    c.observation_shape = std::move(planes);
    c.conv_channels = std::move(conv);
    c.mlp_hidden = std::move(hidden);
    c.num_actions = num_actions;
    return c;
  }
  static NetworkOptions nature(std::int64_t num_actions, std::int64_t stacked_frames = 4) {
    NetworkOptions c;
    c.torso = Torso::nature;
    c.observation_shape = {stacked_frames, 84, 84};
    c.num_actions = num_actions;
    return c;
  }

  /// Discrete action branches of these sizes (num_actions is their sum; one size: no branches).
  NetworkOptions& branches(std::vector<std::int64_t> sizes) {
    num_actions = 0;
    for (std::int64_t n : sizes) num_actions += n;
    action_branches = sizes.size() > 1 ? std::move(sizes) : std::vector<std::int64_t>{};
    return *this;
  }
  /// A Gaussian policy over `dims` real values (mean and log std) and a value head.
  NetworkOptions& gaussian(std::int64_t dims) {
    num_actions = 0;
    action_dims = dims;
    return *this;
  }
  /// A critic Q(x, a) of actions of `dims` values with `hidden` layers, and no other head.
  NetworkOptions& action_critic(std::int64_t dims, std::vector<std::int64_t> hidden = {256, 256}) {
    gaussian(dims);
    policy_value_heads = false;
    q_head = false;
    critic = true;
    critic_hidden = std::move(hidden);
    return *this;
  }
  bool box_actions() const { return action_dims > 0; }

  /// Whether the torso takes observations of `dtype`: f32 always; u8 where its first layer
  /// converts (the minatar, nature and board torsos); the mlp torso f32 only.
  bool takes_observations(DType dtype) const {
    return dtype == DType::f32 || (dtype == DType::u8 && torso != Torso::mlp);
  }

  /// Throws naming `who` unless this network declares the branches of `action` (a dueling Q head
  /// centres each branch alone; checkpoints, Policy and the ONNX export read them from the
  /// network's description) and no others.
  void require_branches_of(const ActionSpec& action, std::string_view who) const {
    const std::vector<std::int64_t> want =
        action.is_branched() ? action.branch_sizes() : std::vector<std::int64_t>{};
    if (action_branches == want) return;
    fail(who, ": actions ", action.to_string(), " but the network ",
         action_branches.empty() ? std::string("has no action branches (NetworkOptions::branches)")
                                 : str_cat("has ", action_branches.size(), " action branches"));
  }

  void validate(std::string_view owner = "NetworkOptions") const {
    SEEDRL_REQUIRE(action_dims >= 0, owner, ".action_dims must be >= 0, got ", action_dims);
    if (critic) {
      SEEDRL_REQUIRE(action_dims > 0 && !policy_value_heads && !q_head, owner,
                     ": a critic (critic) takes actions of action_dims > 0 values and is the "
                     "network's only head (no policy_value_heads, no q_head)");
      for (std::int64_t h : critic_hidden)
        SEEDRL_REQUIRE(h > 0, owner, ".critic_hidden sizes must be positive, got ", h);
    }
    SEEDRL_REQUIRE(!critic_layer_norm || (critic && !critic_hidden.empty()), owner,
                   ".critic_layer_norm normalises a critic's hidden layers: it needs a critic "
                   "(critic) with at least one hidden layer (critic_hidden)");
    if (action_dims > 0) {
      SEEDRL_REQUIRE(num_actions == 0, owner,
                     ": num_actions and action_dims are exclusive (discrete "
                     "actions or a box), got ",
                     num_actions, " and ", action_dims);
      SEEDRL_REQUIRE(critic || (policy_value_heads && !q_head), owner,
                     ": box actions (action_dims) need the policy and value heads "
                     "and no Q head");
      SEEDRL_REQUIRE(std::isfinite(initial_log_std), owner, ".initial_log_std must be finite, got ",
                     initial_log_std);
    } else if (policy_value_heads || q_head) {
      SEEDRL_REQUIRE(num_actions > 0, owner, ".num_actions must be positive, got ", num_actions);
    }
    if (!action_branches.empty()) {
      std::int64_t total = 0;
      for (std::int64_t n : action_branches) {
        SEEDRL_REQUIRE(n >= 1, owner, ".action_branches sizes must be positive, got ", n);
        total += n;
      }
      SEEDRL_REQUIRE(action_branches.size() >= 2 && action_dims == 0 && total == num_actions, owner,
                     ".action_branches must be 2 or more discrete branches summing to "
                     "num_actions (",
                     num_actions, "), got ", action_branches.size(), " summing to ", total);
    }
    SEEDRL_REQUIRE(scalars >= 0 && std::isfinite(initial_scalar), owner,
                   ".scalars must be >= 0 and initial_scalar finite, got ", scalars, " and ",
                   initial_scalar);
    SEEDRL_REQUIRE(lstm_size >= 0, owner, ".lstm_size must be >= 0, got ", lstm_size);
    SEEDRL_REQUIRE(policy_value_heads || q_head || critic || scalars > 0, owner,
                   ": no head enabled (policy_value_heads, q_head, critic or scalars)");
    SEEDRL_REQUIRE(!dueling || q_head, owner, ".dueling needs q_head");
    SEEDRL_REQUIRE(mlp_activation == Activation::relu ||
                       (mlp_activation == Activation::tanh && torso == Torso::mlp),
                   owner, ".mlp_activation must be relu, or tanh with the mlp torso; got ",
                   activation_name(mlp_activation));
    SEEDRL_REQUIRE(!separate_value_torso || (policy_value_heads && lstm_size == 0), owner,
                   ".separate_value_torso needs the policy and value heads and no "
                   "LSTM core (lstm_size 0), got lstm_size ",
                   lstm_size);
    switch (torso) {
      case Torso::mlp:
        SEEDRL_REQUIRE(observation_shape.rank() >= 1 && observation_shape.numel() > 0, owner,
                       ".observation_shape for the mlp torso must be [D] (or [D1, D2, ...], "
                       "flattened), got ",
                       observation_shape);
        for (std::int64_t h : mlp_hidden) {
          SEEDRL_REQUIRE(h > 0, owner, ".mlp_hidden sizes must be positive, got ", h);
        }
        break;
      case Torso::board:
        SEEDRL_REQUIRE(observation_shape.rank() == 3 && observation_shape.numel() > 0, owner,
                       ".observation_shape for the board torso must be [C, H, W] (Connect Four: "
                       "[2, 6, 7]), got ",
                       observation_shape);
        SEEDRL_REQUIRE(!conv_channels.empty(), owner,
                       ".conv_channels for the board torso must name at least one convolution");
        for (std::int64_t c : conv_channels)
          SEEDRL_REQUIRE(c > 0, owner, ".conv_channels sizes must be positive, got ", c);
        for (std::int64_t h : mlp_hidden)
          SEEDRL_REQUIRE(h > 0, owner, ".mlp_hidden sizes must be positive, got ", h);
        break;
      case Torso::minatar:
        SEEDRL_REQUIRE(observation_shape.rank() == 3 && observation_shape[0] >= 3 &&
                           observation_shape[1] >= 3 && observation_shape[2] > 0,
                       owner,
                       ".observation_shape for the minatar torso must be [H, W, C] "
                       "(MinAtar: [10, 10, C]), got ",
                       observation_shape);
        break;
      case Torso::nature:
        SEEDRL_REQUIRE(observation_shape.rank() == 3 && observation_shape[0] > 0 &&
                           observation_shape[1] >= 36 && observation_shape[2] >= 36,
                       owner,
                       ".observation_shape for the nature torso must be [C, H, W] with "
                       "H, W >= 36 (Atari: [4, 84, 84]), got ",
                       observation_shape);
        break;
    }
  }
};

/// NetworkOptions' name before seedrl's option structs were named alike (all *Options).
using NetworkConfig [[deprecated("seedrl: NetworkConfig is now NetworkOptions")]] = NetworkOptions;

/// The names of a network's head outputs, in the order of NetworkOutputs' and NetworkGrads'
/// fields; code that copies, stages or checks every head iterates these (head_tensors) instead
/// of naming each field.
inline constexpr std::array<std::string_view, 6> kHeadNames{"logits", "mean", "log_std",
                                                            "values", "q",    "scalars"};

/// Each head's tensor of `heads` (a NetworkOutputs or NetworkGrads), in kHeadNames' order.
template <class Heads>
auto head_tensors(Heads& heads) {
  return std::array{&heads.logits, &heads.mean, &heads.log_std,
                    &heads.values, &heads.q,    &heads.scalars};
}

/// The tensor of the head named `name` in `heads`; throws seedrl::Error naming it when no head
/// has that name.
template <class Heads>
auto& head_tensor(Heads& heads, std::string_view name) {
  const auto tensors = head_tensors(heads);
  for (std::size_t i = 0; i < kHeadNames.size(); ++i)
    if (kHeadNames[i] == name) return *tensors[i];
  fail("no network head named '", name, "' (logits, mean, log_std, values, q, scalars)");
}

/// What forward() computed; tensors are views of buffers the network owns, valid until the next
/// forward(). Undefined when the head is disabled.
struct NetworkOutputs {
  Tensor logits;          ///< [T, B, A]
  Tensor mean;            ///< [T, B, D] (box actions)
  Tensor log_std;         ///< [T, B, D] (box actions)
  Tensor values;          ///< [T, B]
  Tensor q;               ///< [T, B, A]; a critic's: [T, B], Q of the given action
  Tensor scalars;         ///< [T, B, K]: learned values broadcast to every frame
  LstmState final_state;  ///< [B, H] each, when there is an LSTM core

  /// The output of the head named `name` (kHeadNames), undefined when that head is disabled.
  const Tensor& head(std::string_view name) const { return head_tensor(*this, name); }
};

/// Gradients of a loss w.r.t. the outputs of the last forward(); undefined ones count as zero.
struct NetworkGrads {
  Tensor logits{};
  Tensor mean{};
  Tensor log_std{};
  Tensor values{};
  Tensor q{};
  Tensor scalars{};
  LstmState final_state{};

  /// The gradient of the head named `name` (kHeadNames), to set or read.
  Tensor& head(std::string_view name) { return head_tensor(*this, name); }
  const Tensor& head(std::string_view name) const { return head_tensor(*this, name); }
};

}  // namespace seedrl::nn
