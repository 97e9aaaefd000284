// TrainingSession: the learner side of a SEED run, whoever the actors are.
//
//   actors (threads in this process, or other processes through a SocketServer)
//        │ observations                      ▲ actions
//        ▼                                   │
//   InferenceServer (one thread) ──unrolls──▶ BoundedQueue ──▶ learner thread
//        ▲ reads parameters in place (SharedParameters)          │ writes them
//        └───────────────────────────────────────────────────────┘
//   run()'s thread: progress line, metrics.csv + TensorBoard, checkpoints every N seconds
//
// The session owns the unroll queue, the Learner and the InferenceServer. Its owner connects
// actors to server() (LocalClient, or a SocketServer in front of it), then calls run(), which
// trains until the frame budget, an interrupt flag or an error, and then shuts down in order:
//
//   hooks.stop_sources(finished)  stop what produces steps (actors, socket servers)
//   server().stop()               answers what is still in flight, closes the unroll queue
//   learner thread joins          after it has drained the queue
//   hooks.join_sources()          join actor threads
//   final report, metrics flushed, final checkpoint
//
// With a logdir holding checkpoint.safetensors the session resumes from it (at construction):
// parameters, optimizer state, learner steps and the frame and episode counters continue.
// Errors from any thread (report_error) end the run and are rethrown by run(); the final
// checkpoint is then not written, the last periodic one stays.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "seedrl/core/float_mode.hpp"
#include "seedrl/env/environment.hpp"
#include "seedrl/io/checkpoint.hpp"
#include "seedrl/io/metrics_logger.hpp"
#include "seedrl/runtime/inference_server.hpp"
#include "seedrl/runtime/learner.hpp"

namespace seedrl {

/// Settings of the learner side of a run.
struct TrainingSessionOptions {
  std::int64_t total_frames = 1'000'000;  ///< training frames (resumed ones included)
  InferenceServerOptions server;
  int learner_threads = 1;
  /// The learner thread flushes denormal floats to zero (core/float_mode.hpp): optimizer moments
  /// that decay toward zero otherwise slow training several-fold.
  bool flush_denormals = true;
  std::size_t unroll_queue_capacity = 0;  ///< 0: twice the learner batch
  std::string logdir;                     ///< empty: no files (no checkpoints, no metrics files)
  double checkpoint_seconds = 600.0;      ///< 0: only at the end
  double report_seconds = 1.0;
  io::MetricsOptions metrics;
  const std::atomic<bool>* interrupt = nullptr;  ///< set to true to stop early (e.g. from SIGINT)
  /// What the run is, beyond numbers (e.g. AtariPipelineOptions::describe()): written to
  /// <logdir>/run_info.json and printed when the run starts. The session adds "agent".
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
    server.validate();
  }
};

/// What a run did.
struct TrainingResult {
  std::int64_t frames = 0;  ///< environment frames of training actors (resumed runs included)
  std::int64_t frames_this_run = 0;
  double seconds = 0.0;  ///< wall time of this run
  double fps = 0.0;      ///< frames_this_run / seconds
  std::int64_t episodes = 0;
  double mean_return = 0.0;  ///< last 100 training episodes
  double evaluation_mean_return = 0.0;
  std::int64_t learner_steps = 0;
  bool resumed = false;
  bool interrupted = false;  ///< stopped by the interrupt flag before the frame budget
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

template <class Agent, nn::Backend B>
class TrainingSession {
 public:
  /// Builds the learner and the inference server for environments of these specs and resumes
  /// from `options.logdir`'s checkpoint if there is one (an error names the file and the problem).
  TrainingSession(const Agent& agent, const TensorSpec& observation_spec,
                  const ActionSpec& action_spec, const TrainingSessionOptions& options)
      : options_((options.validate(), options)),
        unrolls_(options.unroll_queue_capacity > 0
                     ? options.unroll_queue_capacity
                     : static_cast<std::size_t>(2 * agent.options().batch_size)),
        learner_(agent, make_unroll_spec(agent, observation_spec, action_spec, options.server),
                 unrolls_),
        server_(agent, learner_.parameters(), unrolls_, observation_spec, action_spec,
                options.server) {
    if (!options_.logdir.empty()) {
      std::filesystem::create_directories(options_.logdir);
      const std::string path = checkpoint_path(options_.logdir);
      if (std::filesystem::exists(path)) {
        const io::CheckpointCounters counters = learner_.load_checkpoint(path);
        server_.set_training_frames(counters.frames);
        server_.episodes().set_counts(counters.episodes, 0);
        frames_at_start_ = counters.frames;
        resumed_ = true;
        std::fprintf(stderr, "resumed from %s at frame %lld, learner step %lld\n", path.c_str(),
                     static_cast<long long>(counters.frames),
                     static_cast<long long>(counters.learner_steps));
      }
    }
  }
  TrainingSession(const TrainingSession&) = delete;
  TrainingSession& operator=(const TrainingSession&) = delete;

