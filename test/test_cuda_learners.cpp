// The CUDA backend's learners and whole runs against the CPU backend: one step of each learner
// (V-trace, R2D2, PPO with discrete and Gaussian policies, SAC with its five networks) from the
// same parameters and data must agree within the tolerances of support/cuda_conformance.hpp; a
// recurrent Policy acts as on the CPU; and the whole runtime learns Catch and MinAtar Breakout on
// the GPU past the CPU tests' thresholds. Needs a GPU: exits 77 (skipped) without one.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "seedrl/agents/ppo.hpp"
#include "seedrl/agents/r2d2.hpp"
#include "seedrl/agents/sac.hpp"
#include "seedrl/agents/vtrace.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/backend/cuda/backend.hpp"
#include "seedrl/experience/unroll_store.hpp"
#include "seedrl/policy/policy.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"
#include "support/cuda_conformance.hpp"
#include "support/example_defaults.hpp"
#include "support/minatar_learning.hpp"
#include "support/sac_fixtures.hpp"

using namespace seedrl;
using namespace seedrl::test;
using Cpu = cpu::Backend;
using Gpu = cuda::Backend;

namespace {

// Unrolls of random 2-D observations with episode ends, as actors would send: 3 discrete actions,
// or box actions of spec.action_dims, with behaviour (logits, or Gaussian mean and log std) and
// LSTM states where the spec stores them.
std::vector<std::unique_ptr<Unroll>> random_unrolls(const UnrollSpec& spec, int count,
                                                    std::uint64_t seed) {
  Rng rng(seed);
  UnrollStore store(count, spec);
  std::vector<std::unique_ptr<Unroll>> out;
  Tensor obs = Tensor::empty({2});
  std::vector<float> behaviour(static_cast<std::size_t>(spec.behaviour_size())),
      box(static_cast<std::size_t>(std::max<std::int64_t>(spec.action_dims, 1))),
      state_h(static_cast<std::size_t>(spec.state_size)),
      state_c(static_cast<std::size_t>(spec.state_size));
  for (std::int64_t t = 0; t < spec.length + 5; ++t)
    for (int slot = 0; slot < count; ++slot) {
      obs.data<float>()[0] = static_cast<float>(rng.uniform(-1, 1));
      obs.data<float>()[1] = static_cast<float>(rng.uniform(-1, 1));
      for (float& b : behaviour) b = static_cast<float>(rng.uniform(-1, 1));
      for (float& a : box) a = static_cast<float>(rng.normal());
      for (float& v : state_h) v = static_cast<float>(rng.uniform(-0.5, 0.5));
      for (float& v : state_c) v = static_cast<float>(rng.uniform(-0.5, 0.5));
      UnrollStep step;
      step.observation = obs;
      step.reward = static_cast<float>(rng.uniform(0, 1));
      step.flags =
          t == 0 ? step_flags::kFirst : (rng.uniform() < 0.1 ? step_flags::kTerminated : 0);
      const auto action = static_cast<std::int32_t>(rng.below(3));
      if (spec.action_dims > 0) {
        step.set_action(box.data(), box.size());
      } else {
        step.set_action(&action);
      }
      step.behaviour = spec.store_behaviour ? behaviour.data() : nullptr;
      step.state_h = spec.state_size > 0 ? state_h.data() : nullptr;
      step.state_c = spec.state_size > 0 ? state_c.data() : nullptr;
      if (auto u = store.append(slot, step)) out.push_back(std::move(u));
    }
  return out;
}

// Every network of two learners' sets (trained and targets), compared by name. A few Adam
// updates amplify summation-order differences a little: 1e-3 of the largest value.
template <class A>
void check_same_networks(Learner<A, Cpu>& cpu_learner, Learner<A, Gpu>& gpu_learner,
                         const std::string& when, double rtol = 1e-3) {
  const auto c = cpu_learner.networks().values();
  const auto g = gpu_learner.networks().values();
  REQUIRE(c.size() == g.size());
  for (std::size_t i = 0; i < c.size(); ++i) {
    REQUIRE(c[i].name == g[i].name);
    check_close(c[i].values, g[i].values, rtol, std::string(c[i].name) + " " + when);
  }
}

}  // namespace

