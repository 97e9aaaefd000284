// The kinds of head a Network is built from (nn/head.hpp), in the order it builds them: the
// order of their parameters (so a seed gives the same values as before there were kinds), of
// their outputs in an ONNX model and of their words in a description. A new kind is a header in
// this folder and a line here (and its option in NetworkOptions).
#pragma once

#include <memory>
#include <vector>

#include "seedrl/nn/heads/critic.hpp"
#include "seedrl/nn/heads/dueling_q.hpp"
#include "seedrl/nn/heads/gaussian_policy.hpp"
#include "seedrl/nn/heads/policy_logits.hpp"
#include "seedrl/nn/heads/q_values.hpp"
#include "seedrl/nn/heads/scalars.hpp"
#include "seedrl/nn/heads/value.hpp"

namespace seedrl::nn {

/// Calls `f(Kind{})` for every head kind, in order.
template <class F>
void for_each_head_kind(F&& f) {
  f(GaussianPolicy{});
  f(PolicyLogits{});
  f(Value{});
  f(DuelingQ{});
  f(QValues{});
  f(Critic{});
  f(Scalars{});
}

/// The heads a network of `options` has, on features of `features` values, their parameters
/// added to `store`.
template <Backend B>
std::vector<std::unique_ptr<Head<B>>> make_heads(ParameterStore& store,
                                                 const NetworkOptions& options,
                                                 std::int64_t features) {
  std::vector<std::unique_ptr<Head<B>>> heads;
  for_each_head_kind([&](auto kind) {
    using Kind = decltype(kind);
    if (Kind::in(options))
      heads.push_back(
          std::make_unique<typename Kind::template Layers<B>>(store, options, features));
  });
  return heads;
}

}  // namespace seedrl::nn
