#include "seedrl/math/masked_categorical.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "seedrl/core/error.hpp"

namespace seedrl::math {

Branches::Branches(std::vector<std::int64_t> sizes, std::string_view owner)
    : sizes_(std::move(sizes)) {
  SEEDRL_REQUIRE(!sizes_.empty(), owner, ": at least one action branch is needed");
  for (std::size_t k = 0; k < sizes_.size(); ++k) {
    SEEDRL_REQUIRE(sizes_[k] >= 1, owner, ": branch ", k, " has ", sizes_[k],
                   " actions; every branch needs at least 1");
    offsets_.push_back(offsets_.back() + sizes_[k]);
  }
}

std::string Branches::to_string() const {
  std::string out;
  for (std::size_t k = 0; k < sizes_.size(); ++k)
    out += (k == 0 ? "" : " x ") + std::to_string(sizes_[k]);
  return out;
}

namespace {

bool legal(std::span<const std::uint8_t> mask, Eigen::Index row, std::int64_t total,
           std::int64_t column) {
  return mask.empty() || mask[static_cast<std::size_t>(row * total + column)] != 0;
}

void check_rows(Eigen::Index rows, Eigen::Index columns, const Branches& branches,
                std::size_t actions, std::string_view what) {
  SEEDRL_REQUIRE(columns == branches.total(), what, ": rows of ", columns,
                 " scores for action branches ", branches.to_string(), " (", branches.total(),
                 " in all)");
  SEEDRL_REQUIRE(actions == static_cast<std::size_t>(rows * branches.count()), what, ": ", actions,
                 " actions for ", rows, " rows of ", branches.count(), " branch(es)");
}

// The best legal column of branch k in row i (the lowest index among ties).
std::int32_t best_legal(const ConstMatrixRef& scores, std::span<const std::uint8_t> mask,
                        const Branches& branches, Eigen::Index i, std::int64_t k) {
  const std::int64_t offset = branches.offset(k), total = branches.total();
  std::int32_t best = -1;
  float best_score = -std::numeric_limits<float>::infinity();
  for (std::int64_t j = 0; j < branches.size(k); ++j) {
    if (!legal(mask, i, total, offset + j)) continue;
    const float s = scores(i, offset + j);
    if (best < 0 || s > best_score) {
      best = static_cast<std::int32_t>(j);
      best_score = s;
    }
  }
  return best;
}

}  // namespace

void allow_all_where_none(std::span<std::uint8_t> mask, const Branches& branches) {
  const auto total = static_cast<std::size_t>(branches.total());
  SEEDRL_REQUIRE(total > 0 && mask.size() % total == 0, "allow_all_where_none: a mask of ",
                 mask.size(), " entries is not rows of ", total, " actions");
  for (std::size_t row = 0; row < mask.size(); row += total)
    for (std::int64_t k = 0; k < branches.count(); ++k) {
      const auto first = mask.begin() + static_cast<std::ptrdiff_t>(row) + branches.offset(k);
      const auto last = first + branches.size(k);
      if (std::all_of(first, last, [](std::uint8_t x) { return x == 0; }))
        std::fill(first, last, std::uint8_t{1});
    }
}

void check_mask(std::span<const std::uint8_t> mask, Eigen::Index rows, const Branches& branches,
                std::string_view what) {
  if (mask.empty()) return;
  SEEDRL_REQUIRE(mask.size() == static_cast<std::size_t>(rows * branches.total()), what,
                 ": a legal-action mask of ", mask.size(), " entries for ", rows, " rows of ",
                 branches.total(), " actions (branches ", branches.to_string(), ")");
  for (Eigen::Index i = 0; i < rows; ++i)
    for (std::int64_t k = 0; k < branches.count(); ++k) {
      bool any = false;
      for (std::int64_t j = 0; j < branches.size(k) && !any; ++j)
        any = legal(mask, i, branches.total(), branches.offset(k) + j);
      SEEDRL_REQUIRE(any, what, ": the legal-action mask of row ", i,
                     " allows no action in branch ", k, " (an all-false mask)");
    }
}

RowMatrixXf branch_log_softmax(const ConstMatrixRef& logits, std::span<const std::uint8_t> mask,
                               const Branches& branches) {
  check_rows(logits.rows(), logits.cols(), branches,
             static_cast<std::size_t>(logits.rows() * branches.count()), "branch_log_softmax");
  check_mask(mask, logits.rows(), branches, "branch_log_softmax");
  const std::int64_t total = branches.total();
  RowMatrixXf out(logits.rows(), logits.cols());
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    for (std::int64_t k = 0; k < branches.count(); ++k) {
      const std::int64_t offset = branches.offset(k), size = branches.size(k);
      float max_logit = -std::numeric_limits<float>::infinity();
      for (std::int64_t j = 0; j < size; ++j)
        if (legal(mask, i, total, offset + j))
          max_logit = std::max(max_logit, logits(i, offset + j));
      float sum = 0.0f;
      for (std::int64_t j = 0; j < size; ++j)
        if (legal(mask, i, total, offset + j)) sum += std::exp(logits(i, offset + j) - max_logit);
      const float log_sum = std::log(sum);
      for (std::int64_t j = 0; j < size; ++j)
        out(i, offset + j) = legal(mask, i, total, offset + j)
                                 ? logits(i, offset + j) - max_logit - log_sum
                                 : kIllegalLogit - max_logit - log_sum;
    }
  }
  return out;
}

