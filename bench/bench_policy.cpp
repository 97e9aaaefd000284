// bench_policy: the latency of Policy::act (policy/policy.hpp), as a host program calls it: one
// observation per call (or --streams of them), on the calling thread, with the program's other
// threads idle or busy. Each figure is one (model, PolicyOptions::threads, busy threads) triple,
// measured in the same run, so that the thread counts compare on the same machine.
//
//   bench_policy [--models minatar,mlp] [--threads 1,2] [--busy 0,1] [--streams 1] [--seconds 2]
//
// A busy thread spins on arithmetic, as a game's simulation or render thread would, for the whole
// figure. With more compute threads than the cores left free, a forward's OpenMP team waits at its
// barriers for whichever of its threads the busy one has displaced: that is why
// PolicyOptions::threads defaults to 1. One JSON line per figure (mean, median and 99th percentile
// of the call's microseconds, calls per second); the last line is a JSON summary: each model's
// calls per second at each thread count beside the most busy threads measured.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "seedrl/cli/command_line.hpp"
#include "seedrl/io/checkpoint.hpp"
#include "seedrl/nn/description.hpp"
#include "seedrl/policy/policy.hpp"
#include "support/bench_util.hpp"

using namespace seedrl;

namespace {

nn::NetworkOptions model(const std::string& name) {
  if (name == "minatar") return nn::NetworkOptions::minatar(4, 6);  // [10, 10, 4], one conv
  if (name == "mlp") return nn::NetworkOptions::mlp(64, 8, {256, 256});
  throw Error(str_cat("bench_policy: unknown model '", name, "' (minatar or mlp)"));
}

// Threads that spin until the object is destroyed: the host's other busy work.
class BusyThreads {
 public:
  explicit BusyThreads(int n) {
    for (int i = 0; i < n; ++i)
      threads_.emplace_back([this] {
        volatile double x = 1.0;
        while (!stop_.load(std::memory_order_relaxed)) x = x * 1.0000001 + 1e-9;
      });
  }
  ~BusyThreads() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
  }
  BusyThreads(const BusyThreads&) = delete;
  BusyThreads& operator=(const BusyThreads&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

struct Figure {
  double mean_us = 0.0, median_us = 0.0, p99_us = 0.0, calls_per_s = 0.0;
};

Figure measure(Policy<>& policy, const Tensor& observations, double seconds) {
  std::vector<std::int32_t> actions(static_cast<std::size_t>(observations.dim(0)));
  for (int i = 0; i < 20; ++i) policy.act(observations, actions);
  std::vector<double> us;
  const double start = bench::now_seconds();
  while (bench::now_seconds() - start < seconds || us.size() < 20) {
    const double t0 = bench::now_seconds();
    policy.act(observations, actions);
    us.push_back(1e6 * (bench::now_seconds() - t0));
  }
  const double elapsed = bench::now_seconds() - start;
  Figure f;
  f.calls_per_s = static_cast<double>(us.size()) / elapsed;
  f.mean_us = 1e6 / f.calls_per_s;
  std::sort(us.begin(), us.end());
  f.median_us = us[us.size() / 2];
  f.p99_us = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  seedrl::cli::CommandLine app(
      "seedrl bench_policy: Policy::act latency beside idle or busy threads");
  std::vector<std::string> models{"minatar", "mlp"};
  std::vector<int> thread_counts{1, 2};
  std::vector<int> busy_counts{0, 1};
  std::int64_t streams = 1;
  double seconds = 2.0;
  app.option("--models", models, "minatar (MinAtar's CNN) and/or mlp (64 -> 256 -> 256)")
      .delimiter(',');
  app.option("--threads", thread_counts, "PolicyOptions::threads to measure (0: every core)")
      .delimiter(',')
      .range(0, 1024);
  app.option("--busy", busy_counts, "busy threads beside the caller to measure")
      .delimiter(',')
      .range(0, 1024);
  app.option("--streams", streams, "observations per act()").range(1, 4096);
  app.option("--seconds", seconds, "measuring time per figure").positive();
  if (const auto exit = app.parse(argc, argv)) return *exit;

  try {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                      ("seedrl_bench_policy_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const int most_busy = *std::max_element(busy_counts.begin(), busy_counts.end());
    std::map<std::string, double> busiest;  // "model_threadsT": calls/s beside most_busy threads
    for (const std::string& name : models) {
      const nn::NetworkOptions config = model(name);
      const nn::Network<cpu::Backend> net(config);
      const std::string path = (dir / (name + ".safetensors")).string();
      io::save_checkpoint(path, net.parameters(), nullptr, {}, {{"network", nn::describe(config)}});
      Rng rng(1);
      Tensor observations = Tensor::zeros(config.observation_shape.prepend({streams}));
      float* x = observations.data<float>();
      for (std::int64_t i = 0; i < observations.numel(); ++i)
        x[i] = static_cast<float>(rng.uniform());
      for (const int busy : busy_counts) {
        for (const int threads : thread_counts) {
          PolicyOptions options;
          options.threads = threads;
          Policy<> policy(path, options);
          const BusyThreads others(busy);
          const Figure f = measure(policy, observations, seconds);
          bench::progress("act", name, "threads ", threads, ", ", busy, " busy: mean ", f.mean_us,
                          " us, median ", f.median_us, " us, p99 ", f.p99_us, " us");
          bench::Json()
              .add("bench", "policy_act")
              .add("model", name)
              .add("streams", static_cast<long long>(streams))
              .add("threads", threads)
              .add("busy_threads", busy)
              .add("cores", static_cast<int>(std::thread::hardware_concurrency()))
              .add("mean_us", f.mean_us)
              .add("median_us", f.median_us)
              .add("p99_us", f.p99_us)
              .add("calls_per_s", f.calls_per_s)
              .print();
          if (busy == most_busy)
            busiest[name + "_threads" + std::to_string(threads)] = f.calls_per_s;
        }
      }
    }
    std::filesystem::remove_all(dir);
    bench::Json summary;
    summary.add("bench", "policy_act")
        .add("streams", static_cast<long long>(streams))
        .add("busy_threads", most_busy);
    for (const auto& [key, calls] : busiest) summary.add(key + "_calls_per_s", calls);
    summary.print();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_policy: %s\n", e.what());
    return 1;
  }
  return 0;
}