TEST_CASE("V-trace learner: one step on the GPU equals the step on the CPU") {
  // c = 0.3: a fresh network's near-uniform policy is above 0.3 ln 3 on every frame, so the
  // bonus counts 0.3 ln 3 each and gives no gradient, on both devices.
  for (const float ceiling : {1.0f, 0.3f}) {
    CAPTURE(ceiling);
    VTraceAgentOptions o;
    o.network = nn::NetworkOptions::mlp(2, 3, {16});
    o.network.lstm_size = 8;
    o.network.seed = 5;
    o.batch_size = 4;
    o.loss.entropy_cost = 0.01f;
    o.loss.entropy_ceiling = ceiling;
    const VTraceAgent agent(o);
    InferenceServerOptions server;
    server.unroll_length = 6;
    const UnrollSpec spec = make_unroll_spec(agent, {{2}, DType::f32}, {3}, server);
    UnrollQueue cpu_queue(8), gpu_queue(8);
    Learner<VTraceAgent, Cpu> cpu_learner(agent, spec, cpu_queue);
    Learner<VTraceAgent, Gpu> gpu_learner(agent, spec, gpu_queue);
    const auto unrolls = random_unrolls(spec, 4, 61);
    REQUIRE(unrolls.size() >= 4);
    const std::span<const std::unique_ptr<Unroll>> batch(unrolls.data(), 4);
    const LearnerStepStats c = cpu_learner.train_on(batch);
    const LearnerStepStats g = gpu_learner.train_on(batch);
    CHECK(g.metrics["total_loss"] == doctest::Approx(c.metrics["total_loss"]).epsilon(1e-4));
    CHECK(g.metrics["entropy"] == doctest::Approx(c.metrics["entropy"]).epsilon(1e-4));
    CHECK(g.metrics["grad_norm"] == doctest::Approx(c.metrics["grad_norm"]).epsilon(1e-4));
    CHECK(g.metrics["transitions"] == c.metrics["transitions"]);
    CHECK(g.metrics["entropy_loss"] == doctest::Approx(c.metrics["entropy_loss"]).epsilon(1e-4));
    if (ceiling < 1.0f)
      CHECK(g.metrics["entropy_loss"] ==
            doctest::Approx(-0.01 * 0.3 * std::log(3.0)).epsilon(1e-5));
    check_close(cpu_learner.network().parameters().values(),
                gpu_learner.network().parameters().values(), kRtol, "parameters after the step");
  }
}

TEST_CASE("R2D2 learner: losses and priorities on the GPU equal those on the CPU") {
  R2D2AgentOptions o;
  o.network = nn::NetworkOptions::mlp(2, 3, {16});
  o.network.lstm_size = 8;
  o.network.q_head = true;
  o.network.policy_value_heads = false;
  o.network.dueling = true;
  o.network.seed = 7;
  o.batch_size = 4;
  o.n_step = 2;
  const R2D2Agent agent(o);
  InferenceServerOptions server;
  server.unroll_length = 5;
  server.burn_in = 2;
  const UnrollSpec spec = make_unroll_spec(agent, {{2}, DType::f32}, {3}, server);
  UnrollQueue cpu_queue(8), gpu_queue(8);
  Learner<R2D2Agent, Cpu> cpu_learner(agent, spec, cpu_queue);
  Learner<R2D2Agent, Gpu> gpu_learner(agent, spec, gpu_queue);
  const auto unrolls = random_unrolls(spec, 4, 71);
  REQUIRE(unrolls.size() >= 4);
  const std::span<const std::unique_ptr<Unroll>> batch(unrolls.data(), 4);
  const std::vector<float> weights{1.0f, 0.5f, 0.25f, 2.0f};
  const R2D2Loss c = cpu_learner.loss_and_gradients(batch, weights);
  const R2D2Loss g = gpu_learner.loss_and_gradients(batch, weights);
  CHECK(g.loss == doctest::Approx(c.loss).epsilon(1e-4));
  REQUIRE(c.priorities.size() == g.priorities.size());
  for (Eigen::Index i = 0; i < c.priorities.size(); ++i)
    CHECK(g.priorities(i) == doctest::Approx(c.priorities(i)).epsilon(1e-4));
  check_close(cpu_learner.network().parameters().grads(),
              gpu_learner.network().parameters().grads(), kGradRtol, "gradients");
}

TEST_CASE("PPO learner: epochs of minibatch updates on the GPU equal those on the CPU") {
  for (const bool gaussian : {false, true}) {
    CAPTURE(gaussian);
    PpoAgentOptions o;
    o.network = gaussian ? nn::NetworkOptions::mlp(2, 0, {16}).gaussian(2)
                         : nn::NetworkOptions::mlp(2, 3, {16});
    o.network.mlp_activation = nn::Activation::tanh;
    o.network.seed = 6;
    o.batch_size = 4;
    o.epochs = 2;
    o.minibatch_size = 8;
    const PpoAgent agent(o);
    InferenceServerOptions server;
    server.unroll_length = 6;
    const ActionSpec action = gaussian ? ActionSpec::box(2, -1.0f, 1.0f) : ActionSpec{3};
    const UnrollSpec spec = make_unroll_spec(agent, {{2}, DType::f32}, action, server);
    UnrollQueue cpu_queue(8), gpu_queue(8);
    Learner<PpoAgent, Cpu> cpu_learner(agent, spec, cpu_queue);
    Learner<PpoAgent, Gpu> gpu_learner(agent, spec, gpu_queue);
    const auto unrolls = random_unrolls(spec, 4, 81);
    REQUIRE(unrolls.size() >= 4);
    const std::span<const std::unique_ptr<Unroll>> batch(unrolls.data(), 4);
    const std::optional<LearnerStepStats> c = cpu_learner.train_on(batch);
    const std::optional<LearnerStepStats> g = gpu_learner.train_on(batch);
    REQUIRE(c.has_value());
    REQUIRE(g.has_value());
    for (const char* metric : {"total_loss", "entropy", "grad_norm"}) {
      CAPTURE(metric);
      CHECK(g->metrics[metric] == doctest::Approx(c->metrics[metric]).epsilon(1e-3));
    }
    check_same_networks(cpu_learner, gpu_learner, "after the step");
  }
}

