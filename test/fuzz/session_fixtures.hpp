// What fuzz_session's servers serve, shared with the corpus writer (session_corpus.cpp): the
// token, and the two step specs (discrete actions with a legal-action mask beside the
// observation; a box of two actions).
#pragma once

#include "seedrl/core/step_spec.hpp"

namespace seedrl::fuzz_session {

inline constexpr const char* kToken = "fuzz";

inline StepSpec masked_spec() {
  return {{{4}, DType::f32}, ActionSpec::discrete(3), {{kActionMaskField, {{3}, DType::u8}}}};
}

inline StepSpec box_spec() {
  return {{{3}, DType::f32}, ActionSpec::box(2, -1.0f, 1.0f), {}};
}

}  // namespace seedrl::fuzz_session
