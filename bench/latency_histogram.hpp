// LatencyHistogram: round trips in log-scale buckets (2% wide, 1 us to about 20 s) that threads
// add to without a lock, and the quantiles read from them. For the connection benchmarks.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>

namespace seedrl::bench {

class LatencyHistogram {
 public:
  /// Thread-safe.
  void add(double us) {
    const double b = us <= 1.0 ? 0.0 : std::log(us) / std::log(kBucket);
    buckets_[std::min(kBuckets - 1, static_cast<std::size_t>(b))].fetch_add(
        1, std::memory_order_relaxed);
    for (double m = max_us_.load(); us > m && !max_us_.compare_exchange_weak(m, us);) {
    }
  }
  std::int64_t count() const {
    std::int64_t total = 0;
    for (const auto& b : buckets_) total += b.load();
    return total;
  }
  /// The q-quantile (the middle of its bucket); 0 when empty.
  double quantile(double q) const {
    const std::int64_t total = count();
    std::int64_t seen = 0;
    for (std::size_t b = 0; b < kBuckets; ++b) {
      seen += buckets_[b].load();
      if (total > 0 && static_cast<double>(seen) >= q * static_cast<double>(total))
        return std::pow(kBucket, static_cast<double>(b) + 0.5);
    }
    return 0.0;
  }
  double max() const { return max_us_.load(); }

 private:
  static constexpr double kBucket = 1.02;
  static constexpr std::size_t kBuckets = 1200;

  std::array<std::atomic<std::int64_t>, kBuckets> buckets_{};
  std::atomic<double> max_us_{0};
};

}  // namespace seedrl::bench
