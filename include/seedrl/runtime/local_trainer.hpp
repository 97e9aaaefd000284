// train_locally: the whole SEED architecture in one process, wired and run to a frame budget.
//
//   actor threads (num_actors x envs_per_actor envs, LocalClient)
//        │ observations                      ▲ actions
//        ▼                                   │
//   InferenceServer (one thread) ──unrolls──▶ BoundedQueue ──▶ learner thread
//        ▲ reads parameters in place (SharedParameters)          │ writes them
//        └───────────────────────────────────────────────────────┘
//   this thread: progress line, metrics.csv + TensorBoard, checkpoints every N seconds
//
// With a logdir holding checkpoint.safetensors the run resumes from it: parameters, optimizer
// state, learner steps and the frame and episode counters continue. A checkpoint is also written
// at the end. Errors in any thread stop the run and are rethrown here.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "seedrl/env/environment.hpp"
#include "seedrl/io/checkpoint.hpp"
#include "seedrl/io/metrics_logger.hpp"
#include "seedrl/runtime/actor.hpp"
#include "seedrl/runtime/inference_client.hpp"
#include "seedrl/runtime/inference_server.hpp"
#include "seedrl/runtime/learner.hpp"

namespace seedrl {

struct LocalTrainerOptions {
  std::int32_t num_actors = 4;
  std::int32_t envs_per_actor = 8;
  std::int32_t evaluation_actors = 0;  ///< extra actors that act greedily and do not train
  std::int64_t total_frames = 1'000'000;
  InferenceServerOptions server = [] {
    InferenceServerOptions o;
    o.max_batch = 0;  // all environments in one batch
    return o;
  }();  ///< max_batch <= 0: all environments in one batch
  int learner_threads = 1;
  std::size_t unroll_queue_capacity = 0;  ///< 0: twice the learner batch
  std::string logdir;                     ///< empty: no files (no checkpoints, no metrics files)
  double checkpoint_seconds = 600.0;      ///< 0: only at the end
  double report_seconds = 1.0;
  io::MetricsOptions metrics;
  const std::atomic<bool>* interrupt = nullptr;  ///< set to true to stop early (e.g. from SIGINT)

  void validate() const {
    SEEDRL_REQUIRE(num_actors >= 1, "LocalTrainerOptions.num_actors must be >= 1, got ",
                   num_actors);
    SEEDRL_REQUIRE(envs_per_actor >= 1, "LocalTrainerOptions.envs_per_actor must be >= 1, got ",
                   envs_per_actor);
    SEEDRL_REQUIRE(evaluation_actors >= 0, "LocalTrainerOptions.evaluation_actors must be >= 0");
    SEEDRL_REQUIRE(total_frames >= 1, "LocalTrainerOptions.total_frames must be >= 1, got ",
                   total_frames);
    SEEDRL_REQUIRE(learner_threads >= 1, "LocalTrainerOptions.learner_threads must be >= 1");
    SEEDRL_REQUIRE(checkpoint_seconds >= 0.0,
                   "LocalTrainerOptions.checkpoint_seconds must be >= 0");
    SEEDRL_REQUIRE(report_seconds > 0.0, "LocalTrainerOptions.report_seconds must be > 0");
  }
};

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
  bool interrupted = false;
};

/// The checkpoint a trainer writes in `logdir`.
inline std::string checkpoint_path(const std::string& logdir) {
  return logdir + "/checkpoint.safetensors";
}