Eigen::VectorXf joint_log_prob(const ConstMatrixRef& log_probs,
                               std::span<const std::int32_t> actions, const Branches& branches) {
  check_rows(log_probs.rows(), log_probs.cols(), branches, actions.size(), "joint_log_prob");
  const auto count = static_cast<std::size_t>(branches.count());
  Eigen::VectorXf out = Eigen::VectorXf::Zero(log_probs.rows());
  for (Eigen::Index i = 0; i < log_probs.rows(); ++i)
    for (std::size_t k = 0; k < count; ++k) {
      const std::int32_t a = actions[static_cast<std::size_t>(i) * count + k];
      const auto kk = static_cast<std::int64_t>(k);
      SEEDRL_REQUIRE(a >= 0 && a < branches.size(kk), "joint_log_prob: action ", a, " of branch ",
                     k, " in row ", i, " is out of range [0, ", branches.size(kk), ")");
      out(i) += log_probs(i, branches.offset(kk) + a);
    }
  return out;
}

namespace {

float entropy_of_branch(const ConstMatrixRef& log_probs, Eigen::Index i, std::int64_t offset,
                        std::int64_t size) {
  float h = 0.0f;
  for (std::int64_t j = 0; j < size; ++j) {
    const float p = std::exp(log_probs(i, offset + j));
    if (p > 0.0f) h -= p * log_probs(i, offset + j);
  }
  return h;
}

}  // namespace

Eigen::VectorXf branch_entropy(const ConstMatrixRef& log_probs, const Branches& branches) {
  check_rows(log_probs.rows(), log_probs.cols(), branches,
             static_cast<std::size_t>(log_probs.rows() * branches.count()), "branch_entropy");
  Eigen::VectorXf out = Eigen::VectorXf::Zero(log_probs.rows());
  for (Eigen::Index i = 0; i < log_probs.rows(); ++i)
    for (std::int64_t k = 0; k < branches.count(); ++k)
      out(i) += entropy_of_branch(log_probs, i, branches.offset(k), branches.size(k));
  return out;
}

Eigen::VectorXf max_branch_entropy(std::span<const std::uint8_t> mask, Eigen::Index rows,
                                   const Branches& branches) {
  check_mask(mask, rows, branches, "max_branch_entropy");
  Eigen::VectorXf out = Eigen::VectorXf::Zero(rows);
  for (Eigen::Index i = 0; i < rows; ++i) {
    for (std::int64_t k = 0; k < branches.count(); ++k) {
      std::int64_t legal = branches.size(k);
      if (!mask.empty()) {
        const auto first = mask.begin() + i * branches.total() + branches.offset(k);
        legal = std::count_if(first, first + branches.size(k), [](std::uint8_t m) { return m; });
      }
      out(i) += std::log(static_cast<float>(legal));
    }
  }
  return out;
}

void branch_backward(const ConstMatrixRef& log_probs, std::span<const std::int32_t> actions,
                     const ConstVectorRef& grad_log_prob, const ConstVectorRef& grad_entropy,
                     const Branches& branches, MatrixRef grad_logits) {
  const Eigen::Index rows = log_probs.rows();
  const bool with_log_prob = grad_log_prob.size() > 0, with_entropy = grad_entropy.size() > 0;
  check_rows(rows, log_probs.cols(), branches,
             with_log_prob ? actions.size() : static_cast<std::size_t>(rows * branches.count()),
             "branch_backward");
  SEEDRL_REQUIRE((!with_log_prob || grad_log_prob.size() == rows) &&
                     (!with_entropy || grad_entropy.size() == rows) && grad_logits.rows() == rows &&
                     grad_logits.cols() == log_probs.cols(),
                 "branch_backward: upstream gradients of ", grad_log_prob.size(), " and ",
                 grad_entropy.size(), " rows and a gradient of [", grad_logits.rows(), ", ",
                 grad_logits.cols(), "] for log-probabilities [", rows, ", ", log_probs.cols(),
                 "]");
  const auto count = static_cast<std::size_t>(branches.count());
  for (Eigen::Index i = 0; i < rows; ++i) {
    const float g_lp = with_log_prob ? grad_log_prob(i) : 0.0f;
    const float g_h = with_entropy ? grad_entropy(i) : 0.0f;
    for (std::size_t k = 0; k < count; ++k) {
      const auto kk = static_cast<std::int64_t>(k);
      const std::int64_t offset = branches.offset(kk), size = branches.size(kk);
      const float h = with_entropy ? entropy_of_branch(log_probs, i, offset, size) : 0.0f;
      const std::int32_t a =
          with_log_prob ? actions[static_cast<std::size_t>(i) * count + k] : std::int32_t{-1};
      for (std::int64_t j = 0; j < size; ++j) {
        const float lp = log_probs(i, offset + j);
        const float p = std::exp(lp);
        float g = -g_lp * p;
        if (j == a) g += g_lp;
        if (p > 0.0f) g -= g_h * p * (lp + h);
        grad_logits(i, offset + j) = g;
      }
    }
  }
}

