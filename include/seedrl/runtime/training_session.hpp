// TrainingSession: the learner side of a SEED run, whoever the actors are.
//
//   actors (threads in this process, or other processes through a SocketServer)
//        │ observations                      ▲ actions
//        ▼                                   │
//   InferenceServer (one thread) ──unrolls──▶ UnrollQueue ──▶ learner thread
//        ▲ reads parameters in place (SharedParameters)          │ writes them
//        └───────────────────────────────────────────────────────┘
//   run()'s thread: reports (options.messages, metrics.csv + TensorBoard), checkpoints
//
// The session owns the unroll queue, the Learner and the InferenceServer. Its owner connects
// actors to server() (LocalClient, or a SocketServer in front of it), then calls run(), which
// trains until the frame budget, an interrupt flag or an error, and then shuts down in order:
//
//   hooks.stop_sources(finished)  stop what produces steps (actors, socket servers)
//   server().stop()               answers what is still in flight, closes the unroll queue
//   learner thread joins          after it has drained the queue
//   hooks.join_sources()          join actor threads
//   final report, metrics flushed, final checkpoint, ONNX export (options.export_onnx)
//
// With a logdir holding checkpoint.safetensors the session resumes from it (at construction):
// parameters, optimizer state, learner steps, the frame and episode counters and the window of
// recent episodes continue. Errors from any thread (report_error) end the run and are rethrown by
// run(); the final checkpoint is then not written, the last periodic one stays. The session
// writes nothing to the console itself: its lines go to options.messages.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "seedrl/core/float_mode.hpp"
#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/io/checkpoint.hpp"
#include "seedrl/io/messages.hpp"
#include "seedrl/io/metrics_logger.hpp"
#include "seedrl/io/onnx.hpp"
#include "seedrl/runtime/agent.hpp"
#include "seedrl/runtime/inference_server.hpp"
#include "seedrl/runtime/learner.hpp"
#include "seedrl/runtime/run_report.hpp"

namespace seedrl {

/// Settings of the learner side of a run.
struct TrainingSessionOptions {
  std::int64_t total_frames = 1'000'000;  ///< training frames (resumed ones included)
  InferenceServerOptions server;
  int learner_threads = 1;
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
  double report_seconds = 1.0;
  io::MetricsOptions metrics;
  /// Where the run's lines go (what runs, a resume, progress): empty is silent;
  /// io::console_sink() prints them on stderr.
  io::MessageSink messages;
  const std::atomic<bool>* interrupt = nullptr;  ///< set to true to stop early (e.g. from SIGINT)
  /// What the run is, beyond numbers (e.g. AtariPipelineOptions::describe()): written to
  /// <logdir>/run_info.json and in the "run:" line. The session adds "agent".
  io::RunInfo run_info;

  /// Throws seedrl::Error naming the first bad setting.
  void validate() const {
    SEEDRL_REQUIRE(total_frames >= 1, "TrainingSessionOptions.total_frames must be >= 1, got ",
                   total_frames);
    SEEDRL_REQUIRE(learner_threads >= 1,
                   "TrainingSessionOptions.learner_threads must be >= 1, got ", learner_threads);
    SEEDRL_REQUIRE(checkpoint_seconds >= 0.0,
                   "TrainingSessionOptions.checkpoint_seconds must be >= 0, got ",
                   checkpoint_seconds);
    SEEDRL_REQUIRE(report_seconds > 0.0, "TrainingSessionOptions.report_seconds must be > 0, got ",
                   report_seconds);
    if (!export_onnx.empty()) {
      const std::filesystem::path directory = std::filesystem::path(export_onnx).parent_path();
      SEEDRL_REQUIRE(directory.empty() || std::filesystem::is_directory(directory),
                     "TrainingSessionOptions.export_onnx: the directory of '", export_onnx,
                     "' does not exist");
    }
    server.validate();
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
};

template <Agent A, nn::Backend B>
class TrainingSession {
  static_assert(LearnerOf<Learner<A, B>, A>,
                "Learner<Agent, Backend> is not a learner: include the agent's header, which "
                "brings its learner (runtime/learner.hpp says what a learner provides)");

