// TrainingSession's constructor (resume), run() (the shutdown order at the top of
// training_session.hpp) and destructor. They are defined out of the class, not inline, so that
// the explicit instantiations of the built-in agents' sessions (session/builtin_agents.hpp,
// compiled once in the library) keep programs from compiling the runtime again.
#pragma once

#include <algorithm>
#include <chrono>
#include <exception>
#include <string>
#include <thread>

#include "seedrl/session/training_session.hpp"

namespace seedrl {

template <Agent A, nn::Backend B>
TrainingSession<A, B>::TrainingSession(const A& agent, const StepSpec& spec,
                                       const TrainingSessionOptions& options)
    : options_((options.validate(), member_options(options))),
      unrolls_(options.unroll_queue_capacity > 0
                   ? options.unroll_queue_capacity
                   : static_cast<std::size_t>(queued_batches() * agent.options().batch_size)),
      learner_(agent, make_unroll_spec(agent, spec, options.server), unrolls_),
      server_(agent, learner_.parameters(), unrolls_, spec, options_.server),
      learner_metrics_(learner_.metric_schema()) {
  const int micro_batches = options_.effective_micro_batches();
  if constexpr (requires { learner_.set_workers(1, 1); }) {
    learner_.set_workers(options_.learner_workers, micro_batches);
  } else {
    SEEDRL_REQUIRE(options_.learner_workers == 1 && micro_batches == 1,
                   "TrainingSessionOptions: this learner has no workers or micro-batches; "
                   "learner_workers and micro_batches must be 1");
  }
  scope_ = make_run_scope(SessionParts<A, B>{options_, logdir_, server_, learner_});
  begun_ = scope_->start();
}

template <Agent A, nn::Backend B>
TrainingResult TrainingSession<A, B>::run(const TrainingHooks& hooks) {
  start_ = std::chrono::steady_clock::now();
  io::MetricsLogger files(logdir_.path(), options_.metrics,
                          [this](const std::string& line) { say(io::MessageKind::info, line); });
  io::RunInfo info = options_.run_info;
  info.insert(info.begin(), {"agent", std::string(A::kName)});
  files.write_run_info(info);
  say(io::MessageKind::info, run_line(info));
  if (const auto note = logdir_.describe()) say(io::MessageKind::info, *note);
  for (const std::string& note : begun_.checkpoint.notes) say(io::MessageKind::info, note);
  if (begun_.checkpoint.counters)
    say(io::MessageKind::info, resume_line(begun_.checkpoint.path, *begun_.checkpoint.counters));
  if (const auto line = scope_->setup_line()) say(io::MessageKind::info, *line);
  server_.start();
  std::thread learner_thread([this] { learn(); });

  last_checkpoint_ = start_;
  report_.start(start_, frames_at_start(), learner_.steps());
  const auto period = std::chrono::duration<double>(options_.report_seconds);
  while (!failed_ && !scope_->stopping()) {
    std::this_thread::sleep_for(std::min(period, std::chrono::duration<double>(0.05)));
    const auto now = std::chrono::steady_clock::now();
    // What either throws ends the run (the learner thread joins), never the process.
    try {
      if (now - report_.last() >= period) report(files, hooks, io::MessageKind::progress);
      if (options_.checkpoint_seconds > 0.0 &&
          std::chrono::duration<double>(now - last_checkpoint_).count() >=
              options_.checkpoint_seconds)
        save(hooks);
    } catch (...) {
      report_error(std::current_exception());
    }
  }
  // A member's error ends the group here: the others cannot finish without it.
  if (failed_) scope_->failed(first_error());
  const bool interrupted_early = scope_->ended_early();
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
    scope_->failed(error);
    std::rethrow_exception(error);
  }
  scope_->finish();  // a group's last counts (collective)
  report(files, hooks, io::MessageKind::done);
  files.flush();
  // The final checkpoint is what a resume starts from: a disk that is full now may have room
  // in a moment. Until max_checkpoint_failures in a row, which throws.
  while (!save(hooks)) std::this_thread::sleep_for(kFinalCheckpointRetry);
  if (!options_.export_onnx.empty() && scope_->speaks()) {
    io::export_onnx(learner_.network(), options_.export_onnx,
                    run_onnx_options(server_.normalization_text(), server_.step_spec(),
                                     learner_.policy_metadata()));
    say(io::MessageKind::info, str_cat("exported the network as ONNX: ", options_.export_onnx));
  }

  TrainingResult result = training_result(scope_->totals(), frames_at_start(), elapsed(),
                                          learner_.steps(), resumed(), interrupted_early);
  scope_->describe(result);
  return result;
}

template <Agent A, nn::Backend B>
TrainingSession<A, B>::~TrainingSession() = default;

}  // namespace seedrl
