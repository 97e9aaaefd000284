#include "seedrl/agent/acting.hpp"

#include <algorithm>

#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/math/categorical.hpp"
#include "seedrl/math/masked_categorical.hpp"

namespace seedrl {

std::string_view name(ActionMode mode) {
  switch (mode) {
    case ActionMode::greedy:
      return "greedy";
    case ActionMode::sample:
      return "sample";
    case ActionMode::epsilon_greedy:
      return "epsilon_greedy";
  }
  return "unknown";
}

void ActingOptions::validate(std::string_view owner) const {
  SEEDRL_REQUIRE(std::isfinite(epsilon) && epsilon >= 0.0 && epsilon <= 1.0, owner,
                 ".epsilon must be in [0, 1], got ", epsilon);
}

std::string ActingOptions::to_text() const {
  std::string text(name(mode));
  if (mode == ActionMode::epsilon_greedy) {
    char number[32];  // the shortest text that reads back as the same double
    const auto [end, ec] = std::to_chars(number, number + sizeof number, epsilon);
    SEEDRL_REQUIRE(ec == std::errc(), "ActingOptions: cannot format epsilon ", epsilon);
    text.push_back(' ');
    text.append(number, end);
  }
  return text;
}

ActingOptions ActingOptions::parse(std::string_view text, std::string_view source) {
  ActingOptions s;
  const std::size_t space = text.find(' ');
  const std::string_view mode = text.substr(0, space);
  if (mode == "greedy" || mode == "sample") {
    SEEDRL_REQUIRE(space == std::string_view::npos, source, ": acting '", text,
                   "' has more than a mode");
    s.mode = mode == "greedy" ? ActionMode::greedy : ActionMode::sample;
    return s;
  }
  SEEDRL_REQUIRE(mode == "epsilon_greedy" && space != std::string_view::npos, source, ": acting '",
                 text, "' is not 'greedy', 'sample' or 'epsilon_greedy <epsilon>'");
  s.mode = ActionMode::epsilon_greedy;
  const std::string_view number = text.substr(space + 1);
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), s.epsilon);
  SEEDRL_REQUIRE(ec == std::errc() && end == number.data() + number.size() &&
                     std::isfinite(s.epsilon) && s.epsilon >= 0.0 && s.epsilon <= 1.0,
                 source, ": acting '", text, "': epsilon must be a number in [0, 1]");
  return s;
}

std::int32_t greedy_action(std::span<const float> scores) {
  std::size_t best = 0;
  for (std::size_t a = 1; a < scores.size(); ++a)
    if (scores[a] > scores[best]) best = a;
  return static_cast<std::int32_t>(best);
}

std::int32_t epsilon_greedy_action(std::span<const float> scores, double epsilon, Rng& rng) {
  if (rng.uniform() < epsilon)
    return static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(scores.size())));
  return greedy_action(scores);
}

void select_actions(const Tensor& scores, const ActingOptions& acting, Rng& rng,
                    std::span<std::int32_t> actions, std::span<const std::uint8_t> action_mask,
                    const math::Branches& branches) {
  const std::int64_t per_row = std::max<std::int64_t>(1, branches.count());
  SEEDRL_REQUIRE(scores.rank() == 2 && scores.dtype() == DType::f32 &&
                     scores.device() == Device::cpu &&
                     scores.dim(0) * per_row == static_cast<std::int64_t>(actions.size()),
                 "select_actions: scores must be f32 [", actions.size() / per_row,
                 ", A] on the CPU for ", actions.size(), " actions, got ", scores.shape());
  const std::int64_t n = scores.dim(0);
  if (!action_mask.empty() || per_row > 1) {  // the same choices per branch, among legal actions
    const math::Branches one = branches.count() > 0 ? branches : math::Branches({scores.dim(1)});
    switch (acting.mode) {
      case ActionMode::greedy:
        math::masked_greedy(scores.matrix<float>(), action_mask, one, actions);
        break;
      case ActionMode::sample:
        math::masked_sample(scores.matrix<float>(), action_mask, one, {}, actions, rng);
        break;
      case ActionMode::epsilon_greedy:
        math::masked_epsilon_greedy(scores.matrix<float>(), action_mask, one, acting.epsilon,
                                    actions, rng);
        break;
    }
    return;
  }
  const auto width = static_cast<std::size_t>(scores.dim(1));
  auto row = [&](std::int64_t i) {
    return std::span<const float>(scores.data<float>() + static_cast<std::size_t>(i) * width,
                                  width);
  };
  switch (acting.mode) {
    case ActionMode::greedy:
      for (std::int64_t i = 0; i < n; ++i)
        actions[static_cast<std::size_t>(i)] = greedy_action(row(i));
      break;
    case ActionMode::sample: {
      const std::vector<std::uint8_t> greedy(static_cast<std::size_t>(n), 0);
      math::sample_categorical(scores.matrix<float>(), greedy, actions, rng);
      break;
    }
    case ActionMode::epsilon_greedy:
      for (std::int64_t i = 0; i < n; ++i)
        actions[static_cast<std::size_t>(i)] = epsilon_greedy_action(row(i), acting.epsilon, rng);
      break;
  }
}

}  // namespace seedrl
