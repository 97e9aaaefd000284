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
// Groups (options.group, e.g. seedrl::mpi::LearnerGroup): the session is one member of N that
// train one set of parameters, each with its own actors, server and learner. At construction
// rank 0 alone resumes from its logdir's checkpoint, and its parameters, optimizer state and
// step count become every member's (LearnerCore::join_group). Every learner step averages the
// members' gradients and then sums their frame and episode counters and a stop vote (the
// interrupt flag), so that every member stops after the same step: once the group's frames reach
// total_frames, or any member is interrupted. There is no draining of the queue then (a member
// that trained one more batch than the others would wait for them forever). Rank 0 alone writes
// reports, metrics, run_info.json, checkpoints (with the group's counters) and the ONNX export,
// and says the run's lines; every group_check_steps steps all members check that they hold
// identical parameters. An error on any member aborts the whole group (TrainingGroup::abort)
// with the error on stderr. Environment seeds are the owner's business: give each member its own.
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
#include "seedrl/learner/training_group.hpp"
#include "seedrl/session/group_counters.hpp"
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
  bool resumed() const { return resumed_; }
  /// The frames of the resumed run (with a group: the group's).
  std::int64_t frames_at_start() const { return frames_at_start_; }

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
  using Totals = RunTotals;  // this session's counters, or the group's as of the last exchange

  // The learner's reducer in a group: the group's mean gradient, then the counters and the stop
  // vote (one small sum), then now and then the check that the members have not diverged.
  class GroupStep final : public GradientReducer {
   public:
    explicit GroupStep(TrainingSession& session) : session_(session) {}
    void all_reduce(const Tensor& gradients, bool finite) override {
      all_reduce_step(std::span<const Tensor>(&gradients, 1), finite);
    }
    void all_reduce_step(std::span<const Tensor> gradients, bool finite) override {
      TrainingGroup& group = *session_.options_.group;
      group.all_reduce_step(gradients, finite);
      session_.exchange_totals(session_.interrupted());
      ++reductions_;
      const std::int64_t every = session_.options_.group_check_steps;
      if (every > 0 && reductions_ % every == 0) {
        // The networks before this step's update: identical wherever the group is healthy.
        for (const auto& [name, values] : session_.learner_.networks().values())
          group.check_identical(
              values, str_cat("the parameters of network '", name, "' (checked at learner step ",
                              session_.learner_.steps(), ")"));
      }
    }

   private:
    TrainingSession& session_;
    std::int64_t reductions_ = 0;
  };

  static TrainingSessionOptions for_member(const TrainingSessionOptions& options) {
    TrainingSessionOptions o = options;
    // Members sample actions from streams of their own.
    if (o.group && o.group->rank() > 0)
      o.server.seed += 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(o.group->rank());
    return o;
  }

  bool is_root() const { return options_.group == nullptr || options_.group->rank() == 0; }

  // Whether the run loop should end: the group has decided to stop, or (alone) the frame budget
  // or the interrupt flag.
  bool stopping() const {
    if (options_.group) return group_stopped_.load();
    return server_.training_frames() >= options_.total_frames || interrupted();
  }

  Totals totals() SEEDRL_EXCLUDES(totals_mutex_) {
    if (options_.group) return group_totals();
    return {server_.training_frames(), server_.episodes().summary()};
  }
  Totals group_totals() SEEDRL_EXCLUDES(totals_mutex_) {
    MutexLock lock(totals_mutex_);
    return group_totals_;
  }

  // Collective: sums every member's counters into group_totals_, with `stop_vote` as this
  // member's vote to stop; the group stops once its frames reach the budget or anyone voted.
  void exchange_totals(bool stop_vote) SEEDRL_EXCLUDES(totals_mutex_) {
    GroupCounters counters =
        GroupCounters::of(server_.training_frames(), server_.episodes().summary(), stop_vote);
    options_.group->sum(counters.values());
    const Totals t = counters.totals();
    {
      MutexLock lock(totals_mutex_);
      group_totals_ = t;
    }
    if (counters.stop_voted() || t.frames >= options_.total_frames) group_stopped_ = true;
  }

  // Collective, at construction: rank 0 resumes from its checkpoint (if any) and the group takes
  // its state. Rank 0's frames and episodes carry the resumed counts (the group's totals are
  // sums); every member takes its observation statistics.
  void join_group(TrainingGroup& group) {
    const bool root = group.rank() == 0;
    const std::string path = options_.logdir.empty() ? "" : checkpoint_path(options_.logdir);
    std::exception_ptr error;
    double state[2] = {0.0, 0.0};  // resumed, failed
    if (root && !path.empty()) {
      try {
        logdir_.open(options_.logdir, options_.max_checkpoint_failures);
        if (resume()) state[0] = 1.0;
      } catch (...) {
        error = std::current_exception();
        state[1] = 1.0;
      }
    }
    group.sum(state);  // every member learns whether rank 0 resumed, or failed to
    if (error) std::rethrow_exception(error);
    SEEDRL_REQUIRE(state[1] == 0.0,
                   "the learner group's rank 0 could not take its logdir or resume from its "
                   "checkpoint (its error says why)");
    resumed_ = state[0] > 0.0;
    frames_at_start_ = group.broadcast_count(resume_.counters ? resume_.counters->frames : 0);
    if (resumed_) {
      std::string normalization =
          resume_.counters ? resume_.counters->normalization : std::string();
      group.broadcast(normalization);
      if (root) {
        server_.set_training_frames(resume_.counters->frames);
        server_.episodes().set_counts(resume_.counters->episodes, 0);
        server_.episodes().restore_window(resume_.counters->episode_window, resume_.path);
      }
      server_.restore_normalization(normalization, root ? resume_.path : "rank 0's checkpoint");
    }
    learner_.join_group(group);
    learner_.set_gradient_reducer(&group_step_);
    {
      MutexLock lock(totals_mutex_);
      group_totals_.frames = frames_at_start_;
    }
  }

  // Loads the newest generation of the logdir's checkpoint that verifies (resume_); false when
  // there is none. Throws listing every generation's fault when none loads.
  bool resume() {
    resume_ = io::load_newest_generation(
        checkpoint_path(options_.logdir),
        [&](const std::string& file) { return learner_.load_checkpoint(file); });
    return resume_.counters.has_value();
  }

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

  // Only rank 0 of a group speaks.
  void say(io::MessageKind kind, std::string_view line) const {
    if (options_.messages && is_root()) options_.messages(kind, line);
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
      while (!group_stopped_) {
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
    const Totals now = totals();
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
    if (!is_root()) return;  // a group's reports are rank 0's
    const Totals now = totals();
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
  io::LoadedGeneration resume_;
  bool resumed_ = false;
  std::int64_t frames_at_start_ = 0;

  GroupStep group_step_;
  std::atomic<bool> group_stopped_{false};
  Mutex totals_mutex_;
  Totals group_totals_ SEEDRL_GUARDED_BY(totals_mutex_);

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
// sessions, compiled once in the library, are not compiled again by each program.
#include "seedrl/session/builtin_agents.hpp"        // IWYU pragma: export
#include "seedrl/session/training_session_run.hpp"  // IWYU pragma: export
