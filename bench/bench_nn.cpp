// bench_nn: forward and training throughput of the models on the CPU backend, against the
// machine's measured oneDNN sgemm rate.
//
//   bench_nn [--model mlp|minatar|nature|all] [--batch 640] [--threads K] [--seconds 3]
//
// Prints one JSON line per model (model, batch, threads, forward_frames_per_s,
// train_frames_per_s, the useful GFLOP/s of each and their fraction of sgemm), after one JSON
// line for sgemm; the last line is a JSON summary.
#include <oneapi/dnnl/dnnl.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <thread>
#include <vector>

#include "seedrl/seedrl.hpp"
#include "support/bench_util.hpp"

using namespace seedrl;
using Backend = cpu::Backend;

namespace {

// Best GFLOP/s of dnnl_sgemm on square matrices of `size` with the current thread count.
double measure_sgemm(int size, double seconds) {
  std::vector<float> a(static_cast<std::size_t>(size) * size, 0.5f), b(a.size(), 0.25f),
      c(a.size());
  double best = 0.0;
  const double start = bench::now_seconds();
  int calls = 0;
  while (calls < 3 || bench::now_seconds() - start < seconds) {
    const double t0 = bench::now_seconds();
    dnnl_sgemm('N', 'N', size, size, size, 1.0f, a.data(), size, b.data(), size, 0.0f, c.data(),
               size);
    const double t = bench::now_seconds() - t0;
    best = std::max(best, 2.0 * size * size * static_cast<double>(size) / t / 1e9);
    ++calls;
  }
  return best;
}

struct ModelSpec {
  std::string name;
  nn::NetworkConfig config;
  DType observation_dtype;
};

Tensor random_observations(const Shape& shape, DType dtype, Rng& rng) {
  Tensor t = Tensor::empty(shape, dtype);
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    if (dtype == DType::u8) {
      t.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(rng.below(256));
    } else {
      t.data<float>()[i] = static_cast<float>(rng.uniform(-1, 1));
    }
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"seedrl bench_nn: model forward/training throughput vs the sgemm ceiling"};
  std::string model = "all";
  std::int64_t batch = 640;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  double seconds = 3.0;
  std::int64_t lstm = 0;
  std::int64_t minatar_channels = 10;
  app.add_option("--model", model, "mlp, minatar, nature or all")
      ->check(CLI::IsMember({"mlp", "minatar", "nature", "all"}));
  app.add_option("--batch", batch, "frames per step (an unroll of 20 x 32 = 640)")
      ->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "CPU threads for oneDNN and seedrl kernels")
      ->check(CLI::PositiveNumber);
  app.add_option("--seconds", seconds, "minimum measuring time per figure")
      ->check(CLI::PositiveNumber);
  app.add_option("--lstm", lstm, "add an LSTM core of this size (0: none)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--minatar-channels", minatar_channels,
                 "MinAtar observation channels (Seaquest: 10)")
      ->check(CLI::Range(1, 64));
  CLI11_PARSE(app, argc, argv);

  cpu::set_num_threads(threads);
  const double sgemm = measure_sgemm(2048, seconds);
  bench::Json()
      .add("bench", "sgemm")
      .add("size", 2048)
      .add("threads", threads)
      .add("gflops", sgemm)
      .print();

  std::vector<ModelSpec> specs = {
      {"mlp", nn::NetworkConfig::mlp(4, 2), DType::f32},
      {"minatar", nn::NetworkConfig::minatar(minatar_channels, 6), DType::u8},
      {"nature", nn::NetworkConfig::nature(18), DType::u8},
  };
  std::string summary = "[";
  Rng rng(1);
  for (ModelSpec& spec : specs) {
    if (model != "all" && model != spec.name) continue;
    spec.config.lstm_size = lstm;
    nn::Network<Backend> net(spec.config);
    nn::Adam<Backend> adam(net.parameters());
    // Time-major [T, B] like a learner batch: an unroll of 20 when the batch allows it.
    const std::int64_t steps = batch % 20 == 0 ? 20 : 1;
    const std::int64_t columns = batch / steps;
    const Tensor obs = random_observations(spec.config.observation_shape.prepend({steps, columns}),
                                           spec.observation_dtype, rng);
    const Tensor grad_logits =
        random_observations({steps, columns, spec.config.num_actions}, DType::f32, rng);
    const Tensor grad_values = random_observations({steps, columns}, DType::f32, rng);

    const double forward_s = bench::time_per_call([&] { net.forward(obs); }, seconds);
    const double train_s = bench::time_per_call(
        [&] {
          net.forward(obs);
          net.backward({.logits = grad_logits, .values = grad_values});
          adam.step(1e-4f);
        },
        seconds);

    const double fwd_fps = static_cast<double>(batch) / forward_s;
    const double train_fps = static_cast<double>(batch) / train_s;
    const double fwd_gflops = fwd_fps * net.forward_flops_per_frame() / 1e9;
    const double train_gflops = train_fps * net.train_flops_per_frame() / 1e9;
    bench::Json line;
    line.add("model", spec.name)
        .add("batch", static_cast<long long>(batch))
        .add("threads", threads)
        .add("lstm", static_cast<long long>(lstm))
        .add("forward_frames_per_s", fwd_fps)
        .add("train_frames_per_s", train_fps)
        .add("forward_mflop_per_frame", net.forward_flops_per_frame() / 1e6)
        .add("train_mflop_per_frame", net.train_flops_per_frame() / 1e6)
        .add("forward_gflops", fwd_gflops)
        .add("train_gflops", train_gflops)
        .add("sgemm_gflops", sgemm)
        .add("forward_fraction_of_sgemm", fwd_gflops / sgemm)
        .add("train_fraction_of_sgemm", train_gflops / sgemm);
    if (spec.name == "minatar")
      line.add("minatar_channels", static_cast<long long>(minatar_channels));
    line.print();
    summary += (summary.size() > 1 ? "," : "") + line.str();
  }
  bench::Json()
      .add("bench", "nn")
      .add("threads", threads)
      .add("sgemm_gflops", sgemm)
      .raw("models", summary + "]")
      .print();
  return 0;
}
