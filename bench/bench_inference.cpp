// bench_inference: SEED RL's central claim, measured. The whole acting loop (environment step +
// inference + action) with K actors, two ways, in the same run:
//
//   seed:   K actor threads step their environments and send observations to one
//           InferenceServer, which runs the model on batches of up to K frames (the SEED way);
//   impala: K actor threads each hold their own copy of the model and run it on their own
//           observation, batch 1, before every step, and refresh their copy from the learner's
//           parameters every --impala-sync steps (IMPALA actors do it after every unroll;
//           0: never, a lower bound on IMPALA's cost).
//
//   bench_inference [--backend cpu|cuda] [--actors 1,8,32] [--models minatar,nature]
//                   [--seconds 4] [--warmup 2] [--threads 2] [--batched 256] [--no-graphs]
//                   [--no-impala]
//
// --backend cuda runs both ways on the GPU backend (the central server batches onto the GPU;
// each per-actor model is its own GPU copy). Both ways replay their forwards from CUDA graphs
// (the server's per batch size, each actor's at batch 1), or with --no-graphs neither does, so
// that the ratio compares like with like. --batched N also measures the server's inference
// step alone at batch N, the way InferenceServer does it: N observations gathered in host
// memory, one copy to the device, forward, outputs back to the host (mode "batched").
//
// Environments are synthetic (observations copied from a fixed pool of random frames, episodes of
// 1000 steps), so the figure is the cost of acting, not of an emulator. One JSON line per
// (mode, model, actors); the last line is a JSON summary with the speed-ups.

#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "seedrl/acting/actor.hpp"
#include "seedrl/agents/vtrace.hpp"
#include "seedrl/cli/command_line.hpp"
#include "seedrl/inference/graphed_forward.hpp"
#include "seedrl/inference/inference_server.hpp"
#include "seedrl/seedrl.hpp"
#include "support/batched_forward.hpp"
#include "support/bench_util.hpp"
#ifdef SEEDRL_BENCH_CUDA
#include "seedrl/backend/cuda/backend.hpp"
#endif

using namespace seedrl;

namespace {

using bench::BatchedFigures;
using bench::Model;
using bench::run_batched;

// Observations from a pool of pre-generated random frames; a cheap stand-in for an emulator.
class SyntheticEnv {
 public:
  SyntheticEnv(TensorSpec spec, std::int32_t actions,
               std::shared_ptr<const std::vector<std::uint8_t>> pool, std::uint64_t seed)
      : spec_(std::move(spec)), actions_(actions), pool_(std::move(pool)), rng_(seed) {}
  TensorSpec observation_spec() const { return spec_; }
  ActionSpec action_spec() const { return {actions_}; }
  void reset(const Tensor& obs) {
    steps_ = 0;
    write(obs);
  }
  StepResult step(std::int32_t action, const Tensor& obs) {
    write(obs);
    StepResult r;
    r.reward = action == 0 ? 1.0f : 0.0f;
    r.truncated = ++steps_ >= 1000;
    return r;
  }

