// RateLimiter: when a learner may sample from its replay, kept beside the replay rather than
// inside a learner (as reverb's rate limiter is).
//
//   inserted(n) after adding n items; sampled(n) after drawing n
//   can_sample(size, n): the replay holds at least min_size items and drawing n more keeps
//                        samples <= samples_per_insert x inserts
//
// Thread-safety: the counters may be read from any thread; one thread updates them.
#pragma once

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "seedrl/core/error.hpp"

namespace seedrl {

class RateLimiter {
 public:
  RateLimiter(std::size_t min_size, double samples_per_insert)
      : min_size_(min_size), samples_per_insert_(samples_per_insert) {
    SEEDRL_REQUIRE(min_size >= 1, "RateLimiter: min_size must be >= 1, got ", min_size);
    SEEDRL_REQUIRE(samples_per_insert > 0.0 && std::isfinite(samples_per_insert),
                   "RateLimiter: samples_per_insert must be finite and > 0, got ",
                   samples_per_insert);
  }

  void inserted(std::int64_t n) { inserts_ += n; }
  void sampled(std::int64_t n) { samples_ += n; }

  /// Whether `n` items may be drawn from a replay holding `size` items.
  bool can_sample(std::size_t size, std::int64_t n) const {
    return size >= min_size_ &&
           static_cast<double>(samples_ + n) <= samples_per_insert_ * static_cast<double>(inserts_);
  }

  std::int64_t inserts() const { return inserts_.load(); }
  std::int64_t samples() const { return samples_.load(); }

 private:
  const std::size_t min_size_;
  const double samples_per_insert_;
  std::atomic<std::int64_t> inserts_{0}, samples_{0};
};

}  // namespace seedrl
