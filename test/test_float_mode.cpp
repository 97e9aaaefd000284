// Flushing denormals per thread (core/float_mode.hpp) and handing the mode to the CPU backend's
// OpenMP team (cpu::set_num_threads); the team's size for a scope (cpu::ScopedThreads).
#include <doctest/doctest.h>
#include <omp.h>

#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/core/float_mode.hpp"

namespace {

// The smallest normal float times 2^-4: a denormal result (or 0 when flushed). volatile keeps
// the compiler from folding it at compile time.
float denormal_product() {
  volatile float normal = std::numeric_limits<float>::min();
  volatile float factor = 0.0625f;
  return normal * factor;
}

// A denormal input times one (0 when denormal inputs are read as zero).
float denormal_input() {
  std::uint32_t bits = 0x00000100u;  // exponent 0, non-zero mantissa: a denormal
  float value;
  std::memcpy(&value, &bits, sizeof value);
  volatile float input = value;
  volatile float one = 1.0f;
  return input * one;
}

// Restores IEEE behaviour when a test ends, whatever it set.
struct RestoreIeee {
  ~RestoreIeee() { seedrl::set_flush_denormals(false); }
};

}  // namespace

TEST_CASE("float mode: IEEE denormals by default, flushed on request, restored") {
  if (!seedrl::kCanFlushDenormals) {
    CHECK_FALSE(seedrl::set_flush_denormals(true));
    return;
  }
  RestoreIeee restore;
  CHECK_FALSE(seedrl::flush_denormals_enabled());
  CHECK(denormal_product() > 0.0f);
  CHECK(denormal_input() > 0.0f);

  CHECK(seedrl::set_flush_denormals(true));
  CHECK(seedrl::flush_denormals_enabled());
  CHECK(denormal_product() == 0.0f);
  CHECK(denormal_input() == 0.0f);
  // Normal numbers are untouched.
  volatile float small = std::numeric_limits<float>::min();
  CHECK(small * 2.0f == 2.0f * std::numeric_limits<float>::min());

  CHECK(seedrl::set_flush_denormals(false));
  CHECK_FALSE(seedrl::flush_denormals_enabled());
  CHECK(denormal_product() > 0.0f);
}

TEST_CASE("float mode: per thread, inherited by threads started afterwards") {
  if (!seedrl::kCanFlushDenormals) return;
  RestoreIeee restore;
  bool before = true, after = false;
  std::thread([&] { before = seedrl::flush_denormals_enabled(); }).join();
  CHECK_FALSE(before);

  seedrl::set_flush_denormals(true);
  bool other_thread_set = false;
  std::thread([&] { other_thread_set = seedrl::flush_denormals_enabled(); }).join();
  CHECK(other_thread_set);  // a new thread inherits its creator's mode

  std::thread([&] {
    seedrl::set_flush_denormals(false);  // changing it in one thread leaves the others alone
  }).join();
  after = seedrl::flush_denormals_enabled();
  CHECK(after);
}

TEST_CASE("float mode: cpu::set_num_threads gives the OpenMP team the caller's mode") {
  if (!seedrl::kCanFlushDenormals) return;
  RestoreIeee restore;
  static constexpr int kThreads = 3;
  auto team_modes = [] {
    std::vector<int> modes(kThreads, -1);
#pragma omp parallel num_threads(kThreads)
    modes[static_cast<std::size_t>(omp_get_thread_num())] =
        seedrl::flush_denormals_enabled() ? 1 : 0;
    return modes;
  };
  // The team exists (IEEE) before the caller changes its mode: creation-time inheritance alone
  // would leave the workers behind.
  seedrl::cpu::set_num_threads(kThreads);
  CHECK(team_modes() == std::vector<int>(kThreads, 0));

  seedrl::set_flush_denormals(true);
  seedrl::cpu::set_num_threads(kThreads);
  CHECK(team_modes() == std::vector<int>(kThreads, 1));

  seedrl::set_flush_denormals(false);
  seedrl::cpu::set_num_threads(kThreads);
  CHECK(team_modes() == std::vector<int>(kThreads, 0));
}

TEST_CASE("cpu::ScopedThreads: kernels use n threads within the scope, the caller's count after") {
  using seedrl::cpu::num_threads;
  using seedrl::cpu::ScopedThreads;
  const int initial = num_threads();
  auto team_size = [] {
    int size = 0;
#pragma omp parallel
#pragma omp single
    size = omp_get_num_threads();
    return size;
  };
  seedrl::cpu::set_num_threads(3);
  {
    const ScopedThreads one(1);
    CHECK(num_threads() == 1);
    CHECK(team_size() == 1);
    {
      const ScopedThreads two(2);
      CHECK(num_threads() == 2);
      CHECK(team_size() == 2);
    }
    CHECK(num_threads() == 1);
  }
  CHECK(num_threads() == 3);
  CHECK(team_size() == 3);
  {
    const ScopedThreads same(3);
    CHECK(num_threads() == 3);
  }
  CHECK(num_threads() == 3);
  CHECK_THROWS_AS(ScopedThreads(0), seedrl::Error);
  CHECK(num_threads() == 3);
  seedrl::cpu::set_num_threads(initial);
}
