// EpisodeStats: completed episodes, collected from any thread, summarised over a moving window.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace seedrl {

struct Episode {
  double episode_return = 0.0;
  std::int64_t length = 0;  ///< environment steps
  bool evaluation = false;
};

struct EpisodeSummary {
  std::int64_t episodes = 0;  ///< training episodes completed
  std::int64_t evaluation_episodes = 0;
  double mean_return = 0.0;  ///< over the last `window` training episodes (0 if none)
  double mean_length = 0.0;
  double evaluation_mean_return = 0.0;  ///< over the last `window` evaluation episodes
  std::int64_t window_count = 0;        ///< training episodes in the window
};

/// Thread-safe. Also keeps the episodes completed since the last drain_new() for per-episode logs.
class EpisodeStats {
 public:
  explicit EpisodeStats(std::size_t window = 100) : window_(window) {}

  void record(const Episode& episode) {
    std::lock_guard lock(mutex_);
    auto& recent = episode.evaluation ? evaluation_ : training_;
    recent.push_back(episode);
    if (recent.size() > window_) recent.pop_front();
    ++(episode.evaluation ? evaluation_count_ : training_count_);
    fresh_.push_back(episode);
    if (fresh_.size() > 100000) fresh_.pop_front();  // nobody drains: keep memory bounded
  }

  EpisodeSummary summary() const {
    std::lock_guard lock(mutex_);
    EpisodeSummary s;
    s.episodes = training_count_;
    s.evaluation_episodes = evaluation_count_;
    s.window_count = static_cast<std::int64_t>(training_.size());
    for (const Episode& e : training_) {
      s.mean_return += e.episode_return;
      s.mean_length += static_cast<double>(e.length);
    }
    if (!training_.empty()) {
      s.mean_return /= static_cast<double>(training_.size());
      s.mean_length /= static_cast<double>(training_.size());
    }
    for (const Episode& e : evaluation_) s.evaluation_mean_return += e.episode_return;
    if (!evaluation_.empty()) s.evaluation_mean_return /= static_cast<double>(evaluation_.size());
    return s;
  }

  /// Episodes completed since the previous call, oldest first.
  std::vector<Episode> drain_new() {
    std::lock_guard lock(mutex_);
    std::vector<Episode> out(fresh_.begin(), fresh_.end());
    fresh_.clear();
    return out;
  }

  /// Restores the counters after a restart (the window starts empty).
  void set_counts(std::int64_t training, std::int64_t evaluation) {
    std::lock_guard lock(mutex_);
    training_count_ = training;
    evaluation_count_ = evaluation;
  }

 private:
  std::size_t window_;
  mutable std::mutex mutex_;
  std::deque<Episode> training_, evaluation_, fresh_;
  std::int64_t training_count_ = 0, evaluation_count_ = 0;
};

}  // namespace seedrl