 private:
  void write(const Tensor& obs) {
    const std::size_t bytes = obs.bytes();
    const std::size_t offset = rng_.below(pool_->size() - bytes);
    std::memcpy(obs.raw_data(), pool_->data() + offset, bytes);
  }
  TensorSpec spec_;
  std::int32_t actions_;
  std::shared_ptr<const std::vector<std::uint8_t>> pool_;
  Rng rng_;
  int steps_ = 0;
};

template <class B>
double run_seed(const Model& m, int actors, int threads, bool graphs, double seconds, double warmup,
                const std::shared_ptr<const std::vector<std::uint8_t>>& pool) {
  VTraceAgentOptions o;
  o.network = m.network;
  const VTraceAgent agent(o);
  nn::Network<B> learner_net(agent.network_config());
  SharedParameters parameters(learner_net.parameters());
  UnrollQueue unrolls(64);
  InferenceServerOptions so;
  so.max_batch = actors;
  so.max_slots = actors;
  so.threads = threads;
  so.unroll_length = 20;
  so.graphs = graphs;
  InferenceServer<VTraceAgent, B> server(agent, parameters, unrolls, m.observation,
                                         {static_cast<std::int32_t>(m.network.num_actions)}, so);
  server.start();
  bench::progress("seed", m.name, "server started, ", actors, " actors");
  std::thread drain([&] {
    while (unrolls.pop()) {
    }
  });
  std::vector<std::unique_ptr<Actor<SyntheticEnv, LocalClient>>> list;
  for (int a = 0; a < actors; ++a) {
    std::vector<SyntheticEnv> envs;
    envs.emplace_back(m.observation, static_cast<std::int32_t>(m.network.num_actions), pool,
                      static_cast<std::uint64_t>(a));
    ActorOptions ao;
    ao.first_slot = a;
    list.push_back(std::make_unique<Actor<SyntheticEnv, LocalClient>>(std::move(envs),
                                                                      LocalClient(server), ao));
  }
  std::vector<std::thread> threads_list;
  for (auto& actor : list) {
    threads_list.emplace_back([a = actor.get()] {
      if (const Status s = a->run(); !s.is_ok())
        std::fprintf(stderr, "bench_inference: an actor stopped: %s\n", s.to_string().c_str());
    });
  }
  auto frames = [&] {
    std::int64_t n = 0;
    for (auto& actor : list) n += actor->stats().frames;
    return n;
  };
  std::this_thread::sleep_for(std::chrono::duration<double>(warmup));
  bench::progress("seed", m.name, "warmed up: ", frames(), " frames");
  const std::int64_t f0 = frames();
  const double t0 = bench::now_seconds();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const double fps = static_cast<double>(frames() - f0) / (bench::now_seconds() - t0);
  const GraphedForwardStats g = server.graph_stats();
  bench::progress("seed", m.name, "measured: ", fps, " frames/s (mean batch ",
                  server.stats().mean_batch_size(), "; forwards: ", g.replays, " from graphs, ",
                  g.plain, " plain, ", g.captures, " captures, ", g.drops, " drops, ", g.failures,
                  " failures", g.last_failure.empty() ? "" : ": ", g.last_failure, "); stopping");
  for (auto& actor : list) actor->stop();
  server.stop();
  for (auto& t : threads_list) t.join();
  drain.join();
  bench::progress("seed", m.name, "stopped");
  return fps;
}

template <class B>
double run_impala(const Model& m, int actors, bool graphs, double seconds, int sync_every,
                  const std::shared_ptr<const std::vector<std::uint8_t>>& pool) {
  const VTraceAgent agent([&] {
    VTraceAgentOptions o;
    o.network = m.network;
    return o;
  }());
  nn::Network<B> learner(agent.network_config());  // the parameters actors copy from
  std::atomic<bool> stop{false};
  std::atomic<bool> measuring{false};
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::atomic<std::int64_t> frames{0};
  std::atomic<std::int64_t> replays{0}, plain{0}, failures{0};
  std::vector<std::thread> threads_list;
  for (int a = 0; a < actors; ++a) {
    threads_list.emplace_back([&, a] {
      cpu::set_num_threads(1);
      nn::Network<B> net(agent.network_config());  // this actor's own copy of the model
      GraphedForward<B> forward(graphs);           // replayed from a graph once captured
      SyntheticEnv env(m.observation, static_cast<std::int32_t>(m.network.num_actions), pool,
                       static_cast<std::uint64_t>(a));
      Tensor obs = Tensor::empty(m.observation.shape.prepend({1, 1}), m.observation.dtype);
      StagingBuffer to_device(B::device);
      HostOutputs to_host(B::device);
      Rng rng(static_cast<std::uint64_t>(a));
      std::int32_t action = 0;
      const std::vector<std::int32_t> slot{a};
      const std::vector<std::uint8_t> greedy{0};
      env.reset(obs[0][0]);
      // Primitives created, and the graph captured, before the clock starts.
      int warm_calls = 1;
      if constexpr (GraphedForward<B>::kAvailable) warm_calls = B::graph_capture_after() + 1;
      for (int i = 0; i < warm_calls; ++i) forward(net, to_device(obs));
      // Then wait for the others: on the GPU, actors already acting (a forward is a dozen
      // launches) kept the rest from finishing their setup for a minute and more (2026-12-04).
      ++ready;
      while (!go) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      std::int64_t steps = 0;
      while (!stop) {
        if (sync_every > 0 && ++steps % sync_every == 0) {
          net.parameters().copy_values_from(learner.parameters());
        }
        const nn::NetworkOutputs& out = to_host(forward(net, to_device(obs)));
        agent.select_actions(out, slot, greedy, std::span<std::int32_t>(&action, 1), rng);
        if (env.step(action, obs[0][0]).episode_over()) env.reset(obs[0][0]);
        if (measuring) frames.fetch_add(1, std::memory_order_relaxed);
      }
      replays += forward.stats().replays;
      plain += forward.stats().plain;
      failures += forward.stats().failures;
    });
  }
  // Every actor has built its own copy of the model before any acts, and before the clock starts.
  for (double waited = 0; ready.load() < actors; waited += 0.01) {
    if (waited >= 5) {  // a slow start says how far it got
      bench::progress("impala", m.name, ready.load(), " of ", actors, " actors ready");
      waited = 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  bench::progress("impala", m.name, "all ", actors, " actors ready");
  go = true;
  std::this_thread::sleep_for(std::chrono::duration<double>(std::min(1.0, seconds / 4)));
  measuring = true;
  const double t0 = bench::now_seconds();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const double fps = static_cast<double>(frames.load()) / (bench::now_seconds() - t0);
  bench::progress("impala", m.name, "measured: ", fps, " frames/s; stopping");
  stop = true;
  for (auto& t : threads_list) t.join();
  bench::progress("impala", m.name, "stopped (forwards: ", replays.load(), " from graphs, ",
                  plain.load(), " plain, ", failures.load(), " captures refused)");
  return fps;
}

struct Settings {
  std::string backend = "cpu";
  int threads = 1;
  double seconds = 4.0;
  double warmup = 2.0;  // seed: before the clock starts (the GPU measures new batch sizes then)
  int impala_sync = 20;
  bool graphs = true;  // forwards from CUDA graphs, central (InferenceServerOptions::graphs) and
                       // per-actor alike
  bool impala = true;  // also measure per-actor inference
};

template <class B>
std::string run_all(const Settings& s, const std::vector<std::string>& models,
                    const std::vector<int>& actor_counts, std::int64_t batched,
                    const std::shared_ptr<const std::vector<std::uint8_t>>& pool) {
  std::string summary = "[";
  for (const std::string& name : models) {
    const Model m = name == "minatar"
                        ? Model{name, nn::NetworkOptions::minatar(6, 6), {{10, 10, 6}, DType::u8}}
                        : Model{name, nn::NetworkOptions::nature(18), {{4, 84, 84}, DType::u8}};
    if (batched > 0) {
      const BatchedFigures f = run_batched<B>(m, batched, s.seconds, *pool);
      bench::Json line = bench::Json()
                             .add("bench", "inference")
                             .add("backend", s.backend)
                             .add("mode", "batched")
                             .add("model", name)
                             .add("batch", static_cast<long long>(batched))
                             .add("threads", s.threads)
                             .add("frames_per_s", static_cast<double>(batched) * 1e6 / f.step_us)
                             .add("step_us", f.step_us)
                             .add("h2d_us", f.h2d_us)
                             .add("forward_us", f.forward_us)
                             .add("forward_enqueue_us", f.enqueue_us)
                             .add("d2h_us", f.d2h_us);
      if (f.graph_step_us > 0) {
        line.add("graph_step_us", f.graph_step_us)
            .add("graph_frames_per_s", static_cast<double>(batched) * 1e6 / f.graph_step_us)
            .add("graph_nodes", static_cast<double>(f.graph_nodes))
            .add("graph_matches", f.graph_matches ? "yes" : "no");
      }
      if (!f.graph_error.empty()) line.add("graph_error", f.graph_error);
      line.print();
      if (summary.size() > 1) summary += ',';
      summary += line.str();
    }
    for (int actors : actor_counts) {
      // Each line as soon as its figure exists.
      const auto print = [&](const char* mode, double fps) {
        const bool seed = mode == std::string("seed");
        bench::Json()
            .add("bench", "inference")
            .add("backend", s.backend)
            .add("mode", mode)
            .add("model", name)
            .add("actors", actors)
            .add("threads", seed ? s.threads : 1)
            .add("impala_sync", seed ? 0 : s.impala_sync)
            .add("graphs", s.graphs && GraphedForward<B>::kAvailable ? "yes" : "no")
            .add("frames_per_s", fps)
            .print();
      };
      const double seed_fps =
          run_seed<B>(m, actors, s.threads, s.graphs, s.seconds, s.warmup, pool);
      print("seed", seed_fps);
      if (!s.impala) continue;
      const double impala_fps = run_impala<B>(m, actors, s.graphs, s.seconds, s.impala_sync, pool);
      print("impala", impala_fps);
      const std::string entry = bench::Json()
                                    .add("model", name)
                                    .add("actors", actors)
                                    .add("seed_frames_per_s", seed_fps)
                                    .add("impala_frames_per_s", impala_fps)
                                    .add("speedup", seed_fps / impala_fps)
                                    .str();
      summary += (summary.size() > 1 ? "," : "") + entry;
    }
  }
  return summary + "]";
}

}  // namespace

int main(int argc, char** argv) {
  seedrl::cli::CommandLine app(
      "seedrl bench_inference: central batched inference vs per-actor inference");
  Settings s;
  s.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> actor_counts{1, 8, 32};
  std::vector<std::string> models{"minatar", "nature"};
  std::int64_t batched = 0;
  app.option("--backend", s.backend, "cpu, or cuda where seedrl was built with it")
      .one_of({"cpu", "cuda"});
  app.option("--actors", actor_counts, "actor counts to measure (none: --actors 0)")
      .delimiter(',')
      .range(0, 1024);
  app.option("--models", models, "minatar and/or nature")
      .delimiter(',')
      .one_of({"minatar", "nature"});
  app.option("--seconds", s.seconds, "measuring time per figure").positive();
  app.option("--warmup", s.warmup,
             "seed: seconds of acting before the clock starts (batch sizes are met, and on the "
             "GPU their convolution algorithms measured, then)")
      .non_negative();
  app.flag("!--no-graphs", s.graphs,
           "forwards without CUDA graphs, the server's and the per-actor models' alike");
  app.flag("!--no-impala", s.impala, "central inference only");
  app.option("--impala-sync", s.impala_sync,
             "IMPALA actors copy the learner's parameters every N steps (0: never)")
      .non_negative();
  app.option("--threads", s.threads, "compute threads of the central inference thread").positive();
  int conv_measure_after = -1;
  app.option("--conv-measure-after", conv_measure_after,
             "cuda: measure a convolution shape's cuDNN algorithms at its Nth use (0: never; "
             "default: the library's)")
      .non_negative();
  app.option("--batched", batched,
             "also measure the server's inference step alone at this batch (0: skip)")
      .non_negative();
  if (const auto exit = app.parse(argc, argv)) return *exit;
  std::erase(actor_counts, 0);

  auto pool = std::make_shared<std::vector<std::uint8_t>>(1 << 22);
  Rng rng(7);
  for (auto& b : *pool) b = static_cast<std::uint8_t>(rng.below(256));
  std::string results;
  if (s.backend == "cpu") {
    results = run_all<cpu::Backend>(s, models, actor_counts, batched, pool);
  } else {
#ifdef SEEDRL_BENCH_CUDA
    if (!cuda::available()) {
      std::fprintf(stderr, "bench_inference: --backend cuda: no usable GPU (%s)\n",
                   cuda::unavailable_reason().c_str());
      return 2;
    }
    if (conv_measure_after >= 0) cuda::set_conv_measure_after(conv_measure_after);
    bench::Json()
        .add("bench", "device")
        .add("device", cuda::device_info().describe())
        .add("conv_measure_after", cuda::conv_measure_after())
        .print();
    results = run_all<cuda::Backend>(s, models, actor_counts, batched, pool);
    bench::Json()
        .add("bench", "conv_measurements")
        .add("count", static_cast<long long>(cuda::conv_measurements()))
        .print();
    // The caching allocator's blocks back to the driver, so that a leak check (compute-sanitizer
    // --leak-check full) reports only memory nobody freed.
    cuda::empty_cache();
#else
    std::fprintf(stderr,
                 "bench_inference: --backend cuda: seedrl was built without SEEDRL_WITH_CUDA\n");
    return 2;
#endif
  }
  bench::Json()
      .add("bench", "inference")
      .add("backend", s.backend)
      .add("cores", static_cast<int>(std::thread::hardware_concurrency()))
      .raw("results", results)
      .print();
  return 0;
}