void masked_greedy(const ConstMatrixRef& scores, std::span<const std::uint8_t> mask,
                   const Branches& branches, std::span<std::int32_t> actions) {
  check_rows(scores.rows(), scores.cols(), branches, actions.size(), "masked_greedy");
  check_mask(mask, scores.rows(), branches, "masked_greedy");
  const auto count = static_cast<std::size_t>(branches.count());
  for (Eigen::Index i = 0; i < scores.rows(); ++i)
    for (std::size_t k = 0; k < count; ++k)
      actions[static_cast<std::size_t>(i) * count + k] =
          best_legal(scores, mask, branches, i, static_cast<std::int64_t>(k));
}

void masked_sample(const ConstMatrixRef& logits, std::span<const std::uint8_t> mask,
                   const Branches& branches, std::span<const std::uint8_t> greedy,
                   std::span<std::int32_t> actions, Rng& rng) {
  check_rows(logits.rows(), logits.cols(), branches, actions.size(), "masked_sample");
  check_mask(mask, logits.rows(), branches, "masked_sample");
  SEEDRL_REQUIRE(greedy.empty() || greedy.size() == static_cast<std::size_t>(logits.rows()),
                 "masked_sample: ", greedy.size(), " greedy flags for ", logits.rows(), " rows");
  const auto count = static_cast<std::size_t>(branches.count());
  const std::int64_t total = branches.total();
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    const bool is_greedy = !greedy.empty() && greedy[static_cast<std::size_t>(i)] != 0;
    for (std::size_t k = 0; k < count; ++k) {
      const auto kk = static_cast<std::int64_t>(k);
      const std::int32_t best = best_legal(logits, mask, branches, i, kk);
      std::int32_t& out = actions[static_cast<std::size_t>(i) * count + k];
      if (is_greedy) {
        out = best;
        continue;
      }
      const std::int64_t offset = branches.offset(kk), size = branches.size(kk);
      const double max_logit = logits(i, offset + best);
      double sum = 0.0;
      for (std::int64_t j = 0; j < size; ++j)
        if (legal(mask, i, total, offset + j))
          sum += std::exp(static_cast<double>(logits(i, offset + j)) - max_logit);
      double u = rng.uniform() * sum;
      std::int32_t last = best;
      for (std::int64_t j = 0; j < size; ++j) {
        if (!legal(mask, i, total, offset + j)) continue;
        last = static_cast<std::int32_t>(j);
        u -= std::exp(static_cast<double>(logits(i, offset + j)) - max_logit);
        if (u < 0.0) {
          out = last;
          break;
        }
      }
      if (u >= 0.0) out = last;  // rounding left u >= 0 past the last legal action
    }
  }
}

void masked_epsilon_greedy(const ConstMatrixRef& scores, std::span<const std::uint8_t> mask,
                           const Branches& branches, double epsilon,
                           std::span<std::int32_t> actions, Rng& rng) {
  SEEDRL_REQUIRE(epsilon >= 0.0 && epsilon <= 1.0,
                 "masked_epsilon_greedy: epsilon must be in [0, 1], got ", epsilon);
  masked_greedy(scores, mask, branches, actions);
  const auto count = static_cast<std::size_t>(branches.count());
  const std::int64_t total = branches.total();
  for (Eigen::Index i = 0; i < scores.rows(); ++i) {
    if (rng.uniform() >= epsilon) continue;
    for (std::size_t k = 0; k < count; ++k) {
      const auto kk = static_cast<std::int64_t>(k);
      const std::int64_t offset = branches.offset(kk), size = branches.size(kk);
      std::int64_t legal_count = 0;
      for (std::int64_t j = 0; j < size; ++j) legal_count += legal(mask, i, total, offset + j);
      auto pick = std::min<std::int64_t>(
          static_cast<std::int64_t>(rng.uniform() * static_cast<double>(legal_count)),
          legal_count - 1);
      for (std::int64_t j = 0; j < size; ++j) {
        if (!legal(mask, i, total, offset + j)) continue;
        if (pick-- == 0) {
          actions[static_cast<std::size_t>(i) * count + k] = static_cast<std::int32_t>(j);
          break;
        }
      }
    }
  }
}

}  // namespace seedrl::math
