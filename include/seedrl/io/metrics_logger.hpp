// MetricsLogger: where a training run's numbers go.
//
//   log(frames, {{"mean_return", ...}, ...}) ──▶ <logdir>/metrics.csv        (a row, flushed)
//                                            └─▶ <logdir>/events.out.tfevents.* (TensorBoard
//                                            scalars)
//   progress("frames 1.2M | 8.3k fps | ...")  ──▶ stderr: one live line on a terminal, else a line
//                                                every `plain_progress_seconds`
//
// A run that resumes in the same logdir appends to metrics.csv. Not thread-safe: one reporting
// thread owns it. I/O errors throw seedrl::Error naming the file.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace seedrl::io {

class TensorBoardWriter;

struct MetricsOptions {
  bool console = true;                 ///< print progress to stderr
  bool tensorboard = true;             ///< write event files (only with a logdir)
  double plain_progress_seconds = 10;  ///< progress period when stderr is not a terminal
};

using Scalar = std::pair<std::string_view, double>;
/// A named setting of the run (e.g. {"atari_profile", "dqn"}).
using RunInfo = std::vector<std::pair<std::string, std::string>>;

class MetricsLogger {
 public:
  /// `logdir` empty: console only. The directory is created if needed.
  explicit MetricsLogger(std::string logdir = {}, const MetricsOptions& options = {});
  ~MetricsLogger();
  MetricsLogger(const MetricsLogger&) = delete;
  MetricsLogger& operator=(const MetricsLogger&) = delete;

  /// One row of named scalars at `step`. The names of the first row fix the CSV columns; later
  /// rows must use the same names in the same order.
  void log(std::int64_t step, std::span<const Scalar> scalars);
  /// Records what the run is (settings that are not numbers): <logdir>/run_info.json, one JSON
  /// object of strings, written atomically (merged with an existing file, later values win, so
  /// a resumed run keeps what the first wrote), and a "run:" line on the console.
  void write_run_info(const RunInfo& info);
  /// Shows `line` as the live progress line.
  void progress(std::string_view line);
  /// Ends the live line (so that what is printed next starts on a fresh line) and flushes files.
  void finish();

  const std::string& logdir() const { return logdir_; }
  std::string run_info_path() const {
    return logdir_.empty() ? std::string() : logdir_ + "/run_info.json";
  }
  std::string csv_path() const {
    return logdir_.empty() ? std::string() : logdir_ + "/metrics.csv";
  }

 private:
  std::string logdir_;
  MetricsOptions options_;
  std::FILE* csv_ = nullptr;
  std::vector<std::string> columns_;
  std::unique_ptr<TensorBoardWriter> tensorboard_;
  bool terminal_ = false;
  bool live_line_open_ = false;
  std::chrono::steady_clock::time_point last_plain_progress_{};
};

}  // namespace seedrl::io
