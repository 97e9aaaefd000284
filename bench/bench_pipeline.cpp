// bench_pipeline: a whole training run against the machine's compute limit for it, measured in
// the same run.
//
//   bench_pipeline [vtrace-minatar | r2d2-minatar | vtrace-nature | ppo-pendulum] [options]
//                  [--seconds 20] [--warmup 4] [--cores N]
//
// Without a configuration it measures all four, each with its example's defaults (the same
// recipes the examples take their defaults from: seedrl/recipes/); after a configuration
// every option of its example can be changed (--threads, --inference-threads, --actors,
// --envs-per-actor, --batch, ...).
//
// (a) The pipeline: train_locally with those settings, frames per second over the window from
//     --warmup seconds (and the first learner step) to --warmup + --seconds.
// (b) The compute limit: the work each frame needs, each part timed alone on one thread at the
//     sizes the pipeline used: the learner's step (per frame it trains: batch x unroll frames;
//     R2D2: inserting the sequence, its priorities, plus replay_ratio sampled trainings of it),
//     the inference forward at the pipeline's mean inference batch, and one environment step.
//     limit = cores / (learner + inference + environment seconds per frame).
// Printed as JSON lines: {"bench":"pipeline", config, fps, limit_fps, ratio, the per-frame
// costs}, and {"bench":"pipeline_breakdown", ...}: where each core's time went over the window,
// by thread (from /proc: time on a core, time runnable but waiting for one, time blocked), and
// the time the learner and inference waited for the parameters' lock.
//
// vtrace-nature steps a synthetic environment of Atari's shape (4 x 84 x 84 u8 frames, 18
// actions, an episode every 2,000 steps), whose own cost is a 28 KB frame shift per step.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "seedrl/cli/train.hpp"
#include "seedrl/core/float_mode.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/env/minatar/breakout.hpp"
#include "seedrl/env/pendulum.hpp"
#include "seedrl/recipes/minatar.hpp"
#include "support/bench_util.hpp"
#include "support/synthetic_atari.hpp"
#include "support/thread_times.hpp"
#include "support/unrolls.hpp"

