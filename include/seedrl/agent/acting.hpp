// How a trained agent picks its actions when it is only acting (evaluation, or a host program
// running it through Policy, policy/policy.hpp): the mode and, for epsilon-greedy, the rate.
// Checkpoints record the agent's evaluation setting under the metadata key "acting" (text form
// below), so that a policy made from a checkpoint acts as the run's evaluation actors did.
#pragma once

#include <string>
#include <string_view>

namespace seedrl {

enum class ActionMode {
  greedy,          ///< the best action (highest logit or Q-value; the lowest index among ties)
  sample,          ///< drawn from softmax(logits); needs a policy head
  epsilon_greedy,  ///< uniformly random with probability epsilon, else greedy
};

/// "greedy", "sample" or "epsilon_greedy".
std::string_view name(ActionMode mode);

struct ActingSettings {
  ActionMode mode = ActionMode::greedy;
  double epsilon = 0.0;  ///< epsilon_greedy only, in [0, 1]

  /// Throws naming the bad setting.
  void validate() const;
  /// "greedy", "sample" or "epsilon_greedy 0.001" (what checkpoints store).
  std::string to_text() const;
  /// The inverse of to_text(); errors name `source` (e.g. the checkpoint) and the text.
  static ActingSettings parse(std::string_view text, std::string_view source);
};

}  // namespace seedrl
