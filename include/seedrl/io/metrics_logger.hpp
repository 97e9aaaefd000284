// MetricsLogger: the files a training run's numbers go to (the console is a MessageSink's job,
// io/messages.hpp).
//
//   log(frames, {{"mean_return", ...}, ...}) ──▶ <logdir>/metrics.csv        (a row, flushed)
//                                            └─▶ <logdir>/events.out.tfevents.* (TensorBoard
//                                            scalars)
//   write_run_info({{"agent", "vtrace"}, ...}) ──▶ <logdir>/run_info.json
//
// A value that was not measured is NaN ("nan" in the CSV). A run that resumes in the same logdir
// appends to metrics.csv. Not thread-safe: one reporting thread owns it. I/O errors throw
// seedrl::Error naming the file.
#pragma once

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
  bool tensorboard = true;  ///< write event files (only with a logdir)
};

using Scalar = std::pair<std::string_view, double>;
/// A named setting of the run (e.g. {"atari_profile", "dqn"}).
using RunInfo = std::vector<std::pair<std::string, std::string>>;

class MetricsLogger {
 public:
  /// `logdir` empty: no files (every call does nothing). The directory is created if needed.
  explicit MetricsLogger(std::string logdir = {}, const MetricsOptions& options = {});
  ~MetricsLogger();
  MetricsLogger(const MetricsLogger&) = delete;
  MetricsLogger& operator=(const MetricsLogger&) = delete;

  /// One row of named scalars at `step`. The names of the first row fix the CSV columns; later
  /// rows must use the same names in the same order.
  void log(std::int64_t step, std::span<const Scalar> scalars);
  /// Records what the run is (settings that are not numbers): <logdir>/run_info.json, one JSON
  /// object of strings, written atomically (merged with an existing file, later values win, so
  /// a resumed run keeps what the first wrote).
  void write_run_info(const RunInfo& info);
  /// Flushes the files.
  void flush();

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
};

}  // namespace seedrl::io