 public:
  /// Builds the learner and the inference server for environments of these specs and resumes
  /// from `options.logdir`'s checkpoint if there is one (an error names the file and the problem).
  TrainingSession(const A& agent, const TensorSpec& observation_spec, const ActionSpec& action_spec,
                  const TrainingSessionOptions& options)
      : options_((options.validate(), options)),
        unrolls_(options.unroll_queue_capacity > 0
                     ? options.unroll_queue_capacity
                     : static_cast<std::size_t>(queued_batches() * agent.options().batch_size)),
        learner_(agent, make_unroll_spec(agent, observation_spec, action_spec, options.server),
                 unrolls_),
        server_(agent, learner_.parameters(), unrolls_, observation_spec, action_spec,
                options.server),
        learner_metrics_(learner_.metric_schema()) {
    if (options_.logdir.empty()) return;
    std::filesystem::create_directories(options_.logdir);
    const std::string path = checkpoint_path(options_.logdir);
    if (!std::filesystem::exists(path)) return;
    resumed_from_ = learner_.load_checkpoint(path);
    server_.set_training_frames(resumed_from_->frames);
    server_.episodes().set_counts(resumed_from_->episodes, 0);
    server_.episodes().restore_window(resumed_from_->episode_window, path);
    server_.restore_normalization(resumed_from_->normalization, path);
  }
  TrainingSession(const TrainingSession&) = delete;
  TrainingSession& operator=(const TrainingSession&) = delete;

  /// The endpoint actors connect to (LocalClient, SocketServer).
  InferenceServer<A, B>& server() { return server_; }
  Learner<A, B>& learner() { return learner_; }
  bool resumed() const { return resumed_from_.has_value(); }
  std::int64_t frames_at_start() const { return resumed_from_ ? resumed_from_->frames : 0; }

  /// Records an error from any thread; it ends run(), which rethrows the first one.
  void report_error(std::exception_ptr error) SEEDRL_EXCLUDES(error_mutex_) {
    MutexLock lock(error_mutex_);
    if (!error_) error_ = std::move(error);
    failed_ = true;
  }

  /// Starts the server and the learner, trains until the frame budget, the interrupt flag or an
  /// error, and shuts down as described at the top. Call once.
  TrainingResult run(const TrainingHooks& hooks = {}) {
    start_ = std::chrono::steady_clock::now();
    io::MetricsLogger files(options_.logdir, options_.metrics);
    io::RunInfo info = options_.run_info;
    info.insert(info.begin(), {"agent", std::string(A::kName)});
    files.write_run_info(info);
    say(io::MessageKind::info, run_line(info));
    if (resumed_from_) {
      say(io::MessageKind::info, resume_line(checkpoint_path(options_.logdir), *resumed_from_));
    }
    server_.start();
    std::thread learner_thread([this] { learn(); });

    last_checkpoint_ = start_;
    report_.start(start_, frames_at_start(), learner_.steps());
    const auto period = std::chrono::duration<double>(options_.report_seconds);
    while (!failed_ && server_.training_frames() < options_.total_frames && !interrupted()) {
      std::this_thread::sleep_for(std::min(period, std::chrono::duration<double>(0.05)));
      const auto now = std::chrono::steady_clock::now();
      if (now - report_.last() >= period) report(files, hooks, io::MessageKind::progress);
      if (options_.checkpoint_seconds > 0.0 &&
          std::chrono::duration<double>(now - last_checkpoint_).count() >=
              options_.checkpoint_seconds) {
        save();
      }
    }
    const bool interrupted_early =
        interrupted() && server_.training_frames() < options_.total_frames;
    const bool finished = !failed_ && !interrupted_early;

    // Whatever a hook throws must not leave the learner thread running.
    std::exception_ptr shutdown_error;
    try {
      if (hooks.stop_sources) hooks.stop_sources(finished);
    } catch (...) {
      shutdown_error = std::current_exception();
    }
    server_.stop();  // wakes the actors, closes the unroll queue: the learner drains it and ends
    learner_thread.join();
    try {
      if (hooks.join_sources) hooks.join_sources();
    } catch (...) {
      if (!shutdown_error) shutdown_error = std::current_exception();
    }
    if (shutdown_error) report_error(shutdown_error);
    if (std::exception_ptr error = first_error()) {
      files.flush();
      std::rethrow_exception(error);
    }
    report(files, hooks, io::MessageKind::done);
    files.flush();
    save();
    if (!options_.export_onnx.empty()) {
      io::OnnxExportOptions onnx;  // with the observation statistics the run normalised with
      const ObservationNormalization normalization =
          ObservationNormalization::parse(server_.normalization_text(), "the run");
      onnx.observation_moments = normalization.moments;
      onnx.observation_clip = normalization.clip;
      io::export_onnx(learner_.network(), options_.export_onnx, onnx);
      say(io::MessageKind::info, str_cat("exported the network as ONNX: ", options_.export_onnx));
    }

    const EpisodeSummary episodes = server_.episodes().summary();
    TrainingResult result;
    result.seconds = elapsed();
    result.frames = server_.training_frames();
    result.frames_this_run = result.frames - frames_at_start();
    result.fps = static_cast<double>(result.frames_this_run) / std::max(result.seconds, 1e-9);
    result.episodes = episodes.episodes;
    result.mean_return = episodes.mean_return;
    result.evaluation_mean_return = episodes.evaluation_mean_return;
    result.learner_steps = learner_.steps();
    result.resumed = resumed();
    result.interrupted = interrupted_early;
    return result;
  }

