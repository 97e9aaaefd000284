// LagBoundedBatch against the model of what sets the lag: N actor slots filling unrolls while the
// learner takes B of them a step give a mean lag of N / (2B) learner steps. The batch must grow
// until the lag is within its target, stay put for a few actors, and shrink when actors leave.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/learner/lag_bounded_batch.hpp"

namespace test_lag_bounded_batch {

using seedrl::LagBoundedBatch;

// Steps the model: each step's lag is N / (2 size()); returns size() after `steps` steps.
std::int64_t run(LagBoundedBatch& batch, double slots, int steps) {
  for (int i = 0; i < steps; ++i) batch.observe(slots / (2.0 * static_cast<double>(batch.size())));
  return batch.size();
}

TEST_CASE("LagBoundedBatch: grows with the actors until the lag is within its target") {
  LagBoundedBatch batch(8, 16.0, 64);
  CHECK(batch.size() == 8);
  CHECK(run(batch, 32, 500) == 8);   // the demo's 32 slots: lag 2, nothing to do
  CHECK(run(batch, 208, 500) == 8);  // a lag of 13 (MinAtar's runs: 6 - 7) grows nothing
  // 2,048 slots: lag 128 at 8 unrolls a step; it passes 16, so the batch doubles until the lag
  // is at most 4: 256 unrolls (lag 4), not 128 (8).
  CHECK(run(batch, 2048, 2000) == 256);
  // Twice the actors later: lag 8 at 256 is within the target, so nothing changes...
  CHECK(run(batch, 4112, 2000) == 256);
  // ...while 4,096 slow slots and two fast actors' 16 from the start pass it: lag 4.02 at 512,
  // 2.01 at 1,024.
  LagBoundedBatch fresh(8, 16.0, 1024);
  CHECK(run(fresh, 4112, 4000) == 1024);
  // The actors leave: back down to batch_size once the lag is under an eighth of the target.
  CHECK(run(batch, 32, 4000) == 8);
}

TEST_CASE("LagBoundedBatch: its cap, a target of 0, and what it refuses") {
  LagBoundedBatch capped(8, 16.0, 4);
  CHECK(run(capped, 100000, 20000) == 32);  // settles lag + 1 steps after each change
  LagBoundedBatch fixed(8, 0.0, 64);
  CHECK(run(fixed, 100000, 2000) == 8);
  // A non-finite lag (a step of no transitions) decides nothing.
  LagBoundedBatch b(8, 16.0, 64);
  for (int i = 0; i < 100; ++i) b.observe(std::nan(""));
  CHECK(b.size() == 8);
  CHECK_THROWS_WITH_AS(LagBoundedBatch(0, 16.0, 64), doctest::Contains("batch_size"),
                       seedrl::Error);
  CHECK_THROWS_WITH_AS(LagBoundedBatch(8, -1.0, 64), doctest::Contains("target policy lag"),
                       seedrl::Error);
  CHECK_THROWS_WITH_AS(LagBoundedBatch(8, 16.0, 0), doctest::Contains("max_multiple"),
                       seedrl::Error);
}

TEST_CASE("LagBoundedBatch: one change is seen before the next") {
  // A decision averages 8 steps; after a change it first waits as many steps as the lag was (the
  // unrolls begun before the change), plus one.
  LagBoundedBatch batch(8, 16.0, 64);
  std::vector<int> changes;
  for (int step = 0; step < 100; ++step)
    if (batch.observe(20.0)) changes.push_back(step);
  REQUIRE(changes.size() >= 2);
  CHECK(changes[0] == 7);
  CHECK(changes[1] == 7 + 21 + 8);
  CHECK(batch.size() == 8 * (1 << changes.size()));
}

}  // namespace test_lag_bounded_batch
