// SelfPlayOptions and SelfPlayLeague, the league as train_self_play's actors and run see it
// (session/self_play.hpp). Its members are compiled once, in the library
// (src/session/self_play_league.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/acting/players_actor.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/inference/opponents.hpp"
#include "seedrl/league/league.hpp"
#include "seedrl/learner/learner_metrics.hpp"
#include "seedrl/session/session_options.hpp"

namespace seedrl {

struct SelfPlayOptions : TrainingSessionOptions {
  std::int32_t num_actors = 2;
  std::int32_t games_per_actor = 16;
  LeagueOptions league;
  std::uint64_t seed = 1;  ///< the actors' sides, the league's draws, the scripted players

  SelfPlayOptions() { server.max_batch = 0; }  // every seat of every game in one batch

  void validate(int players, std::string_view owner = "SelfPlayOptions") const;
  /// The session's part, with max_batch and max_slots sized for every seat of every game.
  TrainingSessionOptions session(int players) const;
};

/// The league as the actors and the run see it. Thread-safe.
class SelfPlayLeague final : public Matchmaker {
 public:
  SelfPlayLeague(const LeagueOptions& options, std::vector<std::string> fixed,
                 std::shared_ptr<OpponentTable> table, std::uint64_t seed)
      : league_(options, std::move(fixed)), table_(std::move(table)), rng_(seed) {}

  Opponent start_game(std::span<const std::int32_t> opponent_slots) override
      SEEDRL_EXCLUDES(mutex_);

  void end_game(const Opponent& opponent, double score) override SEEDRL_EXCLUDES(mutex_);

  /// Takes a snapshot when one is due at `learner_step`, of the values `read_values()` returns
  /// (a copy the league keeps); puts it in the opponent table and retires what left the window.
  template <class ReadValues>
  void maybe_snapshot(std::int64_t learner_step, ReadValues read_values) SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    if (!league_.snapshot_due(learner_step)) return;
    Tensor values = read_values();
    const std::int64_t id = league_.add_snapshot(learner_step, values);
    table_->put(static_cast<std::int32_t>(id + 1), std::move(values));
    for (std::int64_t old : held_)
      if (league_.snapshot(old) == nullptr) table_->retire(static_cast<std::int32_t>(old + 1));
    held_.clear();
    for (const League::Snapshot& s : league_.snapshots()) held_.push_back(s.id);
  }

  /// Writes the league (its text and every snapshot's values) to `path`, atomically.
  void save(const std::string& path) const SEEDRL_EXCLUDES(mutex_);

  /// Restores what save() wrote at `path`: the league, and its snapshots in the opponent table.
  /// Throws naming the file when it does not fit this run (other fixed opponents, a snapshot of
  /// another size), changing nothing.
  void restore(const std::string& path, std::int64_t values_per_snapshot) SEEDRL_EXCLUDES(mutex_);

  /// A copy of the league now.
  League league() const SEEDRL_EXCLUDES(mutex_);

  /// The learner's rating and, per kind of opponent, its win, draw and loss rates over the last
  /// 100 games (metric names such as "win_rate/latest").
  std::vector<Metric> metrics() SEEDRL_EXCLUDES(mutex_);

  /// " | rating 1234 | vs latest 45/10/45% | ..." for progress lines.
  std::string progress() SEEDRL_EXCLUDES(mutex_);

 private:
  static constexpr std::size_t kRecentGames = 100;

  static std::array<double, 3> rates_of(const std::deque<double>& recent);
  // A metric name that lives as long as the league.
  std::string_view name(const std::string& text) SEEDRL_REQUIRES(mutex_);

  mutable Mutex mutex_;
  League league_ SEEDRL_GUARDED_BY(mutex_);
  std::shared_ptr<OpponentTable> table_;
  Rng rng_ SEEDRL_GUARDED_BY(mutex_);
  std::vector<std::int64_t> held_ SEEDRL_GUARDED_BY(mutex_);  // snapshot ids in the table
  std::map<std::string, std::deque<double>> recent_ SEEDRL_GUARDED_BY(mutex_);
  std::deque<std::string> names_ SEEDRL_GUARDED_BY(mutex_);
};

}  // namespace seedrl
