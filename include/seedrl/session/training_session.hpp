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
// The logdir is the run's own while the session lives (a lock, session/run_logdir.hpp). With
// checkpoints in it the session resumes (at construction) from the newest that verifies and loads
// (io/checkpoint.hpp: checksums, finite values, the same agent and network, a learner's replay
// with its own checkpoint): parameters, optimizer state, learner steps, the frame and episode
// counters and the window of recent episodes continue. Errors from any thread (report_error) end
// the run and are rethrown by run(); the final checkpoint is then not written, the last periodic
// one stays. So does a learner that has skipped max_skipped_steps steps in a row (something is not
// finite; the error says what and since which learner step). A failing disk does not end the
// run: metrics wait in memory, a checkpoint that cannot be written is said and tried again at the
// next period (the final one every few seconds), and only max_checkpoint_failures failures in a
// row end it. The session writes nothing to the console itself: its lines go to options.messages.
//
// Groups (options.group, e.g. seedrl::mpi::LearnerGroup; the session's RunScope is then a
// GroupScope, session/group_scope.hpp, where alone it is a SoloScope, session/run_scope.hpp): the
// session is one member of N that train one set of parameters, each with its own actors, server and
// learner. At construction rank 0 alone resumes from its logdir's checkpoint, and its parameters,
// optimizer state and step count become every member's (LearnerCore::join_group). Every learner
// step averages the members' gradients and then sums their frame and episode counters and a stop
// vote (the interrupt flag), so that every member stops after the same step: once the group's
// frames reach total_frames, or any member is interrupted. There is no draining of the queue then
// (a member that trained one more batch than the others would wait for them forever). Rank 0 alone
// writes reports, metrics, run_info.json, checkpoints (with the group's counters) and the ONNX
// export, and says the run's lines; every group_check_steps steps all members check that they hold
// identical parameters. An error on any member aborts the whole group (TrainingGroup::abort) with
// the error on stderr. Environment seeds are the owner's business: give each member its own.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "seedrl/agent/agent.hpp"
#include "seedrl/core/float_mode.hpp"
#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/core/thread_name.hpp"
#include "seedrl/inference/inference_server.hpp"
#include "seedrl/io/checkpoint.hpp"
#include "seedrl/io/messages.hpp"
#include "seedrl/io/metrics_logger.hpp"
#include "seedrl/io/onnx.hpp"
#include "seedrl/learner/learner.hpp"
#include "seedrl/session/group_scope.hpp"
#include "seedrl/session/run_logdir.hpp"
#include "seedrl/session/run_onnx.hpp"
#include "seedrl/session/run_report.hpp"
#include "seedrl/session/session_options.hpp"

namespace seedrl {

template <Agent A, nn::Backend B>
class TrainingSession {
  static_assert(LearnerOf<Learner<A, B>, A>,
                "Learner<Agent, Backend> is not a learner: include the agent's header, which "
                "brings its learner (learner/learner.hpp says what a learner provides)");

 public:
  /// Builds the learner and the inference server for environments whose steps are `spec`
  /// (observations, actions, declared fields: seedrl::step_spec(env)) and resumes from
  /// `options.logdir`'s checkpoint if there is one (an error names the file and the problem).
  /// With options.group, every member constructs its session at the same point (collective).
  TrainingSession(const A& agent, const StepSpec& spec, const TrainingSessionOptions& options);
  /// The same for steps with no declared fields.
  TrainingSession(const A& agent, const TensorSpec& observation_spec, const ActionSpec& action_spec,
                  const TrainingSessionOptions& options)
      : TrainingSession(agent, StepSpec{observation_spec, action_spec, {}}, options) {}
  ~TrainingSession();
  TrainingSession(const TrainingSession&) = delete;
  TrainingSession& operator=(const TrainingSession&) = delete;

  /// The endpoint actors connect to (LocalClient, SocketServer).
  InferenceServer<A, B>& server() { return server_; }
  Learner<A, B>& learner() { return learner_; }
  bool resumed() const { return begun_.resumed; }
  /// The frames of the resumed run (with a group: the group's).
  std::int64_t frames_at_start() const { return begun_.frames; }

  /// Records an error from any thread; it ends run(), which rethrows the first one.
  void report_error(std::exception_ptr error) SEEDRL_EXCLUDES(error_mutex_) {
    MutexLock lock(error_mutex_);
    if (!error_) error_ = std::move(error);
    failed_ = true;
  }

  /// Starts the server and the learner, trains until the frame budget, the interrupt flag or an
  /// error, and shuts down as described at the top. Call once.
  TrainingResult run(const TrainingHooks& hooks = {});

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

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  // Only rank 0 of a group speaks.
  void say(io::MessageKind kind, std::string_view line) const {
    if (options_.messages && scope_->speaks()) options_.messages(kind, line);
  }