/// Trains `agent` on environments from `make_env(actor, env_index)` until total_frames.
template <class Agent, nn::Backend B, class MakeEnv>
TrainingResult train_locally(const Agent& agent, MakeEnv make_env,
                             const LocalTrainerOptions& options) {
  using Env = std::invoke_result_t<MakeEnv, std::int32_t, std::int32_t>;
  static_assert(Environment<Env>, "make_env must return an Environment");
  options.validate();
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };

  const Env probe = make_env(0, 0);
  const TensorSpec observation_spec = probe.observation_spec();
  const ActionSpec action_spec = probe.action_spec();
  const std::int32_t total_actors = options.num_actors + options.evaluation_actors;
  InferenceServerOptions server_options = options.server;
  if (server_options.max_batch <= 0)
    server_options.max_batch = total_actors * options.envs_per_actor;
  server_options.max_slots =
      std::max(server_options.max_slots, total_actors * options.envs_per_actor);
  const std::size_t queue_capacity = options.unroll_queue_capacity > 0
                                         ? options.unroll_queue_capacity
                                         : static_cast<std::size_t>(2 * agent.options().batch_size);

  UnrollQueue unrolls(queue_capacity);
  const UnrollSpec spec = make_unroll_spec(agent, observation_spec, action_spec, server_options);
  Learner<Agent, B> learner(agent, spec, unrolls);
  InferenceServer<Agent, B> server(agent, learner.parameters(), unrolls, observation_spec,
                                   action_spec, server_options);

  TrainingResult result;
  std::int64_t frames_at_start = 0;
  if (!options.logdir.empty()) {
    std::filesystem::create_directories(options.logdir);
    const std::string path = checkpoint_path(options.logdir);
    if (std::filesystem::exists(path)) {
      const io::CheckpointCounters counters = learner.load_checkpoint(path);
      server.set_training_frames(counters.frames);
      server.episodes().set_counts(counters.episodes, 0);
      frames_at_start = counters.frames;
      result.resumed = true;
      std::fprintf(stderr, "resumed from %s at frame %lld, learner step %lld\n", path.c_str(),
                   static_cast<long long>(counters.frames),
                   static_cast<long long>(counters.learner_steps));
    }
  }
  io::MetricsLogger metrics(options.logdir, options.metrics);

  // Errors from worker threads end the run and are rethrown below.
  std::mutex error_mutex;
  std::exception_ptr error;
  std::atomic<bool> failed{false};
  auto record_error = [&](std::exception_ptr e) {
    std::lock_guard lock(error_mutex);
    if (!error) error = e;
    failed = true;
  };

  server.start();
  std::vector<std::unique_ptr<Actor<Env, LocalClient>>> actors;
  for (std::int32_t a = 0; a < total_actors; ++a) {
    std::vector<Env> envs;
    for (std::int32_t e = 0; e < options.envs_per_actor; ++e) envs.push_back(make_env(a, e));
    ActorOptions actor_options;
    actor_options.evaluation = a >= options.num_actors;
    actor_options.first_slot = a * options.envs_per_actor;
    actors.push_back(std::make_unique<Actor<Env, LocalClient>>(std::move(envs), LocalClient(server),
                                                               actor_options));
  }
  std::vector<std::thread> threads;
  for (auto& actor : actors) {
    threads.emplace_back([&, a = actor.get()] {
      try {
        a->run();
      } catch (...) {
        record_error(std::current_exception());
      }
    });
  }

  // The learner thread publishes running sums that the reporting loop averages and resets.
  std::mutex learner_mutex;
  LearnerStepStats sums, last;
  std::int64_t summed_steps = 0;
  std::thread learner_thread([&] {
    try {
      if constexpr (requires { B::set_num_threads(1); })
        B::set_num_threads(options.learner_threads);
      while (std::optional<LearnerStepStats> s = learner.step()) {
        std::lock_guard lock(learner_mutex);
        last = *s;
        sums.total_loss += s->total_loss;
        sums.policy_loss += s->policy_loss;
        sums.baseline_loss += s->baseline_loss;
        sums.entropy_loss += s->entropy_loss;
        sums.entropy += s->entropy;
        sums.grad_norm += s->grad_norm;
        sums.policy_lag += s->policy_lag;
        ++summed_steps;
      }
    } catch (...) {
      record_error(std::current_exception());
    }
  });

  auto last_checkpoint = std::chrono::steady_clock::now();
  auto last_report = start;
  std::int64_t last_report_frames = frames_at_start, last_report_steps = learner.steps();
  auto save = [&] {
    if (options.logdir.empty()) return;
    learner.save_checkpoint(checkpoint_path(options.logdir),
                            {server.training_frames(), 0, server.episodes().summary().episodes});
    last_checkpoint = std::chrono::steady_clock::now();
  };
  auto report = [&] {
    const auto now = std::chrono::steady_clock::now();
    const double dt = std::max(1e-9, std::chrono::duration<double>(now - last_report).count());
    const std::int64_t frames = server.training_frames();
    const EpisodeSummary episodes = server.episodes().summary();
    LearnerStepStats mean;
    std::int64_t steps_now = 0, n = 0;
    {
      std::lock_guard lock(learner_mutex);
      n = std::max<std::int64_t>(summed_steps, 1);
      mean = sums;
      mean.learning_rate = last.learning_rate;
      steps_now = last.step;
      sums = {};
      summed_steps = 0;
    }
    const auto k = static_cast<double>(n);
    const double fps = static_cast<double>(frames - last_report_frames) / dt;
    const double steps_per_s = static_cast<double>(steps_now - last_report_steps) / dt;
    last_report = now;
    last_report_frames = frames;
    last_report_steps = std::max(steps_now, last_report_steps);
    const io::Scalar row[] = {{"seconds", elapsed()},
                              {"fps", fps},
                              {"episodes", static_cast<double>(episodes.episodes)},
                              {"mean_return", episodes.mean_return},
                              {"mean_episode_length", episodes.mean_length},
                              {"evaluation_mean_return", episodes.evaluation_mean_return},
                              {"learner_steps", static_cast<double>(learner.steps())},
                              {"learner_steps_per_s", steps_per_s},
                              {"total_loss", mean.total_loss / k},
                              {"policy_loss", mean.policy_loss / k},
                              {"baseline_loss", mean.baseline_loss / k},
                              {"entropy_loss", mean.entropy_loss / k},
                              {"entropy", mean.entropy / k},
                              {"grad_norm", mean.grad_norm / k},
                              {"learning_rate", mean.learning_rate},
                              {"policy_lag", mean.policy_lag / k},
                              {"inference_batch", server.stats().mean_batch_size()}};
    metrics.log(frames, row);
    char line[320];
    std::snprintf(line, sizeof line,
                  "frames %lld/%lld | %.0f fps | episodes %lld | return %.2f | loss %.4f | entropy "
                  "%.3f | steps %lld "
                  "(%.1f/s) | lag %.1f",
                  static_cast<long long>(frames), static_cast<long long>(options.total_frames), fps,
                  static_cast<long long>(episodes.episodes), episodes.mean_return,
                  mean.total_loss / k, mean.entropy / k, static_cast<long long>(learner.steps()),
                  steps_per_s, mean.policy_lag / k);
    metrics.progress(line);
  };

  const auto period = std::chrono::duration<double>(options.report_seconds);
  while (!failed && server.training_frames() < options.total_frames &&
         !(options.interrupt && options.interrupt->load())) {
    std::this_thread::sleep_for(std::min(period, std::chrono::duration<double>(0.05)));
    if (std::chrono::steady_clock::now() - last_report >= period) report();
    if (options.checkpoint_seconds > 0.0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - last_checkpoint).count() >=
            options.checkpoint_seconds) {
      save();
    }
  }
  result.interrupted = options.interrupt && options.interrupt->load();

  for (auto& actor : actors) actor->stop();
  server.stop();  // wakes the actors, closes the unroll queue: the learner drains it and ends
  for (std::thread& t : threads) t.join();
  learner_thread.join();
  if (error) {
    metrics.finish();
    std::rethrow_exception(error);
  }
  report();
  metrics.finish();
  save();

  const EpisodeSummary episodes = server.episodes().summary();
  result.seconds = elapsed();
  result.frames = server.training_frames();
  result.frames_this_run = result.frames - frames_at_start;
  result.fps = static_cast<double>(result.frames_this_run) / std::max(result.seconds, 1e-9);
  result.episodes = episodes.episodes;
  result.mean_return = episodes.mean_return;
  result.evaluation_mean_return = episodes.evaluation_mean_return;
  result.learner_steps = learner.steps();
  return result;
}

}  // namespace seedrl
