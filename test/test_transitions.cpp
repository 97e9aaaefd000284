// The transitions a learner trains on (learner/transitions.hpp): the rewards of the next step,
// terminations, episode boundaries, reward clipping and the policy lag.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "seedrl/core/step_flags.hpp"
#include "seedrl/learner/transitions.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_transitions {

using namespace seedrl;

constexpr std::uint8_t F = step_flags::kFirst, T = step_flags::kTerminated,
                       U = step_flags::kTruncated;

TEST_CASE("make_transitions: rewards of the next step, terminations, boundaries and the lag") {
  // Column 0 runs on; column 1 terminates at step 2 (x_2 is terminal); column 2 is truncated at
  // step 2. Step t's reward arrives at t + 1; versions lag `version` by t + b.
  const std::vector<std::vector<std::uint8_t>> columns{{F, 0, 0, 0}, {F, 0, T, F}, {F, 0, U, F}};
  UnrollBatch batch;
  batch.flags = Tensor::zeros({4, 3}, DType::u8);
  batch.rewards = Tensor::zeros({4, 3});
  batch.actions = Tensor::zeros({4, 3}, DType::i32);
  batch.policy_versions = Tensor::zeros({4, 3}, DType::i32);
  for (std::int64_t t = 0; t < 4; ++t)
    for (std::int64_t b = 0; b < 3; ++b) {
      batch.flags.data<std::uint8_t>()[t * 3 + b] =
          columns[static_cast<std::size_t>(b)][static_cast<std::size_t>(t)];
      batch.rewards.data<float>()[t * 3 + b] = static_cast<float>(10 * t + b);
      batch.actions.data<std::int32_t>()[t * 3 + b] = static_cast<std::int32_t>((t + b) % 3);
      batch.policy_versions.data<std::int32_t>()[t * 3 + b] = static_cast<std::int32_t>(10 - t - b);
    }
  const Transitions tr = make_transitions(batch, 0, 3, 15.0f, 10);
  CHECK(tr.rewards(0, 0) == 10.0f);
  CHECK(tr.rewards(1, 1) == 15.0f);  // 21 clipped to 15
  CHECK(tr.actions(1, 2) == 0);
  CHECK(tr.dones(0, 0) == 0.0f);
  CHECK(tr.dones(1, 1) == 1.0f);  // arrives in the terminal x_2
  CHECK(tr.dones(1, 2) == 0.0f);  // arrives in a truncated (non-terminal) x_2
  for (int b : {1, 2}) {          // step 2 is a boundary (x_2 ended its episode)
    CHECK(tr.mask(2, b) == 0.0f);
    CHECK(tr.dones(2, b) == 1.0f);
    CHECK(tr.rewards(2, b) == 0.0f);
  }
  CHECK(tr.count == 9 - 2);
  // Lag t + b over the 7 transitions: column 0 (0 + 1 + 2), columns 1 and 2 (1 + 2) and (2 + 3).
  CHECK(tr.policy_lag == doctest::Approx((3.0 + 3.0 + 5.0) / 7.0));

  const Transitions window = make_transitions(batch, 1, 2, 0.0f, 10);  // a burn-in of 1
  CHECK(window.rewards(0, 0) == 20.0f);
  CHECK(window.mask(1, 1) == 0.0f);
  CHECK_THROWS_WITH_AS(make_transitions(batch, 1, 3, 0.0f, 10),
                       doctest::Contains("steps [1, 4) need 5 of the batch's 4"), Error);
}

}  // namespace test_transitions
