// ActionSpec: what an environment's actions are, beside TensorSpec (what its observations are).
// Environments report it (env/environment.hpp), and the inference server, the learners, the wire
// protocol, checkpoints and Policy all carry it.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "seedrl/core/error.hpp"

namespace seedrl {

/// What an environment's actions are: one of `num_actions` discrete actions (numbered from 0),
/// K >= 2 discrete action branches (one action from each per step: move and shoot), or a box of
/// `dims()` real values, dimension d within [low[d], high[d]]. `ActionSpec{6}` is six discrete
/// actions; `ActionSpec::branched({3, 2})` is a choice of 3 and a choice of 2 made together.
///
/// Branches lie side by side wherever actions are scored or masked: a policy's logits, Q-values
/// and a legal-action mask have num_actions = the sum of the branch sizes entries per step, branch
/// k in [offset(k), offset(k) + size(k)); an environment's step receives K actions, the action of
/// branch k numbered within that branch.
struct ActionSpec {
  std::int32_t num_actions = 0;  ///< discrete: the number of actions (all branches'); a box: 0
  std::vector<float> low;        ///< a box: each dimension's lower bound; discrete: empty
  std::vector<float> high;       ///< a box: each dimension's upper bound; discrete: empty
  /// K >= 2 action branches: each one's number of actions (num_actions is their sum); empty for
  /// one discrete action and for a box.
  std::vector<std::int32_t> branches;

  /// Most branches a spec may have (the wire carries at most this many i32 per environment).
  static constexpr std::size_t kMaxBranches = 64;

  ActionSpec() = default;
  /// `num_actions` discrete actions (implicit, so that an environment can `return {6};`).
  ActionSpec(std::int32_t discrete_actions) : num_actions(discrete_actions) {}  // NOLINT

  static ActionSpec discrete(std::int32_t n) { return ActionSpec(n); }
  /// K >= 2 discrete branches of these sizes (one size is ActionSpec{size}).
  static ActionSpec branched(std::vector<std::int32_t> sizes) {
    if (sizes.size() == 1) return ActionSpec(sizes[0]);
    ActionSpec spec;
    std::int64_t total = 0;
    for (std::int32_t n : sizes) total += n;
    spec.num_actions = static_cast<std::int32_t>(std::clamp<std::int64_t>(total, 0, INT32_MAX));
    spec.branches = std::move(sizes);
    return spec;
  }
  static ActionSpec box(std::vector<float> low, std::vector<float> high) {
    ActionSpec spec;
    spec.low = std::move(low);
    spec.high = std::move(high);
    return spec;
  }
  /// `dims` dimensions with the same bounds.
  static ActionSpec box(std::int32_t dims, float low, float high) {
    return box(std::vector<float>(static_cast<std::size_t>(std::max(dims, 0)), low),
               std::vector<float>(static_cast<std::size_t>(std::max(dims, 0)), high));
  }

  bool is_box() const { return num_actions == 0 && !low.empty(); }
  bool is_branched() const { return !branches.empty(); }
  /// Discrete branches: K, or 1 (one discrete action, or a box).
  std::int32_t branch_count() const {
    return branches.empty() ? 1 : static_cast<std::int32_t>(branches.size());
  }
  /// Discrete: the sizes of the branches ({num_actions} without branches); a box: empty.
  std::vector<std::int64_t> branch_sizes() const {
    if (is_box()) return {};
    if (branches.empty()) return {num_actions};
    return {branches.begin(), branches.end()};
  }
  /// Values per action: a box's dimensions, K for branches, 1 for a discrete action.
  std::int32_t dims() const {
    return is_box() ? static_cast<std::int32_t>(low.size()) : branch_count();
  }

  /// "6 discrete actions", "branches 3 x 2 (5 discrete actions)" or "box of 2 in [-1, 1] x
  /// [-2, 2]".
  std::string to_string() const {
    if (is_branched()) {
      std::string text = "branches ";
      for (std::size_t k = 0; k < branches.size(); ++k)
        text += str_cat(k == 0 ? "" : " x ", branches[k]);
      return str_cat(text, " (", num_actions, " discrete actions)");
    }
    if (!is_box()) return str_cat(num_actions, " discrete actions");
    std::string text = str_cat("box of ", low.size(), " in");
    for (std::size_t d = 0; d < low.size(); ++d)
      text.append(str_cat(d == 0 ? " [" : " x [", low[d], ", ", high[d], "]"));
    return text;
  }

