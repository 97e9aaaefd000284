// What the members of a learner group sum after every learner step (TrainingSession with
// TrainingSessionOptions::group): each member's frame and episode counters and its vote to stop,
// as named fields; and the group's totals made from the sums.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "seedrl/experience/episode_stats.hpp"

namespace seedrl {

/// The run's counters: one session's, or a group's.
struct RunTotals {
  std::int64_t frames = 0;
  EpisodeSummary episodes;
};

/// One member's counters, summed over the group by TrainingGroup::sum (one small all-reduce).
class GroupCounters {
 public:
  enum Field : std::size_t {
    frames,
    episodes,
    evaluation_episodes,
    window_episodes,    ///< training episodes in the member's window
    window_return_sum,  ///< their returns, summed
    window_length_sum,  ///< their lengths, summed
    evaluation_window_episodes,
    evaluation_return_sum,
    stop_votes,  ///< members that want to stop (interrupted)
    kFields
  };

  /// This member's counters: its frames, its episode summary and its vote.
  static GroupCounters of(std::int64_t frames, const EpisodeSummary& e, bool stop_vote) {
    GroupCounters c;
    const double n = static_cast<double>(e.window_count),
                 n_eval = static_cast<double>(e.evaluation_window_count);
    c[Field::frames] = static_cast<double>(frames);
    c[Field::episodes] = static_cast<double>(e.episodes);
    c[Field::evaluation_episodes] = static_cast<double>(e.evaluation_episodes);
    c[Field::window_episodes] = n;
    c[Field::window_return_sum] = n * e.mean_return.value_or(0.0);
    c[Field::window_length_sum] = n * e.mean_length.value_or(0.0);
    c[Field::evaluation_window_episodes] = n_eval;
    c[Field::evaluation_return_sum] = n_eval * e.evaluation_mean_return.value_or(0.0);
    c[Field::stop_votes] = stop_vote ? 1.0 : 0.0;
    return c;
  }

  double& operator[](Field f) { return values_[f]; }
  double operator[](Field f) const { return values_[f]; }
  /// What TrainingGroup::sum adds up, element by element.
  std::span<double> values() { return values_; }

  /// The group's totals, once values() holds the sums: counts summed, means weighted by each
  /// member's window.
  RunTotals totals() const {
    RunTotals t;
    const GroupCounters& c = *this;
    t.frames = static_cast<std::int64_t>(c[Field::frames]);
    t.episodes.episodes = static_cast<std::int64_t>(c[Field::episodes]);
    t.episodes.evaluation_episodes = static_cast<std::int64_t>(c[Field::evaluation_episodes]);
    t.episodes.window_count = static_cast<std::int64_t>(c[Field::window_episodes]);
    if (c[Field::window_episodes] > 0) {
      t.episodes.mean_return = c[Field::window_return_sum] / c[Field::window_episodes];
      t.episodes.mean_length = c[Field::window_length_sum] / c[Field::window_episodes];
    }
    t.episodes.evaluation_window_count =
        static_cast<std::int64_t>(c[Field::evaluation_window_episodes]);
    if (c[Field::evaluation_window_episodes] > 0) {
      t.episodes.evaluation_mean_return =
          c[Field::evaluation_return_sum] / c[Field::evaluation_window_episodes];
    }
    return t;
  }
  bool stop_voted() const { return (*this)[Field::stop_votes] > 0; }

 private:
  std::array<double, kFields> values_{};
};

}  // namespace seedrl
