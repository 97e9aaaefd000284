// bench_replay: the prioritized ReplayBuffer at capacity 10^6 against the O(N) sampling of
// seed_rl's PrioritizedReplay (p^alpha over the whole array, normalised, one categorical draw
// per item: here a prefix sum and binary searches, the cheapest form of it), in the same run.
//
//   bench_replay [--capacity 1000000] [--batch 64] [--seconds 2]
//
// One JSON line per measurement; the last line is a JSON summary.

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "seedrl/cli/command_line.hpp"
#include "seedrl/replay/replay_buffer.hpp"
#include "support/bench_util.hpp"

using namespace seedrl;

namespace {

// A replay item of realistic handle size: R2D2 sequences are stored elsewhere and referenced.
struct Item {
  std::uint64_t id;
  float payload[6];
};

// seed_rl's way: every batch recomputes p^alpha for all N items and samples from it.
class LinearScanSampler {
 public:
  LinearScanSampler(std::vector<double> priorities, double alpha)
      : priorities_(std::move(priorities)), alpha_(alpha) {}
  std::vector<std::size_t> sample(std::size_t batch, Rng& rng) {
    cumulative_.resize(priorities_.size());
    double total = 0.0;
    for (std::size_t i = 0; i < priorities_.size(); ++i) {
      total += std::pow(priorities_[i], alpha_);
      cumulative_[i] = total;
    }
    std::vector<std::size_t> out(batch);
    for (std::size_t k = 0; k < batch; ++k) {
      const double u = rng.uniform() * total;
      out[k] = static_cast<std::size_t>(
          std::upper_bound(cumulative_.begin(), cumulative_.end(), u) - cumulative_.begin());
    }
    return out;
  }

 private:
  std::vector<double> priorities_, cumulative_;
  double alpha_;
};

}  // namespace

int main(int argc, char** argv) {
  seedrl::cli::CommandLine app("seedrl bench_replay: prioritized replay operations per second");
  std::size_t capacity = 1000000;
  std::size_t batch = 64;
  double seconds = 2.0;
  app.option("--capacity", capacity, "replay capacity").positive();
  app.option("--batch", batch, "sample and update batch size").positive();
  app.option("--seconds", seconds, "minimum measuring time per figure").positive();
  if (const auto exit = app.parse(argc, argv)) return *exit;

  const ReplayOptions options{0.9, 0.6};
  ReplayBuffer<Item> buffer(capacity, options, 1);
  Rng rng(2);

  // Inserts: fill the buffer once (timed), then keep inserting (evicting) for the measurement.
  std::uint64_t next = 0;
  const double fill_start = bench::now_seconds();
  while (next < capacity) buffer.insert(Item{next++, {}}, 0.1 + rng.uniform());
  const double fill_seconds = bench::now_seconds() - fill_start;
  const double insert_s = bench::time_per_call(
      [&] {
        buffer.insert(Item{next++, {}}, 0.1 + rng.uniform());
      },
      seconds, 100, 1000);

  std::vector<std::uint64_t> indices;
  const double sample_s =
      bench::time_per_call([&] { indices = buffer.sample(batch).indices; }, seconds, 10, 100);
  std::vector<double> priorities(batch);
  const double update_s = bench::time_per_call(
      [&] {
        for (double& p : priorities) p = 0.1 + rng.uniform();
        buffer.update_priorities(indices, priorities);
      },
      seconds, 10, 100);

  std::vector<double> raw(capacity);
  for (double& p : raw) p = 0.1 + rng.uniform();
  LinearScanSampler linear(raw, options.priority_exponent);
  const double linear_s = bench::time_per_call([&] { linear.sample(batch, rng); }, seconds, 1, 3);

  const double inserts_per_s = 1.0 / insert_s;
  const double samples_per_s = 1.0 / sample_s;  // batches per second
  const double updates_per_s = static_cast<double>(batch) / update_s;
  const double linear_samples_per_s = 1.0 / linear_s;
  auto line = [&](const char* op, double per_s, const char* unit) {
    bench::Json()
        .add("bench", "replay")
        .add("op", op)
        .add("capacity", static_cast<long long>(capacity))
        .add("batch", static_cast<long long>(batch))
        .add("per_s", per_s)
        .add("unit", unit)
        .print();
  };
  line("insert", inserts_per_s, "items");
  line("fill", static_cast<double>(capacity) / fill_seconds, "items");
  line("sample", samples_per_s, "batches");
  line("update_priorities", updates_per_s, "items");
  line("sample_linear_scan", linear_samples_per_s, "batches");
  bench::Json()
      .add("bench", "replay")
      .add("capacity", static_cast<long long>(capacity))
      .add("batch", static_cast<long long>(batch))
      .add("threads", 1)
      .add("inserts_per_s", inserts_per_s)
      .add("sample_batches_per_s", samples_per_s)
      .add("priority_updates_per_s", updates_per_s)
      .add("linear_scan_sample_batches_per_s", linear_samples_per_s)
      .add("sampling_speedup", samples_per_s / linear_samples_per_s)
      .print();
  return 0;
}
