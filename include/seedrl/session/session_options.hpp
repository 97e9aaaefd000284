// The settings of a training session (TrainingSessionOptions), where it writes its checkpoint,
// and the hooks run() calls around the shutdown (TrainingHooks): session/training_session.hpp.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/inference/inference_server.hpp"
#include "seedrl/io/messages.hpp"
#include "seedrl/io/metrics_logger.hpp"
#include "seedrl/learner/learner_metrics.hpp"
#include "seedrl/learner/training_group.hpp"
#include "seedrl/session/run_report.hpp"

namespace seedrl {

/// Settings of the learner side of a run.
struct TrainingSessionOptions {
  std::int64_t total_frames = 1'000'000;  ///< training frames (resumed ones included)
  InferenceServerOptions server;
  int learner_threads = 1;  ///< compute-library threads of the learner thread (each worker's)
  /// Learner threads that each compute the gradients of whole micro-batches of a step's batch
  /// (LearnerCore::set_workers; learners that split batches: V-trace, R2D2). 1: the learner thread
  /// alone. On a machine where inference and the actors leave part of every core free, 2 or more
  /// use that part without running every kernel in lockstep across cores.
  int learner_workers = 1;
  /// Micro-batches per learner step; 0: one when learner_workers is 1, else 2 per worker.
  int micro_batches = 0;
  /// micro_batches with 0 resolved.
  int effective_micro_batches() const {
    return micro_batches > 0 ? micro_batches : learner_workers > 1 ? 2 * learner_workers : 1;
  }
  /// The learner thread flushes denormal floats to zero (core/float_mode.hpp): optimizer moments
  /// that decay toward zero otherwise slow training several-fold.
  bool flush_denormals = true;
  /// 0: the agent's kQueuedBatches learner batches when it has that constant (PPO: 1, which
  /// bounds how far the actors run ahead of an on-policy learner), else two.
  std::size_t unroll_queue_capacity = 0;
  std::string logdir;  ///< empty: no files (no checkpoints, no metrics files)
  /// Non-empty: at the end of the run (finished or interrupted) the final parameters are exported
  /// here as an ONNX model (io/onnx.hpp). Its directory must exist when the run starts.
  std::string export_onnx;
  double checkpoint_seconds = 600.0;  ///< 0: only at the end
  /// Checkpoints kept in logdir: checkpoint.safetensors, the newest, and the older ones as
  /// checkpoint.1.safetensors and on (io/checkpoint.hpp). A resume falls back to an older one when
  /// a newer one does not verify.
  int keep_checkpoints = 3;
  /// A checkpoint that cannot be written (a full disk) is said and tried again at the next
  /// period; this many failures in a row end the run (session/run_logdir.hpp).
  int max_checkpoint_failures = 3;
  /// The run ends with an error once the learner has skipped this many steps in a row (their
  /// loss, gradients or parameters were not finite: learning has stopped); 0: never.
  std::int64_t max_skipped_steps = 100;
  double report_seconds = 1.0;
  io::MetricsOptions metrics;
  /// Where the run's lines go (what runs, a resume, progress): empty is silent;
  /// io::console_sink() prints them on stderr.
  io::MessageSink messages;
  const std::atomic<bool>* interrupt = nullptr;  ///< set to true to stop early (e.g. from SIGINT)
  /// Called with every report's row (every report_seconds and at the end; rank 0 of a group),
  /// on the thread that runs the session, after the metrics files have it: a dashboard's or a
  /// benchmark's view of the run. Must not block for long.
  std::function<void(const RunReport::Row&)> on_report;
  /// What the run is, beyond numbers (e.g. AtariPipelineOptions::describe()): written to
  /// <logdir>/run_info.json and in the "run:" line. The session adds "agent".
  io::RunInfo run_info;
  /// Non-null: this session is one member of a group of data-parallel learners (see "Groups" at
  /// the top of training_session.hpp). The group must outlive the session.
  TrainingGroup* group = nullptr;
  /// With a group: every this many learner steps the members check that their parameters are
  /// identical (a hash each; a diverged member ends the group, named). 0: never.
  std::int64_t group_check_steps = 1000;

  /// Throws seedrl::Error naming the first bad setting.
  void validate(std::string_view owner = "TrainingSessionOptions") const {
    SEEDRL_REQUIRE(total_frames >= 1, owner, ".total_frames must be >= 1, got ", total_frames);
    SEEDRL_REQUIRE(learner_threads >= 1, owner, ".learner_threads must be >= 1, got ",
                   learner_threads);
    SEEDRL_REQUIRE(learner_workers >= 1, owner, ".learner_workers must be >= 1, got ",
                   learner_workers);
    SEEDRL_REQUIRE(micro_batches >= 0, owner, ".micro_batches must be >= 0 (0: automatic), got ",
                   micro_batches);
    SEEDRL_REQUIRE(checkpoint_seconds >= 0.0, owner, ".checkpoint_seconds must be >= 0, got ",
                   checkpoint_seconds);
    SEEDRL_REQUIRE(report_seconds > 0.0, owner, ".report_seconds must be > 0, got ",
                   report_seconds);
    SEEDRL_REQUIRE(keep_checkpoints >= 1, owner, ".keep_checkpoints must be >= 1, got ",
                   keep_checkpoints);
    SEEDRL_REQUIRE(max_checkpoint_failures >= 1, owner,
                   ".max_checkpoint_failures must be >= 1, got ", max_checkpoint_failures);
    SEEDRL_REQUIRE(max_skipped_steps >= 0, owner,
                   ".max_skipped_steps must be >= 0 (0: never stop), got ", max_skipped_steps);
    SEEDRL_REQUIRE(group_check_steps >= 0, owner, ".group_check_steps must be >= 0, got ",
                   group_check_steps);
    if (!export_onnx.empty()) {
      const std::filesystem::path directory = std::filesystem::path(export_onnx).parent_path();
      SEEDRL_REQUIRE(directory.empty() || std::filesystem::is_directory(directory), owner,
                     ".export_onnx: the directory of '", export_onnx, "' does not exist");
    }
    server.validate(str_cat(owner, ".server"));
  }
};

/// The checkpoint a trainer writes in `logdir`.
inline std::string checkpoint_path(const std::string& logdir) {
  return logdir + "/checkpoint.safetensors";
}

/// What run() calls around the shutdown; all optional.
struct TrainingHooks {
  /// Stop whatever produces steps. `finished`: the frame budget was reached (not an interrupt
  /// or an error), so remote actors can be told that training is over.
  std::function<void(bool finished)> stop_sources;
  /// Called after the server has stopped (which wakes every waiting actor): join actor threads.
  std::function<void()> join_sources;
  /// Appended to each progress line, e.g. " | actors 12".
  std::function<std::string()> progress_suffix;
  /// More figures for each report's metrics (CSV, TensorBoard), after the learner's; their names
  /// must outlive the run.
  std::function<std::vector<Metric>()> metrics;
  /// Called after each checkpoint is written (in `logdir`), for what the run keeps beside it.
  std::function<void(const std::string& logdir)> on_checkpoint;
};

}  // namespace seedrl
