// The CPU backend's element-wise loops (src/backend/cpu/element_loops.hpp): the AVX-512 build of a
// loop agrees with the baseline build and with a plain loop, over ranges that do not fill a
// vector, and a team's split covers every index once.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <vector>

#include "backend/cpu/element_loops.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/nn/update_rules.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_element_loops {

using namespace seedrl;
using namespace seedrl::cpu::detail;

namespace {

struct AdamState {
  std::vector<float> p, g, m, v;
};

AdamState random_state(std::int64_t n, std::uint64_t seed) {
  Rng rng(seed);
  AdamState s;
  for (std::int64_t i = 0; i < n; ++i) {
    s.p.push_back(static_cast<float>(rng.uniform() * 2.0 - 1.0));
    s.g.push_back(static_cast<float>(rng.uniform() * 2.0 - 1.0));
    s.m.push_back(static_cast<float>(rng.uniform() * 0.2 - 0.1));
    s.v.push_back(static_cast<float>(rng.uniform() * 0.01));
  }
  return s;
}

// One Adam step over the whole state through `run(begin, end, body)`.
template <class Run>
void adam_step(AdamState& s, Run run) {
  const nn::AdamStep step{1e-3f, 0.9f, 0.999f, 1e-8f, 1.0f - 0.9f * 0.9f, 1.0f - 0.999f * 0.999f};
  float* p = s.p.data();
  const float* g = s.g.data();
  float* m = s.m.data();
  float* v = s.v.data();
  run(0, static_cast<std::int64_t>(s.p.size()),
      [p, g, m, v, step](std::int64_t i) { nn::adam_element(p[i], g[i], m[i], v[i], step); });
}

// Within a few float rounding steps (the AVX-512 build may fuse multiply-adds).
void check_close(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    CHECK(std::abs(a[i] - b[i]) <= 1e-6f * (1.0f + std::abs(b[i])));
  }
}

}  // namespace

TEST_CASE("element loops: every build of Adam's loop matches a plain loop, whole and in ranges") {
  for (const std::int64_t n : {1, 15, 16, 17, 1000, 4099}) {
    CAPTURE(n);
    AdamState plain = random_state(n, 7);
    AdamState baseline = plain;
    AdamState dispatched = plain;
    adam_step(plain, [](std::int64_t b, std::int64_t e, auto body) {
      for (std::int64_t i = b; i < e; ++i) body(i);
    });
    adam_step(baseline, [](std::int64_t b, std::int64_t e, auto body) { index_range(b, e, body); });
    // Dispatched (AVX-512 where the CPU has it), forced over a team of 3 in uneven ranges.
    const int threads = omp_get_max_threads();
    adam_step(dispatched, [](std::int64_t b, std::int64_t e, auto body) {
      omp_set_num_threads(3);
      for_each_index(e - b, 0, body);
    });
    omp_set_num_threads(threads);
    check_close(baseline.p, plain.p);
    check_close(dispatched.p, plain.p);
    check_close(dispatched.m, plain.m);
    check_close(dispatched.v, plain.v);
#ifdef SEEDRL_CPU_DISPATCH_AVX512
    if (has_avx512()) {
      AdamState wide = random_state(n, 7);
      adam_step(wide,
                [](std::int64_t b, std::int64_t e, auto body) { index_range_avx512(b, e, body); });
      check_close(wide.p, plain.p);
    }
#endif
  }
}

TEST_CASE("element loops: a team covers every index exactly once; sums add ranges in order") {
  const int saved_threads = omp_get_max_threads();
  for (const int threads : {1, 2, 3, 5}) {
    CAPTURE(threads);
    const std::int64_t n = 10007;
    std::vector<int> visits(static_cast<std::size_t>(n), 0);
    int* counts = visits.data();
    omp_set_num_threads(threads);
    for_each_index(n, 100, [counts](std::int64_t i) { counts[i] += 1; });
    std::vector<double> x(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = 1.0 / (1.0 + i);
    const double* px = x.data();
    const double total = sum_over_indices(n, 100, [px](std::int64_t i) { return px[i] * px[i]; });
    const double again = sum_over_indices(n, 100, [px](std::int64_t i) { return px[i] * px[i]; });
    omp_set_num_threads(saved_threads);
    for (std::int64_t i = 0; i < n; ++i) REQUIRE(visits[static_cast<std::size_t>(i)] == 1);
    double reference = 0.0;
    for (const double v : x) reference += v * v;
    CHECK(total == doctest::Approx(reference).epsilon(1e-12));
    CHECK(total == again);  // the same ranges in the same order: the same bits
  }
}

}  // namespace test_element_loops