  /// Throws naming `who` unless this is N > 0 discrete actions, 2 to kMaxBranches branches of at
  /// least 1 action each (num_actions their sum), or a box of 1 or more dimensions with finite
  /// bounds, low < high.
  void validate(std::string_view who) const {
    if (!branches.empty()) {
      SEEDRL_REQUIRE(
          branches.size() >= 2 && branches.size() <= kMaxBranches && low.empty() && high.empty(),
          who, ": action branches are 2 to ", kMaxBranches, " discrete choices and no box, got ",
          branches.size(), " branches with ", low.size(), " box dimensions");
      std::int64_t total = 0;
      for (std::size_t k = 0; k < branches.size(); ++k) {
        SEEDRL_REQUIRE(branches[k] >= 1, who, ": action branch ", k, " has ", branches[k],
                       " actions (at least 1)");
        total += branches[k];
      }
      SEEDRL_REQUIRE(total == num_actions, who, ": action branches of ", total,
                     " actions in all, but num_actions is ", num_actions);
      return;
    }
    if (num_actions != 0 || low.empty()) {
      SEEDRL_REQUIRE(num_actions > 0 && low.empty() && high.empty(), who,
                     ": an action spec is N > 0 discrete actions or a box, got ", num_actions,
                     " actions with ", low.size(), " box dimensions");
      return;
    }
    SEEDRL_REQUIRE(low.size() == high.size(), who, ": a box has ", low.size(), " lower bounds but ",
                   high.size(), " upper bounds");
    for (std::size_t d = 0; d < low.size(); ++d)
      SEEDRL_REQUIRE(std::isfinite(low[d]) && std::isfinite(high[d]) && low[d] < high[d], who,
                     ": box dimension ", d, " has bounds [", low[d], ", ", high[d],
                     "] (finite, low < high)");
  }

  /// `x` within box dimension `d`'s bounds, as actors receive box actions (a NaN becomes the
  /// upper bound).
  float clip(std::size_t d, float x) const { return std::fmax(low[d], std::fmin(x, high[d])); }

  /// Exact text ("discrete 6", "branches 2 3 2", "box 2 low -1 -2 high 1 2"; floats
  /// round-trip): checkpoints record the action spec this way (metadata "action_spec") for
  /// Policy.
  std::string to_text() const {
    if (is_branched()) {
      std::string text = str_cat("branches ", branches.size());
      for (std::int32_t n : branches) text += str_cat(" ", n);
      return text;
    }
    if (!is_box()) return str_cat("discrete ", num_actions);
    std::string text = str_cat("box ", low.size(), " low");
    auto append = [&](float v) {
      char buffer[32];
      const auto result = std::to_chars(buffer, buffer + sizeof(buffer), v);
      text.push_back(' ');
      text.append(buffer, result.ptr);
    };
    for (float v : low) append(v);
    text.append(" high");
    for (float v : high) append(v);
    return text;
  }

  /// The inverse of to_text(), validated; throws naming `source` and the text.
  static ActionSpec parse(std::string_view text, std::string_view source) {
    std::size_t pos = 0;
    auto fail = [&](const char* what) {
      throw Error(str_cat(source, ": action spec '", text, "' is not valid: ", what));
    };
    auto word = [&] {
      while (pos < text.size() && text[pos] == ' ') ++pos;
      const std::size_t begin = pos;
      while (pos < text.size() && text[pos] != ' ') ++pos;
      return text.substr(begin, pos - begin);
    };
    auto number = [&](auto& value) {
      const std::string_view w = word();
      const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), value);
      if (w.empty() || ec != std::errc() || end != w.data() + w.size()) fail("expected a number");
    };
    ActionSpec spec;
    const std::string_view kind = word();
    if (kind == "discrete") {
      number(spec.num_actions);
    } else if (kind == "branches") {
      std::int32_t count = 0;
      number(count);
      if (count < 2 || static_cast<std::size_t>(count) > kMaxBranches)
        fail("branches need 2 to 64 branches");
      std::vector<std::int32_t> sizes(static_cast<std::size_t>(count));
      for (std::int32_t& n : sizes) number(n);
      spec = branched(std::move(sizes));
    } else if (kind == "box") {
      std::int32_t dims = 0;
      number(dims);
      if (dims < 1 || dims > 65536) fail("a box needs 1 to 65536 dimensions");
      spec.low.resize(static_cast<std::size_t>(dims));
      spec.high.resize(static_cast<std::size_t>(dims));
      if (word() != "low") fail("expected 'low'");
      for (float& v : spec.low) number(v);
      if (word() != "high") fail("expected 'high'");
      for (float& v : spec.high) number(v);
    } else {
      fail("expected 'discrete', 'branches' or 'box'");
    }
    if (!word().empty()) fail("unexpected text after the spec");
    try {
      spec.validate("action spec");
    } catch (const Error& e) {
      fail(e.what());
    }
    return spec;
  }

  friend bool operator==(const ActionSpec&, const ActionSpec&) = default;
};

}  // namespace seedrl
