// Categorical policies over K discrete action branches with legal-action masks: one categorical
// per branch, the joint log-probability and the entropy are the sums over the branches, and a
// branch's distribution is renormalised over its legal actions (its illegal logits become
// kIllegalLogit before the softmax, so that an illegal action has probability 0, contributes
// nothing to the entropy and gets no gradient).
//
// Layout: a row of logits [A] holds the branches side by side, branch k in columns
// [offset(k), offset(k) + size(k)), A = total(); a mask is u8 [N, A] in the same layout (non-zero:
// legal), row-major, or empty (every action legal); actions are int32 [N, K], one per branch.
// One branch of size A is today's discrete action.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/core/action_spec.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/math/softmax.hpp"

namespace seedrl::math {

/// What an illegal action's logit becomes before the softmax: exp underflows to exactly 0.
inline constexpr float kIllegalLogit = -1e9f;

/// The sizes of K >= 1 branches.
class Branches {
 public:
  Branches() = default;
  /// Throws naming `owner` unless there is at least one branch and every size is >= 1.
  explicit Branches(std::vector<std::int64_t> sizes, std::string_view owner = "Branches");

  std::int64_t count() const { return static_cast<std::int64_t>(sizes_.size()); }
  std::int64_t size(std::int64_t k) const { return sizes_[static_cast<std::size_t>(k)]; }
  std::int64_t offset(std::int64_t k) const { return offsets_[static_cast<std::size_t>(k)]; }
  std::int64_t total() const { return offsets_.back(); }
  const std::vector<std::int64_t>& sizes() const { return sizes_; }
  /// "3" or "3 x 5 x 2".
  std::string to_string() const;
  bool operator==(const Branches& other) const { return sizes_ == other.sizes_; }

 private:
  std::vector<std::int64_t> sizes_;
  std::vector<std::int64_t> offsets_{0};  // offsets_[k], then the total
};

/// The branches of a discrete action spec: its K branches, or one branch of num_actions.
inline Branches branches_of(const ActionSpec& spec) {
  return Branches(spec.branch_sizes(), "action spec");
}

/// Throws naming the first row and branch with no legal action, or a mask of the wrong size
/// (`what` names the caller). Empty masks pass.
void check_mask(std::span<const std::uint8_t> mask, Eigen::Index rows, const Branches& branches,
                std::string_view what);

/// Makes every (row, branch) of `mask` that allows no action allow all of them: an episode's last
/// step may have no legal action, and nobody plays its action. `mask` is [rows, total()].
void allow_all_where_none(std::span<std::uint8_t> mask, const Branches& branches);

/// Per-branch log-probabilities [N, A] of the masked logits (illegal entries hold a log-probability
/// near kIllegalLogit and a probability of exactly 0). Checks the mask (check_mask).
RowMatrixXf branch_log_softmax(const ConstMatrixRef& logits, std::span<const std::uint8_t> mask,
                               const Branches& branches);

/// log pi(a_i | x_i) = sum over branches k of log_probs(i, offset(k) + actions(i, k)); throws
/// naming an action out of its branch's range. `actions` is [N, K] row-major.
Eigen::VectorXf joint_log_prob(const ConstMatrixRef& log_probs,
                               std::span<const std::int32_t> actions, const Branches& branches);

/// H_i = sum over branches of -sum_j p_ij log p_ij (illegal entries add 0).
Eigen::VectorXf branch_entropy(const ConstMatrixRef& log_probs, const Branches& branches);

/// The most entropy each of `rows` rows can have: the sum over branches of ln(legal actions)
/// (an empty mask: ln of every branch's size). Checks the mask.
Eigen::VectorXf max_branch_entropy(std::span<const std::uint8_t> mask, Eigen::Index rows,
                                   const Branches& branches);

/// The gradient w.r.t. the logits of sum_i (grad_log_prob[i] * log pi(a_i | x_i) +
/// grad_entropy[i] * H_i), from branch_log_softmax's output. Within branch k:
///   d log p_a / d z_j = 1[j = a] - p_j,   d H_k / d z_j = -p_j (log p_j + H_k),
/// so the illegal logits (p_j = 0) get none. Either upstream may be empty (no such term).
void branch_backward(const ConstMatrixRef& log_probs, std::span<const std::int32_t> actions,
                     const ConstVectorRef& grad_log_prob, const ConstVectorRef& grad_entropy,
                     const Branches& branches, MatrixRef grad_logits);

/// The greedy action of every branch of every row: the highest legal score (a logit or a
/// Q-value), the lowest index among ties. Checks the mask.
void masked_greedy(const ConstMatrixRef& scores, std::span<const std::uint8_t> mask,
                   const Branches& branches, std::span<std::int32_t> actions);

/// A draw from every branch's masked softmax (one rng.uniform() per branch), or the greedy
/// action where greedy[i] is non-zero (greedy may be empty: never). Checks the mask.
void masked_sample(const ConstMatrixRef& logits, std::span<const std::uint8_t> mask,
                   const Branches& branches, std::span<const std::uint8_t> greedy,
                   std::span<std::int32_t> actions, Rng& rng);

/// Epsilon-greedy over the legal actions: per row one draw decides; with probability epsilon
/// every branch takes a uniformly random legal action (one more draw per branch), else the
/// greedy ones. Checks the mask.
void masked_epsilon_greedy(const ConstMatrixRef& scores, std::span<const std::uint8_t> mask,
                           const Branches& branches, double epsilon,
                           std::span<std::int32_t> actions, Rng& rng);

}  // namespace seedrl::math
