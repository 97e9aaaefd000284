// Rng: a small, fast, seedable random generator with the same output on every platform.
//
// The standard distributions (std::normal_distribution, ...) differ between standard libraries,
// so seedrl draws its own from xoshiro256** bits: runs are reproducible from a seed anywhere.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>

namespace seedrl {

namespace detail {
__extension__ using uint128 = unsigned __int128;  // GCC/Clang extension; silences -Wpedantic
}  // namespace detail

/// xoshiro256** seeded through splitmix64. Not thread-safe: give each thread its own (split()).
class Rng {
 public:
  using result_type = std::uint64_t;

  explicit Rng(std::uint64_t seed = 0) {
    for (auto& word : state_) word = splitmix64(seed);
  }

  /// 64 random bits.
  std::uint64_t next_u64() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // UniformRandomBitGenerator, so std::shuffle and friends accept an Rng.
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }
  result_type operator()() { return next_u64(); }

  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  /// Uniform in [low, high).
  double uniform(double low, double high) { return low + (high - low) * uniform(); }

  /// Uniform integer in [0, bound), bound > 0, without modulo bias (Lemire's method).
  std::uint64_t below(std::uint64_t bound) {
    std::uint64_t x = next_u64();
    detail::uint128 m = static_cast<detail::uint128>(x) * bound;
    auto low = static_cast<std::uint64_t>(m);
    if (low < bound) {
      const std::uint64_t threshold = (0 - bound) % bound;
      while (low < threshold) {
        x = next_u64();
        m = static_cast<detail::uint128>(x) * bound;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  /// Standard normal (Box-Muller; the second value of each pair is kept for the next call).
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u1 = 0.0;
    while (u1 <= 0.0) u1 = uniform();
    const double u2 = uniform();
    const double radius = std::sqrt(-2.0 * std::log(u1));
    const double angle = 2.0 * std::numbers::pi * u2;
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }

  /// An independent generator derived from this one's next output (for per-thread streams).
  Rng split() { return Rng(next_u64()); }

  /// The complete state, to save and restore a generator exactly.
  struct State {
    std::uint64_t words[4];
    double spare;
    bool has_spare;
  };
  State state() const { return {{state_[0], state_[1], state_[2], state_[3]}, spare_, has_spare_}; }
  void set_state(const State& s) {
    for (int i = 0; i < 4; ++i) state_[i] = s.words[i];
    spare_ = s.spare;
    has_spare_ = s.has_spare;
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t splitmix64(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  std::uint64_t state_[4];
  double spare_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace seedrl