  /// The endpoint actors connect to (LocalClient, SocketServer).
  InferenceServer<Agent, B>& server() { return server_; }
  Learner<Agent, B>& learner() { return learner_; }
  bool resumed() const { return resumed_; }
  std::int64_t frames_at_start() const { return frames_at_start_; }

  /// Records an error from any thread; it ends run(), which rethrows the first one.
  void report_error(std::exception_ptr error) {
    std::lock_guard lock(error_mutex_);
    if (!error_) error_ = std::move(error);
    failed_ = true;
  }

  /// Starts the server and the learner, trains until the frame budget, the interrupt flag or an
  /// error, and shuts down as described at the top. Call once.
  TrainingResult run(const TrainingHooks& hooks = {}) {
    start_ = std::chrono::steady_clock::now();
    io::MetricsLogger metrics(options_.logdir, options_.metrics);
    io::RunInfo info = options_.run_info;
    info.insert(info.begin(), {"agent", learner_.checkpoint_metadata().at("agent")});
    metrics.write_run_info(info);
    server_.start();
    std::thread learner_thread([this] { learn(); });

    last_checkpoint_ = last_report_ = start_;
    last_report_frames_ = frames_at_start_;
    last_report_steps_ = learner_.steps();
    const auto period = std::chrono::duration<double>(options_.report_seconds);
    while (!failed_ && server_.training_frames() < options_.total_frames && !interrupted()) {
      std::this_thread::sleep_for(std::min(period, std::chrono::duration<double>(0.05)));
      const auto now = std::chrono::steady_clock::now();
      if (now - last_report_ >= period) report(metrics, hooks);
      if (options_.checkpoint_seconds > 0.0 &&
          std::chrono::duration<double>(now - last_checkpoint_).count() >=
              options_.checkpoint_seconds) {
        save();
      }
    }
    TrainingResult result;
    result.interrupted = interrupted() && server_.training_frames() < options_.total_frames;
    const bool finished = !failed_ && !result.interrupted;

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
      metrics.finish();
      std::rethrow_exception(error);
    }
    report(metrics, hooks);
    metrics.finish();
    save();

    const EpisodeSummary episodes = server_.episodes().summary();
    result.seconds = elapsed();
    result.frames = server_.training_frames();
    result.frames_this_run = result.frames - frames_at_start_;
    result.fps = static_cast<double>(result.frames_this_run) / std::max(result.seconds, 1e-9);
    result.episodes = episodes.episodes;
    result.mean_return = episodes.mean_return;
    result.evaluation_mean_return = episodes.evaluation_mean_return;
    result.learner_steps = learner_.steps();
    result.resumed = resumed_;
    return result;
  }

 private:
  std::exception_ptr first_error() {
    std::lock_guard lock(error_mutex_);
    return error_;
  }

  bool interrupted() const { return options_.interrupt && options_.interrupt->load(); }

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  // The learner thread publishes running sums that report() averages and resets.
  void learn() {
    try {
      if (options_.flush_denormals) set_flush_denormals(true);
      if constexpr (requires { B::set_num_threads(1); })
        B::set_num_threads(options_.learner_threads);
      while (std::optional<LearnerStepStats> s = learner_.step()) {
        std::lock_guard lock(learner_mutex_);
        last_ = *s;
        sums_.total_loss += s->total_loss;
        sums_.policy_loss += s->policy_loss;
        sums_.baseline_loss += s->baseline_loss;
        sums_.entropy_loss += s->entropy_loss;
        sums_.entropy += s->entropy;
        sums_.grad_norm += s->grad_norm;
        sums_.policy_lag += s->policy_lag;
        ++summed_steps_;
      }
    } catch (...) {
      report_error(std::current_exception());
    }
  }

