#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "seedrl/core/random.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_random {

TEST_CASE("Rng: same seed, same stream; different seeds differ") {
  seedrl::Rng a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next_u64();
    CHECK(x == b.next_u64());
    CHECK(x != c.next_u64());
  }
}

TEST_CASE("Rng: a known value pins the generator across platforms") {
  // xoshiro256** seeded by splitmix64(0): the first output is fixed by the algorithm.
  seedrl::Rng rng(0);
  CHECK(rng.next_u64() == 0x99ec5f36cb75f2b4ULL);
}

TEST_CASE("Rng: uniform, below and normal have the right ranges and moments") {
  seedrl::Rng rng(7);
  const int n = 200000;
  double sum = 0.0, sum_sq = 0.0, normal_sum = 0.0, normal_sq = 0.0;
  std::vector<int> counts(6, 0);
  for (int i = 0; i < n; ++i) {
    const double u = rng.uniform();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    sum += u;
    sum_sq += u * u;
    const auto k = rng.below(6);
    REQUIRE(k < 6);
    ++counts[k];
    const double z = rng.normal();
    normal_sum += z;
    normal_sq += z * z;
  }
  CHECK(sum / n == doctest::Approx(0.5).epsilon(0.01));
  CHECK(sum_sq / n - (sum / n) * (sum / n) == doctest::Approx(1.0 / 12).epsilon(0.02));
  for (int c : counts) CHECK(std::abs(c - n / 6.0) < 5 * std::sqrt(n / 6.0));
  CHECK(std::abs(normal_sum / n) < 0.01);
  CHECK(normal_sq / n == doctest::Approx(1.0).epsilon(0.02));
}

}  // namespace test_random
