// What a training run reports: the figures of each report (a metrics.csv row, a progress line)
// and of the whole run (TrainingResult). Not a template: compiled once, in the library.
//
// Nothing measured is reported as such: a mean over no episodes is std::nullopt in results, NaN
// in rows ("nan" in the CSV) and "none" on the progress line, never 0.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "seedrl/experience/episode_stats.hpp"
#include "seedrl/io/checkpoint.hpp"
#include "seedrl/io/metrics_logger.hpp"
#include "seedrl/learner/learner_metrics.hpp"
#include "seedrl/session/group_counters.hpp"

namespace seedrl {

/// What a run did.
struct TrainingResult {
  std::int64_t frames = 0;  ///< environment frames of training actors (resumed runs included)
  std::int64_t frames_this_run = 0;
  double seconds = 0.0;  ///< wall time of this run
  double fps = 0.0;      ///< frames_this_run / seconds
  std::int64_t episodes = 0;
  /// Over the last 100 training episodes (a resumed run's window included); none if no training
  /// episode has ended.
  std::optional<double> mean_return;
  std::optional<double> evaluation_mean_return;  ///< none without evaluation episodes
  std::int64_t learner_steps = 0;
  bool resumed = false;
  bool interrupted = false;  ///< stopped by the interrupt flag before the frame budget
  /// Members of the learner group that trained (TrainingSessionOptions::group; 1 alone) and this
  /// process's rank among them. With a group, frames, fps and episodes are the group's totals and
  /// the mean returns are over every member's window.
  int ranks = 1;
  int rank = 0;
};

/// What a run that ended with `totals` did, `frames_at_start` of them before it began (a resumed
/// run's), in `seconds` (one process's: ranks and rank are the caller's to set).
TrainingResult training_result(const RunTotals& totals, std::int64_t frames_at_start,
                               double seconds, std::int64_t learner_steps, bool resumed,
                               bool interrupted);

/// "run: agent=vtrace key=value ...".
std::string run_line(const io::RunInfo& info);
/// "resumed from PATH at frame N, learner step M".
std::string resume_line(const std::string& checkpoint, const io::CheckpointCounters& counters);

/// Turns the run's counters into report rows, with the rates since the previous report. Not
/// thread-safe: the reporting thread owns it.
class RunReport {
 public:
  using Clock = std::chrono::steady_clock;

  struct Row {
    std::int64_t frames = 0;
    std::vector<io::Scalar> scalars;  ///< names with static storage, values NaN when unmeasured
    double fps = 0.0;
    double learner_steps_per_s = 0.0;
    std::int64_t learner_steps = 0;
    EpisodeSummary episodes;
  };

  /// The run starts (or resumes at `frames`, `learner_steps`).
  void start(Clock::time_point now, std::int64_t frames, std::int64_t learner_steps);
  Clock::time_point last() const { return last_; }

  /// The row of a report at `now`: the run's figures, then `learner`'s metrics, then the
  /// inference batch size.
  Row row(Clock::time_point now, std::int64_t frames, const EpisodeSummary& episodes,
          std::int64_t learner_steps, std::span<const Metric> learner, double inference_batch);

  /// "frames 1200/5000 | 830 fps | episodes 12 | return 3.50 | loss 0.03 | ... | steps 40 (8/s)":
  /// the learner's metrics that have a progress label, in their order.
  static std::string progress_line(const Row& row, std::int64_t total_frames,
                                   std::span<const Metric> learner);

 private:
  Clock::time_point start_{}, last_{};
  std::int64_t last_frames_ = 0, last_steps_ = 0;
};

}  // namespace seedrl