namespace {

using namespace seedrl;
using Backend = cpu::Backend;
using bench::GroupTime;
using bench::Json;
using bench::now_seconds;
using bench::SyntheticAtari;
using bench::thread_times;
using bench::ThreadTime;
using bench::window_times;

// ---- (a) The pipeline ----

struct PipelineFigures {
  double fps = 0.0, seconds = 0.0, inference_batch = 0.0;
  double learner_steps_per_s = 0.0;
  double learner_lock_wait = 0.0, inference_lock_wait = 0.0;  // seconds in the window
  std::map<std::string, GroupTime> threads;
  std::optional<double> mean_return;
};

double scalar(const RunReport::Row& row, std::string_view name) {
  for (const io::Scalar& s : row.scalars)
    if (s.first == name) return s.second;
  return std::nan("");
}

// train_locally until `warmup + seconds` (the window starting at the first report after
// `warmup` seconds that follows a learner step), with reports every half second.
template <class AgentT, class MakeEnv>
PipelineFigures run_pipeline(const AgentT& agent, LocalTrainerOptions run, MakeEnv make_env,
                             double warmup, double seconds) {
  std::atomic<bool> stop{false};
  struct Mark {
    double time = 0.0, frames = 0.0, steps = 0.0, learner_wait = 0.0, inference_wait = 0.0,
           batch_sum = 0.0;
    int reports = 0;
    std::map<int, ThreadTime> threads;
  };
  std::optional<Mark> start;
  Mark last;
  const double begin = now_seconds();
  run.total_frames = std::int64_t{1} << 50;
  run.interrupt = &stop;
  run.report_seconds = 0.5;
  run.messages = nullptr;
  run.checkpoint_seconds = 0;
  run.on_report = [&](const RunReport::Row& row) {
    const double t = now_seconds();
    Mark m{t,
           static_cast<double>(row.frames),
           static_cast<double>(row.learner_steps),
           scalar(row, "learner_lock_wait_s"),
           scalar(row, "inference_lock_wait_s"),
           last.batch_sum + scalar(row, "inference_batch"),
           last.reports + 1,
           {}};
    if (!start && t - begin >= warmup && row.learner_steps > 0) {
      m.threads = thread_times();
      start = m;
    } else if (start && t - start->time >= seconds && !stop) {
      m.threads = thread_times();
      stop = true;
    }
    if (!stop || last.threads.empty()) last = m;
  };
  const TrainingResult result = train_locally<AgentT, Backend>(agent, make_env, run);
  if (!start) throw Error("the pipeline took no learner step within the run");
  PipelineFigures f;
  f.seconds = last.time - start->time;
  f.fps = (last.frames - start->frames) / f.seconds;
  f.learner_steps_per_s = (last.steps - start->steps) / f.seconds;
  f.learner_lock_wait = last.learner_wait - start->learner_wait;
  f.inference_lock_wait = last.inference_wait - start->inference_wait;
  f.inference_batch = (last.batch_sum - start->batch_sum) / (last.reports - start->reports);
  f.threads = window_times(start->threads, last.threads, f.seconds);
  f.mean_return = result.mean_return;
  return f;
}

// ---- (b) The compute limit: each part alone, on one thread ----

struct FrameCosts {
  double learner = 0.0, inference = 0.0, environment = 0.0;  // seconds per frame, one core
  double total() const { return learner + inference + environment; }
};

// One environment step (random actions, resets included), per frame.
template <class Env>
double environment_cost(Env env, double seconds) {
  const TensorSpec spec = env.observation_spec();
  const Tensor observation = Tensor::empty(spec.shape, spec.dtype);
  env.reset(observation);
  Rng rng(7);
  const ActionSpec actions = env.action_spec();
  std::vector<float> box(static_cast<std::size_t>(actions.is_box() ? actions.dims() : 0), 0.0f);
  constexpr int kSteps = 1000;
  return bench::time_per_call(
             [&] {
               for (int i = 0; i < kSteps; ++i) {
                 StepResult r;
                 if constexpr (BoxEnvironment<Env>) {
                   for (float& a : box) a = static_cast<float>(rng.uniform(-1, 1));
                   r = env.step(std::span<const float>(box), observation);
                 } else {
                   r = env.step(static_cast<std::int32_t>(
                                    rng.below(static_cast<std::uint64_t>(actions.num_actions))),
                                observation);
                 }
                 if (r.terminated || r.truncated) env.reset(observation);
               }
             },
             seconds) /
         kSteps;
}

// The network's forward at the pipeline's inference batch, per frame.
double inference_cost(const nn::NetworkOptions& config, const TensorSpec& observation,
                      double mean_batch, double seconds) {
  const std::int64_t batch = std::max<std::int64_t>(1, std::llround(mean_batch));
  nn::Network<Backend> network(config);
  const Tensor observations =
      Tensor::zeros(observation.shape.prepend({1, batch}), observation.dtype);
  nn::LstmState state;
  if (config.lstm_size > 0)
    state = {Tensor::zeros({batch, config.lstm_size}), Tensor::zeros({batch, config.lstm_size})};
  const Tensor resets = Tensor::zeros({1, batch}, DType::u8);
  return bench::time_per_call([&] { network.forward(observations, state, resets); }, seconds) /
         static_cast<double>(batch);
}

// V-trace and PPO: train_on a batch of random unrolls, per frame trained (batch x unroll).
// With `workers` and `micro_batches` other than 1 (the session's learner_workers and
// micro_batches), wall-clock seconds of the step on those threads, per frame.
template <class AgentT>
double learner_cost(const AgentT& agent, const UnrollSpec& spec, double seconds, int workers = 1,
                    int micro_batches = 1) {
  UnrollQueue unused(1);
  Learner<AgentT, Backend> learner(agent, spec, unused);
  if (workers != 1 || micro_batches != 1) learner.set_workers(workers, micro_batches);
  Rng rng(3);
  const std::int64_t batch = agent.options().batch_size;
  const auto unrolls = bench::random_unrolls(spec, batch, rng);
  const double per_step = bench::time_per_call(
      [&] {
        // Fresh data, as the pipeline's (PPO drops unrolls older than max_policy_lag).
        for (const auto& u : unrolls)
          u->policy_versions.flat<std::int32_t>().setConstant(
              static_cast<std::int32_t>(learner.steps()));
        learner.train_on(unrolls);
      },
      seconds);
  return per_step / static_cast<double>(batch * (spec.length - spec.overlap));
}

// R2D2: inserting a batch of sequences (their priorities) plus replay_ratio sampled steps per
// inserted batch, per new frame (batch x unroll).
double learner_cost(const R2D2Agent& agent, const UnrollSpec& spec, double seconds, int workers = 1,
                    int micro_batches = 1) {
  UnrollQueue unused(1);
  Learner<R2D2Agent, Backend> learner(agent, spec, unused);
  if (workers != 1 || micro_batches != 1) learner.set_workers(workers, micro_batches);
  Rng rng(3);
  const std::int64_t batch = agent.options().batch_size;
  for (int i = 0; i < 8; ++i) {
    auto sequences = bench::random_unrolls(spec, batch, rng);
    learner.insert(sequences);
  }
  const auto fresh = bench::random_unrolls(spec, batch, rng);
  const double insert = bench::time_per_call(
      [&] {
        std::vector<std::unique_ptr<Unroll>> copies;
        for (const auto& u : fresh) copies.push_back(std::make_unique<Unroll>(*u));
        learner.insert(copies);
      },
      seconds / 2);
  const double train = bench::time_per_call([&] { learner.train_on_sample(); }, seconds / 2);
  const double new_frames = static_cast<double>(batch * (spec.length - spec.overlap));
  return (insert + agent.options().replay_ratio * train) / new_frames;
}

// ---- One configuration: (a), (b), the JSON lines ----

struct Settings {
  double seconds = 20.0, warmup = 4.0;
  int cores = static_cast<int>(std::thread::hardware_concurrency());
};

template <class AgentT, class MakeEnv>
void measure(const std::string& name, const AgentT& agent, LocalTrainerOptions run,
             MakeEnv make_env, const Settings& settings) {
  std::fprintf(stderr, "bench_pipeline: %s: the pipeline for %.0f s after %.0f s of warm-up...\n",
               name.c_str(), settings.seconds, settings.warmup);
  const PipelineFigures pipeline = run_pipeline(
      agent, run,
      [&](std::int32_t a, std::int32_t e) { return make_env(seedrl::environment_seed(1, a, e)); },
      settings.warmup, settings.seconds);

  std::fprintf(stderr, "bench_pipeline: %s: each part alone on one thread...\n", name.c_str());
  set_flush_denormals(true);  // as the session's threads do
  Backend::set_num_threads(1);
  const auto probe = make_env(1);
  const TensorSpec observation = probe.observation_spec();
  const UnrollSpec spec =
      make_unroll_spec(agent, observation, probe.action_spec(), run.session().server);
  const double part = std::max(1.0, settings.seconds / 10);
  FrameCosts cost;
  cost.environment = environment_cost(make_env(2), part);
  cost.inference =
      inference_cost(agent.network_config(), observation, pipeline.inference_batch, part);
  cost.learner = learner_cost(agent, spec, part);
  const double limit = settings.cores / cost.total();
  // The learner alone with the run's workers and micro-batches, wall clock.
  const TrainingSessionOptions session = run.session();
  const int micro_batches = session.effective_micro_batches();
  double learner_workers_cost = cost.learner;
  if (session.learner_workers != 1 || micro_batches != 1)
    learner_workers_cost = learner_cost(agent, spec, part, session.learner_workers, micro_batches);

  Json line;
  line.add("bench", "pipeline")
      .add("config", name)
      .add("fps", pipeline.fps)
      .add("limit_fps", limit)
      .add("ratio", pipeline.fps / limit)
      .add("cores", settings.cores)
      .add("learner_threads", run.learner_threads)
      .add("learner_workers", session.learner_workers)
      .add("micro_batches", micro_batches)
      .add("inference_threads", run.server.threads)
      .add("actors", run.num_actors)
      .add("envs_per_actor", run.envs_per_actor)
      .add("batch", static_cast<long long>(agent.options().batch_size))
      .add("unroll", static_cast<long long>(run.server.unroll_length))
      .add("inference_batch", pipeline.inference_batch)
      .add("learner_us_per_frame", cost.learner * 1e6)
      .add("learner_workers_us_per_frame", learner_workers_cost * 1e6)
      .add("inference_us_per_frame", cost.inference * 1e6)
      .add("environment_us_per_frame", cost.environment * 1e6)
      .add("learner_steps_per_s", pipeline.learner_steps_per_s)
      .add("window_s", pipeline.seconds);
  line.print();

  Json breakdown;
  breakdown.add("bench", "pipeline_breakdown").add("config", name);
  double on_core = 0.0;
  for (const auto& [group, t] : pipeline.threads) {
    Json g;
    g.add("threads", t.threads)
        .add("on_core_s", t.on_core)
        .add("waiting_for_core_s", t.waiting_for_core)
        .add("blocked_s", t.blocked);
    breakdown.raw(group, g.str());
    on_core += t.on_core;
  }
  breakdown.add("window_s", pipeline.seconds)
      .add("idle_core_s", std::max(0.0, settings.cores * pipeline.seconds - on_core))
      .add("learner_lock_wait_s", pipeline.learner_lock_wait)
      .add("inference_lock_wait_s", pipeline.inference_lock_wait);
  breakdown.print();
}

}  // namespace

