// RateLimiter: how the samples a learner draws from a replay are held to the items inserted, kept
// beside the replay rather than inside a learner (as reverb's rate limiter is). It decides; a
// ReplayTable (replay/replay_table.hpp) does the waiting.
//
//   can_sample(size, n): the replay holds at least min_size_to_sample items, and drawing n more
//                        keeps samples <= samples_per_insert x (inserts - free_inserts)
//   can_insert(size):    insertion is not too far ahead of sampling: once the replay holds
//                        min_size_to_sample items, inserts stop at free_inserts plus what the next
//                        sample_batch samples need plus insert_margin items (insert_margin 0:
//                        never stop)
//
// free_inserts are inserts that pay for no samples: SAC's learning_starts random steps, after
// which the learner makes one update per step (CleanRL's schedule) instead of first catching up
// with updates for every random step.
//
// Whenever insertion stops, the next sample_batch samples are allowed, so an inserter and a
// sampler that each wait for the other's decision never deadlock.
//
// Thread-safety: the counters may be read from any thread; the owner serialises the updates.
#pragma once

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "seedrl/core/error.hpp"

namespace seedrl {

struct RateLimiterOptions {
  double samples_per_insert = 1.0;     ///< samples each inserted item allows (a replay ratio)
  std::size_t min_size_to_sample = 1;  ///< items in the replay before the first sample
  std::int64_t sample_batch = 1;       ///< items a sample draws (for can_insert's bound)
  std::int64_t insert_margin = 0;      ///< see the top; 0: insertion never waits
  std::int64_t free_inserts = 0;       ///< inserts that allow no samples (see the top)

  /// Throws seedrl::Error naming `owner`.field.
  void validate(std::string_view owner) const {
    SEEDRL_REQUIRE(samples_per_insert > 0.0 && std::isfinite(samples_per_insert), owner,
                   ".samples_per_insert must be finite and > 0, got ", samples_per_insert);
    SEEDRL_REQUIRE(min_size_to_sample >= 1, owner, ".min_size_to_sample must be >= 1, got ",
                   min_size_to_sample);
    SEEDRL_REQUIRE(sample_batch >= 1, owner, ".sample_batch must be >= 1, got ", sample_batch);
    SEEDRL_REQUIRE(insert_margin >= 0, owner, ".insert_margin must be >= 0 (0: none), got ",
                   insert_margin);
    SEEDRL_REQUIRE(free_inserts >= 0, owner, ".free_inserts must be >= 0, got ", free_inserts);
  }
};

class RateLimiter {
 public:
  explicit RateLimiter(const RateLimiterOptions& options) : options_(options) {
    options.validate("RateLimiterOptions");
  }

  void inserted(std::int64_t n) { inserts_ += n; }
  void sampled(std::int64_t n) { samples_ += n; }

  /// Whether `n` items may be drawn from a replay holding `size` items.
  bool can_sample(std::size_t size, std::int64_t n) const {
    return size >= options_.min_size_to_sample &&
           static_cast<double>(samples_ + n) <=
               options_.samples_per_insert * static_cast<double>(inserts_ - options_.free_inserts);
  }

  /// Whether an item may be inserted into a replay holding `size` items (see the top).
  bool can_insert(std::size_t size) const {
    if (options_.insert_margin == 0 || size < options_.min_size_to_sample) return true;
    const double needed =
        static_cast<double>(samples_ + options_.sample_batch) / options_.samples_per_insert;
    return static_cast<double>(inserts_) <
           needed + static_cast<double>(options_.free_inserts + options_.insert_margin);
  }

  std::int64_t inserts() const { return inserts_.load(); }
  std::int64_t samples() const { return samples_.load(); }
  const RateLimiterOptions& options() const { return options_; }
  /// Restores the counters (a checkpoint's).
  void restore(std::int64_t inserts, std::int64_t samples) {
    inserts_ = inserts;
    samples_ = samples;
  }

 private:
  const RateLimiterOptions options_;
  std::atomic<std::int64_t> inserts_{0}, samples_{0};
};

}  // namespace seedrl
