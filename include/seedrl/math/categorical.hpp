// The categorical distribution over a row of logits: what a policy head's actions are drawn from.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>

#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/math/softmax.hpp"

namespace seedrl::math {

/// For each row i of logits [N, A]: a sample from softmax(row i) (one rng.uniform() draw), or,
/// where greedy[i] is non-zero, the most likely action (the lowest index among ties, no draw).
void sample_categorical(const ConstMatrixRef& logits, std::span<const std::uint8_t> greedy,
                        std::span<std::int32_t> actions, Rng& rng);

}  // namespace seedrl::math
