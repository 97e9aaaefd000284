// bench_sac: the SAC update, CleanRL's sac_continuous_action at HalfCheetah's sizes (17
// observations, 6 actions, actor and twin critics of 256 x 256, batch 256): one update is a
// sampled batch from the replay, the actor on s and the critics on (s, a~) for the actor's
// gradient, the actor on s' and the target critics for the targets, the critics on (s, a), the
// temperature, four Adam steps and the Polyak averages (Learner<SacAgent>::train_on_sample).
// With --pytorch (where Debian's python3-torch is installed) bench/pytorch_sac_update.py times
// the same update in PyTorch on the same threads, in the same run, and the ratio is printed.
//
//   bench_sac [--threads 2] [--seconds 5] [--pytorch]
//
// Prints JSON lines: one per implementation, then the comparison (updates/s, ms per update, the
// update's useful GFLOP and the rate it reaches, threads).

#include <chrono>
#include <cstdio>
#include <string>

#include "seedrl/agents/sac.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/cli/command_line.hpp"
#include "seedrl/experience/unroll_store.hpp"

int main(int argc, char** argv) {
  using namespace seedrl;
  using Backend = cpu::Backend;
  seedrl::cli::CommandLine app(
      "The SAC update (CleanRL's, HalfCheetah's sizes), seedrl against PyTorch");
  int threads = 2;
  double seconds = 5.0;
  bool pytorch = false;
  std::string python = "/usr/bin/python3";
  app.option("--threads", threads, "compute threads").range(1, 256);
  app.option("--seconds", seconds, "measuring time").positive();
  app.flag("--pytorch", pytorch, "also time bench/pytorch_sac_update.py");
  app.option("--python", python, "the Python with torch");
  if (const auto exit = app.parse(argc, argv)) return *exit;

  constexpr std::int64_t kObservations = 17, kActions = 6, kBatch = 256, kWindows = 20'000;
  cpu::set_num_threads(threads);
  SacAgentOptions o;
  o.sizes(kObservations, kActions);
  o.network.seed = 1;
  o.learning_starts = kBatch;
  o.replay_capacity = kWindows;
  const SacAgent agent(o);
  InferenceServerOptions server;
  server.unroll_length = 1;
  const UnrollSpec spec = make_unroll_spec(
      agent, StepSpec{{{kObservations}, DType::f32}, ActionSpec::box(kActions, -1.0f, 1.0f), {}},
      server);
  UnrollQueue queue(4);
  Learner<SacAgent, Backend> learner(agent, spec, queue);

  // A replay of random transitions.
  Rng rng(3);
  UnrollStore store(1, spec);
  Tensor obs = Tensor::empty({kObservations});
  std::vector<float> action(kActions);
  for (std::int64_t t = 0; learner.replay().size() < static_cast<std::size_t>(kWindows); ++t) {
    for (std::int64_t i = 0; i < kObservations; ++i)
      obs.data<float>()[i] = static_cast<float>(rng.normal());
    for (float& a : action) a = static_cast<float>(rng.uniform(-1, 1));
    UnrollStep s;
    s.observation = obs;
    s.reward = static_cast<float>(rng.normal());
    s.flags = t == 0 ? step_flags::kFirst : 0;
    s.set_action(action.data(), action.size());
    if (auto u = store.append(0, s)) learner.replay().insert(std::move(*u), 1.0);
  }

  // Useful FLOPs of an update: forward and backward of the actor and the two critics on the
  // batch twice over (the actor's pass and the critics' own), forward of the actor and the two
  // target critics on s'.
  nn::Network<Backend> actor(agent.network_config()), critic(agent.critic_config());
  const double per_frame =
      2.0 * (actor.train_flops_per_frame() + 2.0 * critic.train_flops_per_frame()) +
      actor.forward_flops_per_frame() + 2.0 * critic.forward_flops_per_frame();
  const double gflop = per_frame * static_cast<double>(kBatch) / 1e9;

  for (int i = 0; i < 5; ++i) learner.train_on_sample();  // warm-up
  const auto start = std::chrono::steady_clock::now();
  std::int64_t updates = 0;
  double elapsed = 0.0;
  while (elapsed < seconds) {
    learner.train_on_sample();
    ++updates;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  const double ours = static_cast<double>(updates) / elapsed;
  std::printf(
      "{\"bench\":\"sac_update\",\"impl\":\"seedrl\",\"updates_per_s\":%.1f,\"ms_per_update\":%.3f,"
      "\"update_gflop\":%.3f,\"gflops\":%.1f,\"threads\":%d,\"batch\":%lld,\"hidden\":256}\n",
      ours, 1e3 / ours, gflop, gflop * ours, threads, static_cast<long long>(kBatch));
  std::fflush(stdout);

  if (!pytorch) return 0;
  const std::string command = python + " " + SEEDRL_BENCH_DIR +
                              "/pytorch_sac_update.py --threads " + std::to_string(threads) +
                              " --seconds " + std::to_string(seconds);
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    std::fprintf(stderr, "bench_sac: could not run %s\n", command.c_str());
    return 1;
  }
  char line[4096];
  double theirs = 0.0;
  std::string blas = "unknown";
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    std::fputs(line, stdout);
    const std::string text(line);
    if (const auto at = text.find("\"updates_per_s\":"); at != std::string::npos)
      theirs = std::stod(text.substr(at + 16));
    if (const auto at = text.find("\"blas\":"); at != std::string::npos) {
      const auto open = text.find('"', at + 7);
      if (open != std::string::npos)
        blas = text.substr(open + 1, text.find('"', open + 1) - open - 1);
    }
  }
  const int status = pclose(pipe);
  if (status != 0 || theirs <= 0.0) {
    std::fprintf(stderr, "bench_sac: %s failed (is python3-torch installed?)\n", command.c_str());
    return 1;
  }
  std::printf(
      "{\"bench\":\"sac_update_comparison\",\"seedrl_updates_per_s\":%.1f,"
      "\"pytorch_updates_per_s\":%.1f,\"speedup\":%.2f,\"threads\":%d,\"pytorch_blas\":\"%s\"}\n",
      ours, theirs, ours / theirs, threads, blas.c_str());
  return 0;
}
