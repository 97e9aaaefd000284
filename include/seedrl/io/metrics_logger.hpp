// MetricsLogger: the files a training run's numbers go to (the console is a MessageSink's job,
// io/messages.hpp).
//
//   log(frames, {{"mean_return", ...}, ...}) ──▶ <logdir>/metrics.csv        (a row, flushed)
//                                            └─▶ <logdir>/events.out.tfevents.* (TensorBoard
//                                            scalars)
//   write_run_info({{"agent", "vtrace"}, ...}) ──▶ <logdir>/run_info.json
//
// A value that was not measured is NaN ("nan" in the CSV). A run that resumes in the same logdir
// appends to metrics.csv. The files are created readable by their owner only (0600; the logdir
// 0700 when it is created here).
//
// A full or failing disk does not stop the run: a row that cannot be written stays in memory
// (with TensorBoard's records, up to 16 MiB each; the oldest beyond that are dropped) and is
// written, in order, once the disk takes it again; the files hold whole rows and records only.
// Each file's first failure is said once through `faults` (the file and the system's reason), and
// so is its recovery. Not thread-safe: one reporting thread owns it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace seedrl::io {

class AppendFile;
class TensorBoardWriter;

struct MetricsOptions {
  bool tensorboard = true;  ///< write event files (only with a logdir)
};

using Scalar = std::pair<std::string_view, double>;
/// A named setting of the run (e.g. {"atari_profile", "dqn"}).
using RunInfo = std::vector<std::pair<std::string, std::string>>;
/// Receives a line when a file of the run starts failing to be written, and when it works again.
using FileFaultSink = std::function<void(const std::string&)>;

class MetricsLogger {
 public:
  /// `logdir` empty: no files (every call does nothing). The directory is created if needed
  /// (throws seedrl::Error naming it when it cannot be).
  explicit MetricsLogger(std::string logdir = {}, const MetricsOptions& options = {},
                         FileFaultSink faults = {});
  ~MetricsLogger();
  MetricsLogger(const MetricsLogger&) = delete;
  MetricsLogger& operator=(const MetricsLogger&) = delete;

  /// One row of named scalars at `step`. The names of the first row fix the CSV columns; later
  /// rows must use the same names in the same order (else throws seedrl::Error: a caller's bug).
  /// I/O faults do not throw (see the top).
  void log(std::int64_t step, std::span<const Scalar> scalars);
  /// Records what the run is (settings that are not numbers): <logdir>/run_info.json, one JSON
  /// object of strings, written atomically (merged with an existing file, later values win, so
  /// a resumed run keeps what the first wrote). Returns false when the file could not be written
  /// (said through `faults`); throws seedrl::Error when an existing file is not such an object.
  bool write_run_info(const RunInfo& info);
  /// Writes what waits; true when nothing does.
  bool flush();

  const std::string& logdir() const { return logdir_; }
  std::string run_info_path() const {
    return logdir_.empty() ? std::string() : logdir_ + "/run_info.json";
  }
  std::string csv_path() const {
    return logdir_.empty() ? std::string() : logdir_ + "/metrics.csv";
  }

 private:
  // A file's state of health, so that its faults are said once and its recovery too.
  struct Health {
    bool failing = false;
  };
  void report(Health& health, const std::string& path, int error, std::string_view what_waits);

  std::string logdir_;
  MetricsOptions options_;
  FileFaultSink faults_;
  std::unique_ptr<AppendFile> csv_;
  std::vector<std::string> columns_;
  std::unique_ptr<TensorBoardWriter> tensorboard_;
  Health csv_health_, tensorboard_health_, run_info_health_;
};

}  // namespace seedrl::io