int main(int argc, char** argv) {
  cli::CommandLine app("The whole training pipeline against its compute limit, in the same run");
  Settings settings;
  app.option("--seconds", settings.seconds, "pipeline window to measure").positive();
  app.option("--warmup", settings.warmup, "seconds before the window").non_negative();
  app.option("--cores", settings.cores, "cores the limit divides the work over").range(1, 4096);

  // The examples' recipes (seedrl/recipes/): what minatar_vtrace, minatar_r2d2 and pendulum_ppo
  // run without flags.
  cli::VTraceCli minatar_vtrace(recipes::minatar_vtrace()), nature_vtrace = minatar_vtrace;
  cli::R2D2Cli minatar_r2d2(recipes::minatar_r2d2());
  cli::PpoCli pendulum_ppo(recipes::pendulum_ppo());
  LocalTrainerOptions minatar_vtrace_run = recipes::minatar_vtrace().run,
                      nature_run = minatar_vtrace_run, r2d2_run = recipes::minatar_r2d2().run,
                      ppo_run = recipes::pendulum_ppo().run;
  // The Nature CNN: the MinAtar example's agent, 4 actors x 8 environments, batch 8 x 20.
  nature_run.envs_per_actor = 8;

  cli::CommandLine* a =
      &app.subcommand("vtrace-minatar", "V-trace, MinAtar Breakout (minatar_vtrace)");
  minatar_vtrace.add_options(*a, minatar_vtrace_run);
  cli::add_actor_options(*a, minatar_vtrace_run, 1024);
  cli::CommandLine* b = &app.subcommand("r2d2-minatar", "R2D2, MinAtar Breakout (minatar_r2d2)");
  minatar_r2d2.add_options(*b, r2d2_run);
  cli::add_actor_options(*b, r2d2_run, 1024);
  cli::CommandLine* c =
      &app.subcommand("vtrace-nature", "V-trace, Nature CNN, synthetic Atari frames");
  nature_vtrace.add_options(*c, nature_run);
  cli::add_actor_options(*c, nature_run, 1024);
  cli::CommandLine* d = &app.subcommand("ppo-pendulum", "PPO, MLP, Pendulum (pendulum_ppo)");
  pendulum_ppo.add_options(*d, ppo_run);
  cli::add_actor_options(*d, ppo_run, 256);
  app.require_subcommands(0, 1);
  if (const auto exit = app.parse(argc, argv)) return *exit;
  const bool all = !a->given() && !b->given() && !c->given() && !d->given();

  try {
    // A MinAtar Breakout configuration with the MinAtar network and `cli`'s agent.
    auto measure_minatar = [&](const char* name, auto& cli, LocalTrainerOptions& run) {
      cli.finish(run, cli::learner_group());
      seedrl::with_minatar_game("breakout", [&](auto make_env) {
        const auto probe = make_env(0);
        const auto agent =
            cli.make_agent(nn::NetworkOptions::minatar(probe.observation_spec().shape[2],
                                                       probe.action_spec().num_actions),
                           run);
        measure(name, agent, run, make_env, settings);
        return 0;
      });
    };
    if (all || a->given()) measure_minatar("vtrace-minatar", minatar_vtrace, minatar_vtrace_run);
    if (all || b->given()) measure_minatar("r2d2-minatar", minatar_r2d2, r2d2_run);
    if (all || c->given()) {
      nature_vtrace.finish(nature_run, cli::learner_group());
      const auto agent = nature_vtrace.make_agent(nn::NetworkOptions::nature(18), nature_run);
      measure(
          "vtrace-nature", agent, nature_run,
          [](std::uint64_t seed) { return SyntheticAtari(seed); }, settings);
    }
    if (all || d->given()) {
      pendulum_ppo.finish(ppo_run, cli::learner_group());
      const Pendulum probe(0);
      const auto agent = pendulum_ppo.make_agent(
          cli::box_network(pendulum_ppo, probe.observation_spec(), probe.action_spec()), ppo_run);
      measure(
          "ppo-pendulum", agent, ppo_run, [](std::uint64_t seed) { return Pendulum(seed); },
          settings);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_pipeline: error: %s\n", e.what());
    return 1;
  }
}