TEST_CASE("SAC learner: updates of the actor, two critics, temperature and targets as on the CPU") {
  const SacAgent agent(sac::tiny_options());
  const UnrollSpec spec = sac::spec_for(agent);
  UnrollQueue cpu_queue(1), gpu_queue(1);
  Learner<SacAgent, Cpu> cpu_learner(agent, spec, cpu_queue);
  Learner<SacAgent, Gpu> gpu_learner(agent, spec, gpu_queue);
  // The same windows straight into both replays (no feeder thread): both sample the same ones.
  for (auto& u : sac::random_windows(spec, 40, 1)) cpu_learner.replay().insert(std::move(*u), 1.0);
  for (auto& u : sac::random_windows(spec, 40, 1)) gpu_learner.replay().insert(std::move(*u), 1.0);
  check_same_networks(cpu_learner, gpu_learner, "at the start", 0.0);
  for (int step = 0; step < 3; ++step) {
    const LearnerStepStats c = cpu_learner.train_on_sample();
    const LearnerStepStats g = gpu_learner.train_on_sample();
    CHECK_FALSE(g.skipped);
    CHECK(g.metrics["critic_loss"] == doctest::Approx(c.metrics["critic_loss"]).epsilon(1e-3));
    CHECK(gpu_learner.alpha() == doctest::Approx(cpu_learner.alpha()).epsilon(1e-4));
  }
  check_same_networks(cpu_learner, gpu_learner, "after three updates");
}

TEST_CASE("Policy: a recurrent checkpoint acts on the GPU as on the CPU") {
  R2D2AgentOptions o;
  o.network = nn::NetworkOptions::minatar(3, 4);
  o.network.lstm_size = 8;
  o.network.q_head = true;
  o.network.policy_value_heads = false;
  o.network.dueling = true;
  o.network.seed = 9;
  o.batch_size = 2;
  const R2D2Agent agent(o);
  InferenceServerOptions server;
  server.unroll_length = 4;
  server.burn_in = 2;
  const UnrollSpec spec = make_unroll_spec(agent, {{10, 10, 3}, DType::u8}, {4}, server);
  UnrollQueue queue(1);
  Learner<R2D2Agent, Cpu> learner(agent, spec, queue);
  const std::string path = "seedrl_cuda_policy_checkpoint.safetensors";
  learner.save_checkpoint(path, {});
  const PolicyOptions greedy{.acting = ActingOptions{ActionMode::greedy}};
  Policy<Cpu> on_cpu(path, greedy);
  Policy<Gpu> on_gpu_policy(path, greedy);
  Rng rng(5);
  for (int t = 0; t < 4; ++t) {
    const Tensor obs = random_tensor({3, 10, 10, 3}, rng, DType::u8);
    if (t == 2) {
      on_cpu.reset(1);
      on_gpu_policy.reset(1);
    }
    const std::vector<std::int32_t> a = on_cpu.act(obs);
    const std::vector<std::int32_t> b = on_gpu_policy.act(t % 2 ? on_gpu(obs) : obs);
    check_close(on_cpu.outputs().q, on_gpu_policy.outputs().q, kRtol, "Q-values");
    CHECK(a == b);
  }
  std::remove(path.c_str());
}

TEST_CASE("The whole runtime on the GPU: V-trace solves Catch") {
  const std::int64_t frames = 250000;
  const TrainingResult result = train_locally<VTraceAgent, Gpu>(
      VTraceAgent(test::example_vtrace_options(nn::NetworkOptions::mlp(50, 3), frames)),
      test::make_catch, test::example_run_options(frames));
  CAPTURE(result.mean_return);
  CHECK(result.mean_return > 0.9);  // random play averages about -0.6
}

TEST_CASE("The whole runtime on the GPU: V-trace learns MinAtar Breakout as on the CPU") {
  const TrainingResult result = test::vtrace_learns_breakout<Gpu>();
  MESSAGE("V-trace Breakout on the GPU after ", result.frames, " frames: ", result.mean_return,
          " (", result.fps, " frames/s)");
  CHECK(result.mean_return > test::kVTraceBreakoutReturn);
}

TEST_CASE("The whole runtime on the GPU: R2D2 learns MinAtar Breakout as on the CPU") {
  const TrainingResult result = test::r2d2_learns_breakout<Gpu>();
  MESSAGE("R2D2 Breakout on the GPU after ", result.frames, " frames: ", result.mean_return, " (",
          result.fps, " frames/s, ", result.learner_steps, " learner steps)");
  CHECK(result.mean_return > test::kR2D2BreakoutReturn);
}

int main(int argc, char** argv) {
  return seedrl::test::run_on_gpu(argc, argv);
}