  void save() {
    if (options_.logdir.empty()) return;
    learner_.save_checkpoint(checkpoint_path(options_.logdir),
                             {server_.training_frames(), 0, server_.episodes().summary().episodes});
    last_checkpoint_ = std::chrono::steady_clock::now();
  }

  void report(io::MetricsLogger& metrics, const TrainingHooks& hooks) {
    const auto now = std::chrono::steady_clock::now();
    const double dt = std::max(1e-9, std::chrono::duration<double>(now - last_report_).count());
    const std::int64_t frames = server_.training_frames();
    const EpisodeSummary episodes = server_.episodes().summary();
    LearnerStepStats mean;
    std::int64_t steps_now = 0, n = 0;
    {
      std::lock_guard lock(learner_mutex_);
      n = std::max<std::int64_t>(summed_steps_, 1);
      mean = sums_;
      mean.learning_rate = last_.learning_rate;
      steps_now = last_.step;
      sums_ = {};
      summed_steps_ = 0;
    }
    const auto k = static_cast<double>(n);
    const double fps = static_cast<double>(frames - last_report_frames_) / dt;
    const double steps_per_s = static_cast<double>(steps_now - last_report_steps_) / dt;
    last_report_ = now;
    last_report_frames_ = frames;
    last_report_steps_ = std::max(steps_now, last_report_steps_);
    std::vector<io::Scalar> row = {{"seconds", elapsed()},
                                   {"fps", fps},
                                   {"episodes", static_cast<double>(episodes.episodes)},
                                   {"mean_return", episodes.mean_return},
                                   {"mean_episode_length", episodes.mean_length},
                                   {"evaluation_mean_return", episodes.evaluation_mean_return},
                                   {"learner_steps", static_cast<double>(learner_.steps())},
                                   {"learner_steps_per_s", steps_per_s},
                                   {"total_loss", mean.total_loss / k},
                                   {"policy_loss", mean.policy_loss / k},
                                   {"baseline_loss", mean.baseline_loss / k},
                                   {"entropy_loss", mean.entropy_loss / k},
                                   {"entropy", mean.entropy / k},
                                   {"grad_norm", mean.grad_norm / k},
                                   {"learning_rate", mean.learning_rate},
                                   {"policy_lag", mean.policy_lag / k},
                                   {"inference_batch", server_.stats().mean_batch_size()}};
    // A learner may add its own figures (R2D2: replay size, mean Q, ...).
    if constexpr (requires { learner_.metrics(); }) {
      for (const io::Scalar& s : learner_.metrics()) row.push_back(s);
    }
    metrics.log(frames, row);
    char line[320];
    std::snprintf(line, sizeof line,
                  "frames %lld/%lld | %.0f fps | episodes %lld | return %.2f | loss %.4f | ",
                  static_cast<long long>(frames), static_cast<long long>(options_.total_frames),
                  fps, static_cast<long long>(episodes.episodes), episodes.mean_return,
                  mean.total_loss / k);
    std::string text = line;
    if constexpr (Agent::kStoresLogits) {  // a policy: its entropy tells how much it explores
      std::snprintf(line, sizeof line, "entropy %.3f | ", mean.entropy / k);
      text += line;
    }
    std::snprintf(line, sizeof line, "steps %lld (%.1f/s) | lag %.1f",
                  static_cast<long long>(learner_.steps()), steps_per_s, mean.policy_lag / k);
    text += line;
    if constexpr (requires { learner_.progress_suffix(); }) text += learner_.progress_suffix();
    if (hooks.progress_suffix) text += hooks.progress_suffix();
    metrics.progress(text);
  }

  TrainingSessionOptions options_;
  UnrollQueue unrolls_;
  Learner<Agent, B> learner_;
  InferenceServer<Agent, B> server_;
  bool resumed_ = false;
  std::int64_t frames_at_start_ = 0;

  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};

  std::mutex learner_mutex_;
  LearnerStepStats sums_, last_;
  std::int64_t summed_steps_ = 0;

  std::chrono::steady_clock::time_point start_, last_checkpoint_, last_report_;
  std::int64_t last_report_frames_ = 0, last_report_steps_ = 0;
};

}  // namespace seedrl
