#include "seedrl/session/run_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace seedrl {

namespace {

double or_nan(const std::optional<double>& value) {
  return value.value_or(std::numeric_limits<double>::quiet_NaN());
}

double seconds_between(RunReport::Clock::time_point from, RunReport::Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

TrainingResult training_result(const RunTotals& totals, std::int64_t frames_at_start,
                               double seconds, std::int64_t learner_steps, bool resumed,
                               bool interrupted) {
  TrainingResult result;
  result.seconds = seconds;
  result.frames = totals.frames;
  result.frames_this_run = result.frames - frames_at_start;
  result.fps = static_cast<double>(result.frames_this_run) / std::max(result.seconds, 1e-9);
  result.episodes = totals.episodes.episodes;
  result.mean_return = totals.episodes.mean_return;
  result.evaluation_mean_return = totals.episodes.evaluation_mean_return;
  result.learner_steps = learner_steps;
  result.resumed = resumed;
  result.interrupted = interrupted;
  return result;
}

std::string run_line(const io::RunInfo& info) {
  std::string line = "run:";
  for (const auto& [key, value] : info) line += " " + key + "=" + value;
  return line;
}

std::string resume_line(const std::string& checkpoint, const io::CheckpointCounters& counters) {
  return "resumed from " + checkpoint + " at frame " + std::to_string(counters.frames) +
         ", learner step " + std::to_string(counters.learner_steps);
}

void RunReport::start(Clock::time_point now, std::int64_t frames, std::int64_t learner_steps) {
  start_ = last_ = now;
  last_frames_ = frames;
  last_steps_ = learner_steps;
}

RunReport::Row RunReport::row(Clock::time_point now, std::int64_t frames,
                              const EpisodeSummary& episodes, std::int64_t learner_steps,
                              std::span<const Metric> learner, double inference_batch) {
  const double dt = std::max(1e-9, seconds_between(last_, now));
  Row row;
  row.frames = frames;
  row.episodes = episodes;
  row.learner_steps = learner_steps;
  row.fps = static_cast<double>(frames - last_frames_) / dt;
  row.learner_steps_per_s = static_cast<double>(learner_steps - last_steps_) / dt;
  last_ = now;
  last_frames_ = frames;
  last_steps_ = std::max(learner_steps, last_steps_);
  row.scalars = {{"seconds", seconds_between(start_, now)},
                 {"fps", row.fps},
                 {"episodes", static_cast<double>(episodes.episodes)},
                 {"mean_return", or_nan(episodes.mean_return)},
                 {"mean_episode_length", or_nan(episodes.mean_length)},
                 {"evaluation_mean_return", or_nan(episodes.evaluation_mean_return)},
                 {"learner_steps", static_cast<double>(learner_steps)},
                 {"learner_steps_per_s", row.learner_steps_per_s}};
  for (const Metric& m : learner) row.scalars.emplace_back(m.info.name, m.value);
  row.scalars.emplace_back("inference_batch", inference_batch);
  return row;
}

std::string RunReport::progress_line(const Row& row, std::int64_t total_frames,
                                     std::span<const Metric> learner) {
  char text[160];
  std::string line;
  std::snprintf(text, sizeof text, "frames %lld/%lld | %.0f fps | episodes %lld | return ",
                static_cast<long long>(row.frames), static_cast<long long>(total_frames), row.fps,
                static_cast<long long>(row.episodes.episodes));
  line = text;
  if (row.episodes.mean_return) {
    std::snprintf(text, sizeof text, "%.2f", *row.episodes.mean_return);
    line += text;
  } else {
    line += "none";
  }
  for (const Metric& m : learner) {
    if (m.info.progress == nullptr) continue;
    if (std::isnan(m.value)) {
      std::snprintf(text, sizeof text, " | %s -", m.info.progress);
    } else {
      std::snprintf(text, sizeof text, " | %s %.4g", m.info.progress, m.value);
    }
    line += text;
  }
  std::snprintf(text, sizeof text, " | steps %lld (%.1f/s)",
                static_cast<long long>(row.learner_steps), row.learner_steps_per_s);
  return line + text;
}

}  // namespace seedrl
