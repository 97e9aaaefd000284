// bench_nn: forward and training throughput of the models on a backend; on the CPU against the
// machine's measured oneDNN sgemm rate.
//
//   bench_nn [--backend cpu|cuda] [--model mlp|minatar|nature|all] [--batch 640] [--threads K]
//            [--seconds 3] [--lstm H] [--vtrace-step]
//
// Prints one JSON line per model (backend, model, batch, threads, forward_frames_per_s,
// train_frames_per_s, the useful GFLOP/s of each and, on the CPU, their fraction of sgemm), after
// one JSON line for sgemm (CPU) or the device (CUDA); the last line is a JSON summary. GPU figures
// wait for the device at the end of every timed call.
//
// --vtrace-step also times the whole V-trace learner step on the Nature CNN (T = 20, B = 32,
// 18 actions, RMSProp): stacking the unrolls, the copy to the device, forward, V-trace and loss,
// backward, clipping and the update; bench/pytorch_vtrace_step.py times the same step in
// PyTorch.
#include <oneapi/dnnl/dnnl.h>

#include <cstdio>
#include <thread>
#include <vector>

#include "seedrl/agents/vtrace.hpp"
#include "seedrl/cli/command_line.hpp"
#include "seedrl/experience/unroll_store.hpp"
#include "seedrl/seedrl.hpp"
#include "support/bench_util.hpp"
#include "support/unrolls.hpp"
#ifdef SEEDRL_BENCH_CUDA
#include "seedrl/backend/cuda/backend.hpp"
#endif

using namespace seedrl;

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
  nn::NetworkOptions config;
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

struct Settings {
  std::string backend = "cpu";
  std::string model = "all";
  std::int64_t batch = 640;
  int threads = 1;
  double seconds = 3.0;
  std::int64_t lstm = 0;
  std::int64_t minatar_channels = 10;
  bool vtrace_step = false;
  double sgemm = 0.0;  // CPU only
};

// Waits for the backend's queued work, so a timed call includes it.
template <class B>
void finish() {
#ifdef SEEDRL_BENCH_CUDA
  if constexpr (B::device == Device::cuda) cuda::synchronize();
#endif
}

template <class B>
bench::Json time_vtrace_step(const Settings& s, Rng& rng) {
  constexpr std::int64_t kSteps = 20, kBatch = 32;
  VTraceAgentOptions o;
  o.network = nn::NetworkOptions::nature(18);
  o.network.lstm_size = s.lstm;
  o.batch_size = kBatch;
  o.optimizer.kind = nn::OptimizerKind::rmsprop;
  const VTraceAgent agent(o);
  InferenceServerOptions server;
  server.unroll_length = kSteps;
  const UnrollSpec spec = make_unroll_spec(agent, {{4, 84, 84}, DType::u8}, {18}, server);
  UnrollQueue queue(1);
  Learner<VTraceAgent, B> learner(agent, spec, queue);
  const auto unrolls = bench::random_unrolls(spec, kBatch, rng);
  const double step_s = bench::time_per_call(
      [&] {
        learner.train_on(unrolls);
        finish<B>();
      },
      s.seconds, bench::kModelWarmup);
  bench::Json line;
  line.add("bench", "vtrace_learner_step")
      .add("backend", s.backend)
      .add("model", "nature")
      .add("unroll", static_cast<long long>(kSteps))
      .add("batch", static_cast<long long>(kBatch))
      .add("lstm", static_cast<long long>(s.lstm))
      .add("threads", s.threads)
      .add("step_ms", step_s * 1e3)
      .add("frames_per_s", static_cast<double>(kSteps * kBatch) / step_s);
  return line;
}

