// EpisodeStats: completed episodes, collected from any thread, summarised over a moving window.
//
// The window travels with checkpoints (window_text / restore_window), so a resumed run reports
// the same last-100-episode figures it stopped with. A mean over no episodes is "none"
// (std::nullopt), never 0.
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/core/step_flags.hpp"
#include "seedrl/core/thread_annotations.hpp"

namespace seedrl {

struct Episode {
  double episode_return = 0.0;
  std::int64_t length = 0;  ///< environment steps
  bool evaluation = false;
};

/// One environment's episode in progress, fed every step it takes (its step flags and the reward
/// received with the step): the first step of an episode starts it, the last ends it.
class EpisodeInProgress {
 public:
  /// Adds a step; returns the episode when this step ended it. `evaluation` is copied into it.
  std::optional<Episode> step(std::uint8_t flags, float reward, bool evaluation) {
    if (is_first(flags)) {
      *this = {};
      return std::nullopt;
    }
    return_ += reward;
    ++length_;
    if (!is_last(flags)) return std::nullopt;
    const Episode done{return_, length_, evaluation};
    *this = {};
    return done;
  }

 private:
  double return_ = 0.0;
  std::int64_t length_ = 0;
};

struct EpisodeSummary {
  std::int64_t episodes = 0;  ///< training episodes completed
  std::int64_t evaluation_episodes = 0;
  std::optional<double> mean_return;  ///< over the last `window` training episodes; none if none
  std::optional<double> mean_length;
  std::optional<double> evaluation_mean_return;  ///< over the last `window` evaluation episodes
  std::int64_t window_count = 0;                 ///< training episodes in the window
  std::int64_t evaluation_window_count = 0;      ///< evaluation episodes in its window
};

/// Thread-safe. Also keeps the episodes completed since the last drain_new() for per-episode logs.
class EpisodeStats {
 public:
  explicit EpisodeStats(std::size_t window = 100) : window_(window) {}

  void record(const Episode& episode) SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    remember(episode);
    ++(episode.evaluation ? evaluation_count_ : training_count_);
    fresh_.push_back(episode);
    if (fresh_.size() > 100000) fresh_.pop_front();  // nobody drains: keep memory bounded
  }

  EpisodeSummary summary() const SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    EpisodeSummary s;
    s.episodes = training_count_;
    s.evaluation_episodes = evaluation_count_;
    s.window_count = static_cast<std::int64_t>(training_.size());
    s.evaluation_window_count = static_cast<std::int64_t>(evaluation_.size());
    s.mean_return = mean(training_, [](const Episode& e) { return e.episode_return; });
    s.mean_length = mean(training_, [](const Episode& e) { return static_cast<double>(e.length); });
    s.evaluation_mean_return = mean(evaluation_, [](const Episode& e) { return e.episode_return; });
    return s;
  }

  /// Episodes completed since the previous call, oldest first.
  std::vector<Episode> drain_new() SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    std::vector<Episode> out(fresh_.begin(), fresh_.end());
    fresh_.clear();
    return out;
  }

  /// Restores the counters after a restart.
  void set_counts(std::int64_t training, std::int64_t evaluation) SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    training_count_ = training;
    evaluation_count_ = evaluation;
  }

  /// The windows' episodes as text, one "train|eval <return> <length>" line each, oldest first.
  std::string window_text() const SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    std::string text;
    char line[64];
    for (const auto* window : {&training_, &evaluation_}) {
      for (const Episode& e : *window) {
        std::snprintf(line, sizeof line, "%s %.17g %lld\n", e.evaluation ? "eval" : "train",
                      e.episode_return, static_cast<long long>(e.length));
        text += line;
      }
    }
    return text;
  }

  /// Refills the windows from window_text() output; `source` names it in errors. Nothing changes
  /// unless all of it reads.
  void restore_window(std::string_view text, std::string_view source) SEEDRL_EXCLUDES(mutex_) {
    std::vector<Episode> episodes;
    std::istringstream in{std::string(text)};
    std::string kind;
    while (in >> kind) {
      Episode e;
      SEEDRL_REQUIRE((kind == "train" || kind == "eval") && (in >> e.episode_return >> e.length) &&
                         e.length >= 0,
                     source, ": episode window entry ", episodes.size(), " is not readable");
      e.evaluation = kind == "eval";
      episodes.push_back(e);
    }
    MutexLock lock(mutex_);
    training_.clear();
    evaluation_.clear();
    for (const Episode& e : episodes) remember(e);
  }

 private:
  template <class Value>
  static std::optional<double> mean(const std::deque<Episode>& window, Value value) {
    if (window.empty()) return std::nullopt;
    double total = 0.0;
    for (const Episode& e : window) total += value(e);
    return total / static_cast<double>(window.size());
  }

  void remember(const Episode& episode) SEEDRL_REQUIRES(mutex_) {
    auto& recent = episode.evaluation ? evaluation_ : training_;
    recent.push_back(episode);
    if (recent.size() > window_) recent.pop_front();
  }

  std::size_t window_;
  mutable Mutex mutex_;
  std::deque<Episode> training_ SEEDRL_GUARDED_BY(mutex_);
  std::deque<Episode> evaluation_ SEEDRL_GUARDED_BY(mutex_);
  std::deque<Episode> fresh_ SEEDRL_GUARDED_BY(mutex_);  // completed since the last drain_new()
  std::int64_t training_count_ SEEDRL_GUARDED_BY(mutex_) = 0;
  std::int64_t evaluation_count_ SEEDRL_GUARDED_BY(mutex_) = 0;
};

}  // namespace seedrl