 private:
  std::exception_ptr first_error() SEEDRL_EXCLUDES(error_mutex_) {
    MutexLock lock(error_mutex_);
    return error_;
  }

  static std::int64_t queued_batches() {
    if constexpr (requires { A::kQueuedBatches; }) {
      return A::kQueuedBatches;
    } else {
      return 2;
    }
  }

  bool interrupted() const { return options_.interrupt && options_.interrupt->load(); }

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  void say(io::MessageKind kind, std::string_view line) const {
    if (options_.messages) options_.messages(kind, line);
  }

  // The learner thread adds every step's metrics to the accumulator that report() empties.
  void learn() SEEDRL_EXCLUDES(metrics_mutex_) {
    try {
      if (options_.flush_denormals) set_flush_denormals(true);
      if constexpr (requires { B::set_num_threads(1); })
        B::set_num_threads(options_.learner_threads);
      while (std::optional<LearnerStepStats> s = learner_.step()) {
        MutexLock lock(metrics_mutex_);
        learner_metrics_.add(s->metrics);
      }
    } catch (...) {
      report_error(std::current_exception());
    }
  }

  void save() {
    if (options_.logdir.empty()) return;
    io::CheckpointCounters counters;
    counters.frames = server_.training_frames();
    counters.episodes = server_.episodes().summary().episodes;
    counters.episode_window = server_.episodes().window_text();
    counters.normalization = server_.normalization_text();
    // The action spec, for Policy: a box's bounds are in no other part of the checkpoint.
    const std::string path = checkpoint_path(options_.logdir);
    const io::Metadata extra{{"action_spec", server_.action_spec().to_text()}};
    if constexpr (requires { learner_.save_checkpoint(path, counters, extra); }) {
      learner_.save_checkpoint(path, counters, extra);
    } else {
      learner_.save_checkpoint(path, counters);
    }
    last_checkpoint_ = std::chrono::steady_clock::now();
  }

  void report(io::MetricsLogger& files, const TrainingHooks& hooks, io::MessageKind kind)
      SEEDRL_EXCLUDES(metrics_mutex_) {
    std::vector<Metric> learner;
    {
      MutexLock lock(metrics_mutex_);
      learner = learner_metrics_.take();
    }
    if constexpr (requires { learner_.gauges(); }) {
      for (const Metric& m : learner_.gauges()) learner.push_back(m);
    }
    const RunReport::Row row = report_.row(
        std::chrono::steady_clock::now(), server_.training_frames(), server_.episodes().summary(),
        learner_.steps(), learner, server_.stats().mean_batch_size());
    files.log(row.frames, row.scalars);
    std::string line = report_.progress_line(row, options_.total_frames, learner);
    if (hooks.progress_suffix) line += hooks.progress_suffix();
    say(kind, line);
  }

  TrainingSessionOptions options_;
  UnrollQueue unrolls_;
  Learner<A, B> learner_;
  InferenceServer<A, B> server_;
  std::optional<io::CheckpointCounters> resumed_from_;

  Mutex error_mutex_;
  std::exception_ptr error_ SEEDRL_GUARDED_BY(error_mutex_);
  std::atomic<bool> failed_{false};

  Mutex metrics_mutex_;
  MetricsAccumulator learner_metrics_ SEEDRL_GUARDED_BY(metrics_mutex_);
  RunReport report_;

  std::chrono::steady_clock::time_point start_, last_checkpoint_;
};

}  // namespace seedrl
