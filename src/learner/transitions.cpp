#include "seedrl/learner/transitions.hpp"

#include <algorithm>
#include <cmath>

#include "seedrl/core/step_spec.hpp"

namespace seedrl {

void check_actions(const UnrollBatch& batch, std::int64_t num_actions, std::string_view learner) {
  if (batch.actions.dtype() == DType::f32) {  // box actions: finite is all a loss needs
    const float* values = batch.actions.data<float>();
    for (std::int64_t i = 0; i < batch.actions.numel(); ++i)
      SEEDRL_REQUIRE(std::isfinite(values[i]), learner, ": stored box action ", values[i],
                     " is not finite");
    return;
  }
  const std::int32_t* actions = batch.actions.data<std::int32_t>();
  for (std::int64_t i = 0; i < batch.actions.numel(); ++i) {
    SEEDRL_REQUIRE(actions[i] >= 0 && actions[i] < num_actions, learner, ": stored action ",
                   actions[i], " out of range [0, ", num_actions, ") in the batch");
  }
}

void check_actions(const UnrollBatch& batch, const UnrollSpec& spec, std::string_view learner) {
  if (spec.action_branches() == 0) return check_actions(batch, spec.num_actions, learner);
  const math::Branches branches = unroll_branches(spec);
  SEEDRL_REQUIRE(batch.actions.dtype() == DType::i32 && batch.actions.rank() == 3 &&
                     batch.actions.dim(2) == branches.count(),
                 learner, ": the batch's actions are ", batch.actions.shape().to_string(),
                 "; action branches ", branches.to_string(), " need i32 [L, B, ", branches.count(),
                 "]");
  const std::int32_t* actions = batch.actions.data<std::int32_t>();
  for (std::int64_t i = 0; i < batch.actions.numel(); ++i) {
    const std::int64_t k = i % branches.count();
    SEEDRL_REQUIRE(actions[i] >= 0 && actions[i] < branches.size(k), learner, ": stored action ",
                   actions[i], " of branch ", k, " out of range [0, ", branches.size(k),
                   ") in the batch");
  }
}

math::Branches unroll_branches(const UnrollSpec& spec) {
  if (spec.action_branches() > 0) return math::branches_of(spec.action_spec);
  return math::Branches({std::max<std::int64_t>(1, spec.num_actions)});
}

Eigen::ArrayXXi branch_actions(const UnrollBatch& batch, std::int64_t first, std::int64_t steps,
                               std::int64_t k) {
  SEEDRL_REQUIRE(batch.actions.dtype() == DType::i32 && batch.actions.rank() == 3 && k >= 0 &&
                     k < batch.actions.dim(2) && first >= 0 &&
                     first + steps <= batch.actions.dim(0),
                 "branch_actions: branch ", k, " of steps [", first, ", ", first + steps,
                 ") of actions ", batch.actions.shape().to_string());
  const std::int64_t b_size = batch.actions.dim(1), count = batch.actions.dim(2);
  const std::int32_t* actions = batch.actions.data<std::int32_t>();
  Eigen::ArrayXXi out(steps, b_size);
  for (std::int64_t t = 0; t < steps; ++t)
    for (std::int64_t b = 0; b < b_size; ++b)
      out(t, b) = actions[((first + t) * b_size + b) * count + k];
  return out;
}

Transitions make_transitions(const UnrollBatch& batch, std::int64_t first, std::int64_t steps,
                             float max_abs_reward, std::int64_t version) {
  const std::int64_t length = batch.flags.dim(0), b_size = batch.flags.dim(1);
  SEEDRL_REQUIRE(first >= 0 && steps >= 1 && first + steps < length, "make_transitions: steps [",
                 first, ", ", first + steps, ") need ", first + steps + 1, " of the batch's ",
                 length);
  const std::uint8_t* flags = batch.flags.data<std::uint8_t>();
  const float* rewards = batch.rewards.data<float>();
  // Box actions stay in the batch (tr.actions is 0 for them).
  const bool discrete = batch.actions.dtype() == DType::i32 && batch.actions.rank() == 2;
  const std::int32_t* actions = discrete ? batch.actions.data<std::int32_t>() : nullptr;
  const std::int32_t* versions = batch.policy_versions.data<std::int32_t>();
  Transitions tr{Eigen::ArrayXXi(steps, b_size), Eigen::ArrayXXf(steps, b_size),
                 Eigen::ArrayXXf(steps, b_size), Eigen::ArrayXXf(steps, b_size)};
  double lag = 0.0;
  for (std::int64_t b = 0; b < b_size; ++b) {
    for (std::int64_t t = 0; t < steps; ++t) {
      const std::int64_t i = (first + t) * b_size + b;  // row of step t in the [L, B] arrays
      tr.actions(t, b) = discrete ? actions[i] : 0;
      if (is_last(flags[i])) {  // x_t ended an episode; x_{t+1} starts the next: no transition
        tr.rewards(t, b) = 0.0f;
        tr.dones(t, b) = 1.0f;
        tr.mask(t, b) = 0.0f;
        continue;
      }
      const float reward = rewards[i + b_size];
      tr.rewards(t, b) =
          max_abs_reward > 0.0f ? std::clamp(reward, -max_abs_reward, max_abs_reward) : reward;
      tr.dones(t, b) = (flags[i + b_size] & step_flags::kTerminated) ? 1.0f : 0.0f;
      tr.mask(t, b) = 1.0f;
      lag += static_cast<double>(version - versions[i]);
      ++tr.count;
    }
  }
  tr.policy_lag = tr.count > 0 ? lag / static_cast<double>(tr.count) : 0.0;
  return tr;
}

VTraceInputs vtrace_inputs(const Transitions& tr, const float* values, float discount) {
  const Eigen::Index steps = tr.mask.rows(), batch = tr.mask.cols();
  const Eigen::Map<const Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>
      all_values(values, steps + 1, batch);
  VTraceInputs in;
  in.values = all_values.topRows(steps);
  in.bootstrap = all_values.row(steps).transpose();
  in.rewards = (tr.mask > 0.0f).select(tr.rewards, in.values);
  in.discounts = discount * (1.0f - tr.dones);
  return in;
}

std::vector<std::uint8_t> legal_actions(const UnrollBatch& batch, const math::Branches& branches) {
  const Tensor* mask = batch.find_field(kActionMaskField);
  if (mask == nullptr) return {};
  SEEDRL_REQUIRE(mask->dtype() == DType::u8 && mask->rank() >= 3, "legal_actions: the step field '",
                 kActionMaskField, "' must be u8 [L, B, A], got ", mask->shape().to_string(), " ",
                 mask->dtype());
  const std::int64_t width = mask->numel() / (mask->dim(0) * mask->dim(1));
  const std::uint8_t* m = mask->data<std::uint8_t>();
  std::vector<std::uint8_t> legal(m, m + mask->numel());
  math::allow_all_where_none(legal, branches.count() > 0 ? branches : math::Branches({width}));
  return legal;
}

}  // namespace seedrl