template <class B>
std::string run_models(const Settings& s) {
  std::vector<ModelSpec> specs = {
      {"mlp", nn::NetworkOptions::mlp(4, 2), DType::f32},
      {"minatar", nn::NetworkOptions::minatar(s.minatar_channels, 6), DType::u8},
      {"nature", nn::NetworkOptions::nature(18), DType::u8},
  };
  std::string summary = "[";
  Rng rng(1);
  for (ModelSpec& spec : specs) {
    if (s.model != "all" && s.model != spec.name) continue;
    spec.config.lstm_size = s.lstm;
    nn::Network<B> net(spec.config);
    nn::Adam<B> adam(net.parameters());
    // Time-major [T, B] like a learner batch: an unroll of 20 when the batch allows it.
    const std::int64_t steps = s.batch % 20 == 0 ? 20 : 1;
    const std::int64_t columns = s.batch / steps;
    const Tensor obs = random_observations(spec.config.observation_shape.prepend({steps, columns}),
                                           spec.observation_dtype, rng)
                           .clone(B::device);
    const Tensor grad_logits =
        random_observations({steps, columns, spec.config.num_actions}, DType::f32, rng)
            .clone(B::device);
    const Tensor grad_values =
        random_observations({steps, columns}, DType::f32, rng).clone(B::device);

    const double forward_s = bench::time_per_call(
        [&] {
          net.forward(obs);
          finish<B>();
        },
        s.seconds, bench::kModelWarmup);
    const double train_s = bench::time_per_call(
        [&] {
          net.forward(obs);
          net.backward({.logits = grad_logits, .values = grad_values});
          adam.step(1e-4f);
          finish<B>();
        },
        s.seconds, bench::kModelWarmup);

    const double fwd_fps = static_cast<double>(s.batch) / forward_s;
    const double train_fps = static_cast<double>(s.batch) / train_s;
    const double fwd_gflops = fwd_fps * net.forward_flops_per_frame() / 1e9;
    const double train_gflops = train_fps * net.train_flops_per_frame() / 1e9;
    bench::Json line;
    line.add("backend", s.backend)
        .add("model", spec.name)
        .add("batch", static_cast<long long>(s.batch))
        .add("threads", s.threads)
        .add("lstm", static_cast<long long>(s.lstm))
        .add("forward_frames_per_s", fwd_fps)
        .add("train_frames_per_s", train_fps)
        .add("forward_mflop_per_frame", net.forward_flops_per_frame() / 1e6)
        .add("train_mflop_per_frame", net.train_flops_per_frame() / 1e6)
        .add("forward_gflops", fwd_gflops)
        .add("train_gflops", train_gflops);
    if (s.sgemm > 0.0) {
      line.add("sgemm_gflops", s.sgemm)
          .add("forward_fraction_of_sgemm", fwd_gflops / s.sgemm)
          .add("train_fraction_of_sgemm", train_gflops / s.sgemm);
    }
    if (spec.name == "minatar")
      line.add("minatar_channels", static_cast<long long>(s.minatar_channels));
    line.print();
    if (summary.size() > 1) summary += ',';
    summary += line.str();
  }
  if (s.vtrace_step) {
    const bench::Json line = time_vtrace_step<B>(s, rng);
    line.print();
    if (summary.size() > 1) summary += ',';
    summary += line.str();
  }
  return summary + "]";
}

}  // namespace

int main(int argc, char** argv) {
  seedrl::cli::CommandLine app("seedrl bench_nn: model forward/training throughput on a backend");
  Settings s;
  s.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  app.option("--backend", s.backend, "cpu, or cuda where seedrl was built with it")
      .one_of({"cpu", "cuda"});
  app.option("--model", s.model, "mlp, minatar, nature or all")
      .one_of({"mlp", "minatar", "nature", "all"});
  app.option("--batch", s.batch, "frames per step (an unroll of 20 x 32 = 640)").positive();
  app.option("--threads", s.threads, "CPU threads for oneDNN and seedrl kernels").positive();
  app.option("--seconds", s.seconds, "minimum measuring time per figure").positive();
  app.option("--lstm", s.lstm, "add an LSTM core of this size (0: none)").non_negative();
  app.option("--minatar-channels", s.minatar_channels,
             "MinAtar observation channels (Seaquest: 10)")
      .range(1, 64);
  app.flag("--vtrace-step", s.vtrace_step,
           "also time the V-trace learner step on the Nature CNN (T = 20, B = 32)");
  if (const auto exit = app.parse(argc, argv)) return *exit;

  cpu::set_num_threads(s.threads);
  std::string models;
  if (s.backend == "cpu") {
    s.sgemm = measure_sgemm(2048, s.seconds);
    bench::Json()
        .add("bench", "sgemm")
        .add("size", 2048)
        .add("threads", s.threads)
        .add("gflops", s.sgemm)
        .print();
    models = run_models<cpu::Backend>(s);
  } else {
#ifdef SEEDRL_BENCH_CUDA
    if (!cuda::available()) {
      std::fprintf(stderr, "bench_nn: --backend cuda: no usable GPU (%s)\n",
                   cuda::unavailable_reason().c_str());
      return 2;
    }
    bench::Json().add("bench", "device").add("device", cuda::device_info().describe()).print();
    models = run_models<cuda::Backend>(s);
#else
    std::fprintf(stderr, "bench_nn: --backend cuda: seedrl was built without SEEDRL_WITH_CUDA\n");
    return 2;
#endif
  }
  bench::Json()
      .add("bench", "nn")
      .add("backend", s.backend)
      .add("threads", s.threads)
      .add("sgemm_gflops", s.sgemm)
      .raw("models", models)
      .print();
  return 0;
}
