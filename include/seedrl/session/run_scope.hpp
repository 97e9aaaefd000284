// RunScope: what a TrainingSession's run counts, stops on and ends with. A session trains alone
// (SoloScope, here) or as one member of a learner group (GroupScope, session/group_scope.hpp);
// the session itself is the same either way and asks its scope at each of these points:
//
//   construction   start(): resume from the logdir's checkpoint (alone), or join the group
//   run loop       stopping(), totals() for reports and checkpoints, speaks() for who writes
//   learner loop   stop_learning_now(): a group's members stop after the same step, undrained
//   the end        failed(error), ended_early(), finish(), describe(result)
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <string>

#include "seedrl/agent/agent.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/inference/inference_server.hpp"
#include "seedrl/io/checkpoint.hpp"
#include "seedrl/learner/learner.hpp"
#include "seedrl/learner/training_group.hpp"
#include "seedrl/session/group_counters.hpp"
#include "seedrl/session/run_logdir.hpp"
#include "seedrl/session/run_report.hpp"
#include "seedrl/session/session_options.hpp"

namespace seedrl {

/// The parts of a TrainingSession that its scope works on (the session owns them all).
template <Agent A, nn::Backend B>
struct SessionParts {
  const TrainingSessionOptions& options;
  RunLogdir& logdir;
  InferenceServer<A, B>& server;
  Learner<A, B>& learner;

  bool interrupted() const { return options.interrupt && options.interrupt->load(); }

  /// Takes the logdir and loads the newest generation of its checkpoint that verifies into the
  /// learner (none: an empty LoadedGeneration). Throws listing every generation's fault when
  /// none loads.
  io::LoadedGeneration open_and_resume() const {
    logdir.open(options.logdir, options.max_checkpoint_failures);
    return io::load_newest_generation(
        checkpoint_path(options.logdir),
        [&](const std::string& file) { return learner.load_checkpoint(file); });
  }

  /// A resumed run's frame and episode counters and its window of recent episodes, into the
  /// server (`where`: the checkpoint they came from, for errors).
  void restore_counters(const io::CheckpointCounters& counters, const std::string& where) const {
    server.set_training_frames(counters.frames);
    server.episodes().set_counts(counters.episodes, 0);
    server.episodes().restore_window(counters.episode_window, where);
  }
};

/// Where a run starts: the checkpoint it resumed from (none: an empty path and no counters) and
/// its frames then (with a group: the group's).
struct RunStart {
  io::LoadedGeneration checkpoint;
  bool resumed = false;
  std::int64_t frames = 0;
};

template <Agent A, nn::Backend B>
class RunScope {
 public:
  explicit RunScope(const SessionParts<A, B>& parts) : parts_(parts) {}
  virtual ~RunScope() = default;
  RunScope(const RunScope&) = delete;
  RunScope& operator=(const RunScope&) = delete;

  /// At the session's construction: resumes from the logdir's checkpoint if there is one (in a
  /// group: rank 0 does, and every member takes its state; collective).
  virtual RunStart start() = 0;
  /// Whether this session writes the run's files and says its lines (alone, or rank 0).
  virtual bool speaks() const = 0;
  /// A line on how the run is set up (a group's size; independent copies under a launcher).
  virtual std::optional<std::string> setup_line() const = 0;
  /// Whether the run loop ends now: the frame budget or the interrupt flag (a group: its vote).
  virtual bool stopping() = 0;
  /// Whether the learner stops before it has drained the unroll queue (a group's members stop
  /// after the same step: one that trained a batch more would wait for the others forever).
  virtual bool stop_learning_now() const = 0;
  /// The run's counters (a group's: as of the last exchange).
  virtual RunTotals totals() = 0;
  /// Whether the run ended before its frames (interrupted).
  virtual bool ended_early() = 0;
  /// The run has failed with `error` (a group aborts every member; alone the session rethrows).
  virtual void failed(const std::exception_ptr& error) = 0;
  /// After the learner has stopped and before the last report (a group's last counts).
  virtual void finish() = 0;
  /// What the scope adds to the run's result (a group's size and this member's rank).
  virtual void describe(TrainingResult& result) const = 0;

 protected:
  SessionParts<A, B> parts_;
};

/// A session that trains alone.
template <Agent A, nn::Backend B>
class SoloScope final : public RunScope<A, B> {
  using RunScope<A, B>::parts_;

 public:
  using RunScope<A, B>::RunScope;

  RunStart start() override {
    RunStart s;
    if (parts_.options.logdir.empty()) return s;
    s.checkpoint = parts_.open_and_resume();
    if (!s.checkpoint.counters) return s;
    const io::CheckpointCounters& counters = *s.checkpoint.counters;
    s.resumed = true;
    s.frames = counters.frames;
    parts_.restore_counters(counters, s.checkpoint.path);
    parts_.server.restore_normalization(counters.normalization, s.checkpoint.path);
    return s;
  }
  bool speaks() const override { return true; }
  std::optional<std::string> setup_line() const override {
    if (const int processes = launched_processes(); processes > 1)
      return str_cat("warning: an MPI launcher started ", processes,
                     " copies of this program, but this session trains alone (no "
                     "TrainingSessionOptions::group): they are independent runs");
    return std::nullopt;
  }
  bool stopping() override {
    return parts_.server.training_frames() >= parts_.options.total_frames || parts_.interrupted();
  }
  bool stop_learning_now() const override { return false; }
  RunTotals totals() override {
    return {parts_.server.training_frames(), parts_.server.episodes().summary()};
  }
  bool ended_early() override {
    return parts_.interrupted() && totals().frames < parts_.options.total_frames;
  }
  void failed(const std::exception_ptr&) override {}
  void finish() override {}
  void describe(TrainingResult&) const override {}
};

}  // namespace seedrl
