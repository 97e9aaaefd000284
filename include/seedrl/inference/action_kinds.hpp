// make_action_kind: the inference server's action kind for a step spec (inference/action_kind.hpp
// says what a kind does); the one place that asks which kind an action spec is.
#pragma once

#include <memory>

#include "seedrl/inference/box_actions.hpp"
#include "seedrl/inference/discrete_actions.hpp"

namespace seedrl {

template <Agent A, nn::Backend B>
std::unique_ptr<ActionKind<A, B>> make_action_kind(const A& agent, const StepSpec& spec) {
  if (spec.action.is_box()) return std::make_unique<BoxActionKind<A, B>>(spec);
  return std::make_unique<DiscreteActionKind<A, B>>(agent, spec);
}

}  // namespace seedrl
