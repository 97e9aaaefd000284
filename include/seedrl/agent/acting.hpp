// How an agent picks its actions from its network's scores (logits or Q-values): the mode and,
// for epsilon-greedy, the rate (ActingOptions), and the choice itself, written once for the
// agents' inference (R2D2's epsilon-greedy, the policy-gradient agents' sampling) and for Policy
// (policy/policy.hpp). Checkpoints record an agent's evaluation setting under the metadata key
// "acting" (text form below), so that a policy made from a checkpoint acts as the run's
// evaluation actors did.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "seedrl/core/random.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/math/masked_categorical.hpp"

namespace seedrl {

enum class ActionMode {
  greedy,          ///< the best action (highest logit or Q-value; the lowest index among ties)
  sample,          ///< drawn from softmax(logits); needs a policy head
  epsilon_greedy,  ///< uniformly random with probability epsilon, else greedy
};

/// "greedy", "sample" or "epsilon_greedy".
std::string_view name(ActionMode mode);

struct ActingOptions {
  ActionMode mode = ActionMode::greedy;
  double epsilon = 0.0;  ///< epsilon_greedy only, in [0, 1]

  /// Throws naming the bad setting.
  void validate(std::string_view owner = "ActingOptions") const;
  /// "greedy", "sample" or "epsilon_greedy 0.001" (what checkpoints store).
  std::string to_text() const;
  /// The inverse of to_text(); errors name `source` (e.g. the checkpoint) and the text.
  static ActingOptions parse(std::string_view text, std::string_view source);
};

/// ActingOptions' name before seedrl's option structs were named alike (all *Options).
using ActingSettings [[deprecated("seedrl: ActingSettings is now ActingOptions")]] = ActingOptions;

/// The greedy action of one row of scores: the highest, the lowest index among ties.
std::int32_t greedy_action(std::span<const float> scores);

/// Uniformly random with probability `epsilon`, else greedy_action: one draw from `rng` for the
/// choice, and one more for a random action.
std::int32_t epsilon_greedy_action(std::span<const float> scores, double epsilon, Rng& rng);

/// One action per row of `scores` (f32 [N, A] on the CPU) as `acting` says: greedy, a draw from
/// softmax(row) (math::sample_categorical), or epsilon-greedy; with a legal-action mask (u8
/// [N, A], non-zero = legal) each of them among the legal actions only
/// (math/masked_categorical.hpp; a row that allows nothing is refused by name); with K action
/// `branches` (empty: one), K actions per row, one per branch (epsilon-greedy: one draw per row
/// decides for all its branches). Throws naming the shapes when `actions` does not have N K
/// entries.
void select_actions(const Tensor& scores, const ActingOptions& acting, Rng& rng,
                    std::span<std::int32_t> actions, std::span<const std::uint8_t> action_mask = {},
                    const math::Branches& branches = {});

}  // namespace seedrl