  // The learner thread adds every step's metrics to the accumulator that report() empties.
  void learn() SEEDRL_EXCLUDES(metrics_mutex_) {
    try {
      set_thread_name("seedrl-learner");
      if (options_.flush_denormals) set_flush_denormals(true);
      if constexpr (requires { B::set_num_threads(1); })
        B::set_num_threads(options_.learner_threads);
      // In a group the stop comes from the group (every member after the same step) and nothing
      // is drained; alone, the learner drains the queue the server closes.
      while (!scope_->stop_learning_now()) {
        std::optional<LearnerStepStats> s = learner_.step();
        if (!s) break;
        if (s->skipped && options_.max_skipped_steps > 0 &&
            s->skip.steps >= options_.max_skipped_steps) {
          fail("learning has stopped: the learner skipped ", s->skip.steps,
               " steps in a row since learner step ", s->skip.since_step, "; at the first, ",
               s->skip.cause,
               ". No checkpoint is written over the good ones "
               "(TrainingSessionOptions::max_skipped_steps, --max-skipped-steps)");
        }
        MutexLock lock(metrics_mutex_);
        learner_metrics_.add(s->metrics);
      }
    } catch (...) {
      report_error(std::current_exception());
    }
  }

  // Writes a checkpoint (root only); false when it failed and was said (RunLogdir).
  bool save(const TrainingHooks& hooks) {
    if (!logdir_.active()) return true;
    io::CheckpointCounters counters;
    const RunTotals now = scope_->totals();
    counters.frames = now.frames;
    counters.episodes = now.episodes.episodes;
    counters.episode_window = server_.episodes().window_text();
    counters.normalization = server_.normalization_text();
    // The action spec, for Policy: a box's bounds are in no other part of the checkpoint; and the
    // declared step fields, which Policy::act takes.
    io::Metadata extra{{"action_spec", server_.action_spec().to_text()}};
    if (!server_.step_spec().fields.empty())
      extra.emplace("step_fields", StepSpec::fields_to_text(server_.step_spec().fields));
    const bool written = logdir_.checkpoint(
        [&] {
          learner_.save_checkpoint(checkpoint_path(options_.logdir), counters, extra,
                                   options_.keep_checkpoints);
        },
        [this](std::string_view line) { say(io::MessageKind::info, line); });
    last_checkpoint_ = std::chrono::steady_clock::now();
    if (written && hooks.on_checkpoint) hooks.on_checkpoint(options_.logdir);
    return written;
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
    // Seconds the learner (writer) and inference (reader) have waited for the parameters' lock.
    const SharedParameters::LockWaits waits = learner_.parameters().lock_waits();
    learner.push_back({{"learner_lock_wait_s", Reduce::last}, waits.writer_seconds});
    learner.push_back({{"inference_lock_wait_s", Reduce::last}, waits.reader_seconds});
    if constexpr (GraphedForward<B>::kAvailable) {  // the share of forwards replayed from graphs
      const GraphedForwardStats g = server_.graph_stats();
      const auto all = static_cast<double>(std::max<std::int64_t>(g.replays + g.plain, 1));
      learner.push_back({{"inference_graphed_share", Reduce::last}, g.replays / all});
    }
    if (hooks.metrics)
      for (const Metric& m : hooks.metrics()) learner.push_back(m);
    if (!scope_->speaks()) return;  // a group's reports are rank 0's
    const RunTotals now = scope_->totals();
    const RunReport::Row row =
        report_.row(std::chrono::steady_clock::now(), now.frames, now.episodes, learner_.steps(),
                    learner, server_.stats().mean_batch_size());
    files.log(row.frames, row.scalars);
    if (options_.on_report) options_.on_report(row);
    std::string line = report_.progress_line(row, options_.total_frames, learner);
    if (hooks.progress_suffix) line += hooks.progress_suffix();
    say(kind, line);
  }

  static constexpr std::chrono::seconds kFinalCheckpointRetry{2};

  TrainingSessionOptions options_;
  RunLogdir logdir_;  // opened when this session writes the run's files (alone, or rank 0)
  UnrollQueue unrolls_;
  Learner<A, B> learner_;
  InferenceServer<A, B> server_;
  std::unique_ptr<RunScope<A, B>> scope_;  // alone, or a group member (set by the constructor)
  RunStart begun_;                         // what the run resumed from

  Mutex error_mutex_;
  std::exception_ptr error_ SEEDRL_GUARDED_BY(error_mutex_);
  std::atomic<bool> failed_{false};

  Mutex metrics_mutex_;
  MetricsAccumulator learner_metrics_ SEEDRL_GUARDED_BY(metrics_mutex_);
  RunReport report_;

  std::chrono::steady_clock::time_point start_, last_checkpoint_;
};

}  // namespace seedrl

// The constructor, run() and the destructor: out of the class, so that the built-in agents'
// sessions, compiled once in the library, are not compiled again by a program that includes
// session/builtin_agents.hpp (opt-in: this header brings no agent).
#include "seedrl/session/training_session_run.hpp"  // IWYU pragma: export
