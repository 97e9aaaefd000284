// GroupScope: a TrainingSession as one member of a learner group (TrainingSessionOptions::group,
// e.g. seedrl::mpi::LearnerGroup; see "Groups" at the top of session/training_session.hpp). It
// is the learner's gradient reducer: every learner step averages the members' gradients, then
// sums their frame and episode counters and a stop vote (the interrupt flag), and now and then
// checks that the members still hold identical parameters.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/session/run_scope.hpp"

namespace seedrl {

/// The options a member's session runs with: members sample actions from streams of their own.
inline TrainingSessionOptions member_options(const TrainingSessionOptions& options) {
  TrainingSessionOptions o = options;
  if (o.group && o.group->rank() > 0)
    o.server.seed += 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(o.group->rank());
  return o;
}

template <Agent A, nn::Backend B>
class GroupScope final : public RunScope<A, B>, public GradientReducer {
  using RunScope<A, B>::parts_;

 public:
  GroupScope(TrainingGroup& group, const SessionParts<A, B>& parts)
      : RunScope<A, B>(parts), group_(group) {}

  // Collective: rank 0 resumes from its checkpoint (if any) and the group takes its state. Rank
  // 0's frames and episodes carry the resumed counts (the group's totals are sums); every member
  // takes its observation statistics.
  RunStart start() override {
    const bool root = group_.rank() == 0;
    RunStart s;
    std::exception_ptr error;
    double state[2] = {0.0, 0.0};  // resumed, failed
    if (root && !parts_.options.logdir.empty()) {
      try {
        s.checkpoint = parts_.open_and_resume();
        if (s.checkpoint.counters) state[0] = 1.0;
      } catch (...) {
        error = std::current_exception();
        state[1] = 1.0;
      }
    }
    group_.sum(state);  // every member learns whether rank 0 resumed, or failed to
    if (error) std::rethrow_exception(error);
    SEEDRL_REQUIRE(state[1] == 0.0,
                   "the learner group's rank 0 could not take its logdir or resume from its "
                   "checkpoint (its error says why)");
    s.resumed = state[0] > 0.0;
    s.frames = group_.broadcast_count(s.checkpoint.counters ? s.checkpoint.counters->frames : 0);
    if (s.resumed) {
      std::string normalization =
          s.checkpoint.counters ? s.checkpoint.counters->normalization : std::string();
      group_.broadcast(normalization);
      if (root) parts_.restore_counters(*s.checkpoint.counters, s.checkpoint.path);
      parts_.server.restore_normalization(normalization,
                                          root ? s.checkpoint.path : "rank 0's checkpoint");
    }
    parts_.learner.join_group(group_);
    parts_.learner.set_gradient_reducer(this);
    MutexLock lock(totals_mutex_);
    totals_.frames = s.frames;
    return s;
  }

  bool speaks() const override { return group_.rank() == 0; }
  std::optional<std::string> setup_line() const override {
    return str_cat("learner group of ", group_.size(),
                   " members: frames, fps and episodes below are the group's");
  }
  bool stopping() override { return stopped_.load(); }
  bool stop_learning_now() const override { return stopped_.load(); }
  RunTotals totals() override SEEDRL_EXCLUDES(totals_mutex_) {
    MutexLock lock(totals_mutex_);
    return totals_;
  }
  bool ended_early() override { return totals().frames < parts_.options.total_frames; }
  // An error on one member ends the group: the others cannot finish without it.
  void failed(const std::exception_ptr& error) override { group_.abort(describe_exception(error)); }
  void finish() override { exchange_totals(false); }  // every member's last counts
  void describe(TrainingResult& result) const override {
    result.ranks = group_.size();
    result.rank = group_.rank();
  }

  // The learner's reducer: the group's mean gradient, then the counters and the stop vote (one
  // small sum), then now and then the check that the members have not diverged.
  void all_reduce(const Tensor& gradients, bool finite) override {
    all_reduce_step(std::span<const Tensor>(&gradients, 1), finite);
  }
  void all_reduce_step(std::span<const Tensor> gradients, bool finite) override {
    group_.all_reduce_step(gradients, finite);
    exchange_totals(parts_.interrupted());
    ++reductions_;
    const std::int64_t every = parts_.options.group_check_steps;
    if (every > 0 && reductions_ % every == 0) {
      // The networks before this step's update: identical wherever the group is healthy.
      for (const auto& [name, values] : parts_.learner.networks().values())
        group_.check_identical(
            values, str_cat("the parameters of network '", name, "' (checked at learner step ",
                            parts_.learner.steps(), ")"));
    }
  }

 private:
  // Collective: sums every member's counters into totals_, with `stop_vote` as this member's vote
  // to stop; the group stops once its frames reach the budget or anyone voted.
  void exchange_totals(bool stop_vote) SEEDRL_EXCLUDES(totals_mutex_) {
    GroupCounters counters = GroupCounters::of(parts_.server.training_frames(),
                                               parts_.server.episodes().summary(), stop_vote);
    group_.sum(counters.values());
    const RunTotals t = counters.totals();
    {
      MutexLock lock(totals_mutex_);
      totals_ = t;
    }
    if (counters.stop_voted() || t.frames >= parts_.options.total_frames) stopped_ = true;
  }

  TrainingGroup& group_;
  std::int64_t reductions_ = 0;  // the learner thread's
  std::atomic<bool> stopped_{false};
  Mutex totals_mutex_;
  RunTotals totals_ SEEDRL_GUARDED_BY(totals_mutex_);
};

/// The scope of a session with these parts: a group member's when options.group is set.
template <Agent A, nn::Backend B>
std::unique_ptr<RunScope<A, B>> make_run_scope(const SessionParts<A, B>& parts) {
  if (parts.options.group) return std::make_unique<GroupScope<A, B>>(*parts.options.group, parts);
  return std::make_unique<SoloScope<A, B>>(parts);
}

}  // namespace seedrl
