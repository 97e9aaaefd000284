// bench_allreduce: the cost of the learner group's fused gradient all-reduce (seedrl::mpi) against
// the gradient bytes of the MLP, the MinAtar net and the Nature CNN, and its share of a V-trace
// learner step. Run it under MPI, one learner per rank:
//
//   OMP_NUM_THREADS=1 mpirun -np 2 --oversubscribe build/release/bench/bench_allreduce
//        [--model mlp|minatar|nature|all] [--calls 50] [--steps N]
//
// Per model, every rank (a) times the all-reduce of one flat buffer of the model's parameter
// count (`calls` calls after 5 warm-up calls), (b) times the V-trace learner step alone (no
// group) and (c) as a group member (--steps steps, by default about a second's worth on one core;
// all-reduce included), at the batch sizes the examples use. Rank 0 prints one JSON line per model:
// ranks, threads per rank, parameters, bytes, allreduce_ms, allreduce_gbps (the bytes a rank
// contributes over the time), step_ms_alone, step_ms_group and allreduce_share (allreduce_ms /
// step_ms_group). Call counts are fixed, not timed, so every rank makes the same collective calls.
#include <omp.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "seedrl/agents/vtrace.hpp"
#include "seedrl/experience/unroll_store.hpp"
#include "seedrl/mpi/learner_group.hpp"
#include "support/bench_util.hpp"
#include "support/unrolls.hpp"

using namespace seedrl;
using Backend = cpu::Backend;

namespace {

struct Model {
  std::string name;
  nn::NetworkOptions network;
  TensorSpec observation;
  std::int64_t unroll, batch;  // the examples' sizes (cartpole_vtrace, minatar_vtrace, Atari)
  int steps;                   // timed learner steps (about a second's worth on one core)
};

std::vector<Model> models(const std::string& which) {
  std::vector<Model> all{
      {"mlp", nn::NetworkOptions::mlp(4, 2), {{4}, DType::f32}, 20, 8, 1000},
      {"minatar", nn::NetworkOptions::minatar(4, 6), {{10, 10, 4}, DType::u8}, 20, 32, 40},
      {"nature", nn::NetworkOptions::nature(18), {{4, 84, 84}, DType::u8}, 20, 32, 4},
  };
  std::vector<Model> out;
  for (const Model& m : all)
    if (which == "all" || which == m.name) out.push_back(m);
  return out;
}

// Seconds per call of `body` over exactly `calls` calls after `warmup` (the same on every rank).
template <class F>
double time_calls(F&& body, int calls, int warmup) {
  for (int i = 0; i < warmup; ++i) body();
  const double start = bench::now_seconds();
  for (int i = 0; i < calls; ++i) body();
  return (bench::now_seconds() - start) / calls;
}

}  // namespace

int main(int argc, char** argv) {
  mpi::Session mpi(&argc, &argv);
  CLI::App app{"Cost of the learner group's fused gradient all-reduce (run under mpirun)"};
  std::string which = "all";
  int calls = 50, steps = 0;
  app.add_option("--model", which, "mlp, minatar, nature or all")
      ->check(CLI::IsMember({"mlp", "minatar", "nature", "all"}));
  app.add_option("--calls", calls, "timed all-reduce calls per model")
      ->check(CLI::Range(1, 100000));
  app.add_option("--steps", steps, "timed learner steps per model (0: about a second's worth)")
      ->check(CLI::Range(0, 100000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return mpi.rank() == 0 ? app.exit(e) : 1;
  }

  try {
    mpi::LearnerGroup group(mpi);
    Rng rng(17 + static_cast<std::uint64_t>(mpi.rank()));
    for (const Model& m : models(which)) {
      VTraceAgentOptions o;
      o.network = m.network;
      o.batch_size = m.batch;
      const VTraceAgent agent(o);
      InferenceServerOptions server;
      server.unroll_length = m.unroll;
      const UnrollSpec spec = make_unroll_spec(
          agent, m.observation,
          ActionSpec::discrete(static_cast<std::int32_t>(m.network.num_actions)), server);
      UnrollQueue unused(1);
      Learner<VTraceAgent, Backend> alone(agent, spec, unused), member(agent, spec, unused);
      group.join(member);
      const auto unrolls = bench::random_unrolls(spec, m.batch, rng);
      const std::int64_t parameters = member.network().parameters().values().numel();

      Tensor buffer = Tensor::zeros({parameters});
      const double allreduce_s = time_calls([&] { group.all_reduce(buffer, true); }, calls, 5);
      const int n = steps > 0 ? steps : m.steps;
      const double alone_s = time_calls([&] { alone.train_on(unrolls); }, n, 2);
      const double group_s = time_calls([&] { member.train_on(unrolls); }, n, 2);
      group.check_identical(member.network().parameters().values(), "the parameters");

      if (mpi.rank() == 0) {
        const double bytes = 4.0 * static_cast<double>(parameters);
        bench::Json line;
        line.add("bench", "allreduce")
            .add("model", m.name)
            .add("ranks", mpi.size())
            .add("threads_per_rank", omp_get_max_threads())
            .add("unroll", static_cast<long long>(m.unroll))
            .add("batch", static_cast<long long>(m.batch))
            .add("parameters", static_cast<long long>(parameters))
            .add("bytes", static_cast<long long>(4 * parameters))
            .add("allreduce_ms", allreduce_s * 1e3)
            .add("allreduce_gbps", bytes / allreduce_s / 1e9)
            .add("step_ms_alone", alone_s * 1e3)
            .add("step_ms_group", group_s * 1e3)
            .add("allreduce_share", allreduce_s / group_s);
        line.print();
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_allreduce (%s): error: %s\n", mpi.describe().c_str(), e.what());
    return 1;
  }
}
