// The V-trace learner: transitions across episode ends, an update, checkpoints.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "seedrl/agents/vtrace.hpp"
#include "seedrl/core/atomic_file.hpp"
#include "seedrl/core/binary_io.hpp"
#include "seedrl/env/pendulum.hpp"
#include "seedrl/experience/unroll_store.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"
#include "support/runtime_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_vtrace_learner {

using namespace seedrl;
using namespace seedrl::test;

namespace {

constexpr std::uint8_t F = step_flags::kFirst, T = step_flags::kTerminated,
                       U = step_flags::kTruncated;

// A [L, B] batch with the given flags and rewards r[t, b] = 10 t + b.
UnrollBatch batch_with_flags(const std::vector<std::vector<std::uint8_t>>& columns) {
  const auto b_size = static_cast<std::int64_t>(columns.size());
  const auto length = static_cast<std::int64_t>(columns[0].size());
  UnrollBatch batch;
  batch.flags = Tensor::zeros({length, b_size}, DType::u8);
  batch.rewards = Tensor::zeros({length, b_size});
  batch.actions = Tensor::zeros({length, b_size}, DType::i32);
  batch.policy_versions = Tensor::zeros({length, b_size}, DType::i32);
  for (std::int64_t b = 0; b < b_size; ++b)
    for (std::int64_t t = 0; t < length; ++t) {
      batch.flags.data<std::uint8_t>()[t * b_size + b] =
          columns[static_cast<std::size_t>(b)][static_cast<std::size_t>(t)];
      batch.rewards.data<float>()[t * b_size + b] = static_cast<float>(10 * t + b);
    }
  return batch;
}

UnrollSpec spec_for(const VTraceAgent& agent, std::int64_t unroll) {
  InferenceServerOptions o;
  o.unroll_length = unroll;
  return make_unroll_spec(agent, {{2}, DType::f32}, {3}, o);
}

}  // namespace

TEST_CASE(
    "vtrace_inputs: terminated episodes stop, truncated ones bootstrap, boundaries are "
    "masked") {
  // Column 0: no episode end. Column 1: terminated at step 2. Column 2: truncated at step 2.
  const UnrollBatch batch = batch_with_flags({{F, 0, 0, 0}, {F, 0, T, F}, {F, 0, U, F}});
  std::vector<float> values(12);
  for (int i = 0; i < 12; ++i)
    values[static_cast<std::size_t>(i)] = 100.0f + static_cast<float>(i);  // V(t, b) = 100 + 3t + b
  const Transitions transitions = make_transitions(batch, 0, 3, 0.0f, 0);
  const VTraceInputs tr = vtrace_inputs(transitions, values.data(), 0.9f);
  REQUIRE(tr.rewards.rows() == 3);
  // Rewards are those received on arriving at t + 1.
  CHECK(tr.rewards(0, 0) == 10.0f);
  CHECK(tr.rewards(1, 1) == 21.0f);
  CHECK(tr.discounts(0, 0) == doctest::Approx(0.9f));
  CHECK(tr.discounts(1, 1) == 0.0f);  // arrives in a terminal state
  CHECK(tr.discounts(1, 2) ==
        doctest::Approx(0.9f));  // arrives in a truncated (non-terminal) state
  for (int b : {1, 2}) {         // step 2 is the boundary from the last observation to a reset
    CHECK(transitions.mask(2, b) == 0.0f);
    CHECK(tr.discounts(2, b) == 0.0f);
    CHECK(tr.rewards(2, b) == values[static_cast<std::size_t>(2 * 3 + b)]);
  }
  CHECK(transitions.mask(2, 0) == 1.0f);
  CHECK(tr.bootstrap(1) == values[3 * 3 + 1]);

  // On-policy V-trace over these transitions: the truncated episode bootstraps from V(x_2),
  // the terminated one does not, and neither lets the next episode leak back.
  const VTraceReturns vt =
      vtrace(Eigen::ArrayXXf::Zero(3, 3), tr.discounts, tr.rewards, tr.values, tr.bootstrap);
  CHECK(vt.vs(1, 1) == doctest::Approx(21.0));
  CHECK(vt.vs(1, 2) == doctest::Approx(22.0 + 0.9 * values[2 * 3 + 2]));
  CHECK(vt.vs(0, 2) == doctest::Approx(12.0 + 0.9 * vt.vs(1, 2)));
  CHECK(vt.vs(2, 1) ==
        doctest::Approx(values[2 * 3 + 1]));  // the boundary's target is its own value
  CHECK(vt.pg_advantages(2, 2) == doctest::Approx(0.0));

  const VTraceInputs clipped =
      vtrace_inputs(make_transitions(batch, 0, 3, 5.0f, 0), values.data(), 0.9f);
  CHECK(clipped.rewards(1, 0) == 5.0f);
}

TEST_CASE("Learner<VTraceAgent>: one update changes the parameters and publishes a new version") {
  const VTraceAgent agent = tiny_agent();
  const UnrollSpec spec = spec_for(agent, 4);
  UnrollQueue queue(8);
  Learner<VTraceAgent, Backend> learner(agent, spec, queue);
  const Tensor before = learner.network().parameters().values().clone();
  for (auto& u : random_unrolls(spec, 2, 1)) queue.push(std::move(u));
  const auto stats = learner.step();
  REQUIRE(stats);
  CHECK(stats->step == 1);
  CHECK(learner.parameters().version() == 1);
  CHECK(std::isfinite(stats->metrics["total_loss"]));
  CHECK(stats->metrics["grad_norm"] > 0.0);
  CHECK(stats->metrics["entropy"] >
        0.5);  // a fresh policy over 3 actions is close to uniform (ln 3 = 1.1)
  CHECK(stats->metrics["transitions"] > 0);
  CHECK(stats->metrics["transitions"] <= 2 * 4);
  CHECK(stats->metrics["policy_lag"] == 0.0);
  CHECK((learner.network().parameters().values().flat<float>() - before.flat<float>())
            .abs()
            .maxCoeff() > 0.0f);
  queue.close();
  CHECK_FALSE(learner.step());
}

TEST_CASE("Learner<VTraceAgent>: an entropy ceiling caps the bonus; box actions refuse it") {
  // A fresh policy over 3 actions is near uniform: above 0.3 ln 3 on every frame, so the bonus
  // counts 0.3 ln 3 for each; at c = 1 it counts the whole entropy.
  VTraceAgentOptions o = tiny_agent().options();
  o.loss.entropy_cost = 0.01f;
  const UnrollSpec spec = spec_for(VTraceAgent(o), 4);
  const auto unrolls = random_unrolls(spec, 2, 1);
  for (const float ceiling : {1.0f, 0.3f}) {
    CAPTURE(ceiling);
    o.loss.entropy_ceiling = ceiling;
    UnrollQueue queue(2);
    Learner<VTraceAgent, Backend> learner(VTraceAgent(o), spec, queue);
    const LearnerStepStats stats = learner.train_on(unrolls);
    const double counted = ceiling < 1.0f ? 0.3 * std::log(3.0) : stats.metrics["entropy"];
    CHECK(stats.metrics["entropy_loss"] == doctest::Approx(-0.01 * counted).epsilon(1e-5));
    CHECK(stats.metrics["entropy"] > 0.5);
  }
  o.network = nn::NetworkOptions::mlp(2, 0, {8}).gaussian(2);
  o.loss.entropy_ceiling = 0.9f;
  const VTraceAgent box(o);
  UnrollQueue queue(2);
  CHECK_THROWS_WITH_AS(
      (Learner<VTraceAgent, Backend>(
          box, make_unroll_spec(box, {{2}, DType::f32}, ActionSpec::box(2, -1.0f, 1.0f), {}),
          queue)),
      doctest::Contains("entropy_ceiling 0.9 applies to discrete actions"), Error);
}

TEST_CASE(
    "Learner<VTraceAgent>: checkpoint round trip restores parameters, optimizer state and "
    "counters") {
  const VTraceAgent agent = tiny_agent(/*lstm=*/4);
  const UnrollSpec spec = spec_for(agent, 3);
  UnrollQueue queue(8);
  Learner<VTraceAgent, Backend> a(agent, spec, queue);
  for (int i = 0; i < 3; ++i)
    a.train_on(random_unrolls(spec, 2, static_cast<std::uint64_t>(10 + i)));
  const auto dir = std::filesystem::temp_directory_path() / "seedrl_test_learner_ckpt";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "checkpoint.safetensors").string();
  a.save_checkpoint(path, {1234, 0, 56, {}, {}});

  Learner<VTraceAgent, Backend> b(tiny_agent(4, /*seed=*/99), spec, queue);
  const io::CheckpointCounters counters = b.load_checkpoint(path);
  CHECK(counters.frames == 1234);
  CHECK(counters.episodes == 56);
  CHECK(counters.learner_steps == 3);
  CHECK(b.steps() == 3);
  CHECK(b.parameters().version() == 3);
  CHECK((a.network().parameters().values().flat<float>() ==
         b.network().parameters().values().flat<float>())
            .all());
  CHECK(b.optimizer().steps() == 3);
  // Same state, same batch: the same update (the optimizer's moments came back too).
  const auto batch = random_unrolls(spec, 2, 77);
  a.train_on(batch);
  b.train_on(batch);
  CHECK((a.network().parameters().values().flat<float>() -
         b.network().parameters().values().flat<float>())
            .abs()
            .maxCoeff() < 1e-6f);

  // A truncated file is refused, naming it, and the learner is left as it was.
  const std::string data = read_file(path);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size() / 2));
  }
  const Tensor kept = b.network().parameters().values().clone();
  CHECK_THROWS_WITH_AS(b.load_checkpoint(path), doctest::Contains(path.c_str()), Error);
  CHECK((kept.flat<float>() == b.network().parameters().values().flat<float>()).all());
  CHECK(b.steps() == 4);

  // A checkpoint of another network is refused with the reason.
  write_file_atomically(path, data);
  VTraceAgentOptions other = agent.options();
  other.network.mlp_hidden = {16};
  const VTraceAgent other_agent(other);
  Learner<VTraceAgent, Backend> c(other_agent, spec, queue);
  CHECK_THROWS_WITH_AS(c.load_checkpoint(path), doctest::Contains("was written with network"),
                       Error);
  std::filesystem::remove_all(dir);
}

TEST_CASE("Learner<VTraceAgent>: box actions train a Gaussian policy from the recorded behaviour") {
  VTraceAgentOptions o;
  o.network = nn::NetworkOptions::mlp(2, 0, {8}).gaussian(2);
  o.network.seed = 2;
  o.batch_size = 3;
  o.loss.entropy_cost = 0.01f;
  const VTraceAgent agent(o);
  InferenceServerOptions so;
  so.unroll_length = 4;
  const UnrollSpec spec =
      make_unroll_spec(agent, {{2}, DType::f32}, ActionSpec::box(2, -1.0f, 1.0f), so);
  REQUIRE(spec.action_dims == 2);
  UnrollQueue queue(4);
  Learner<VTraceAgent, Backend> learner(agent, spec, queue);
  // Unrolls acted by the learner's own policy (rho = 1 wherever the draw is likely).
  Rng rng(4);
  UnrollStore store(3, spec);
  std::vector<std::unique_ptr<Unroll>> unrolls;
  nn::Network<Backend> acting(agent.network_config());
  acting.parameters().copy_values_from(learner.network().parameters());
  for (std::int64_t t = 0; t < spec.length; ++t) {
    for (int slot = 0; slot < 3; ++slot) {
      Tensor obs = Tensor::empty({1, 1, 2});
      obs.data<float>()[0] = static_cast<float>(rng.uniform(-1, 1));
      obs.data<float>()[1] = static_cast<float>(rng.uniform(-1, 1));
      const nn::NetworkOutputs& out = acting.forward(obs);
      float behaviour[4], action[2];
      for (int d = 0; d < 2; ++d) {
        behaviour[d] = out.mean.data<float>()[d];
        behaviour[2 + d] = out.log_std.data<float>()[d];
        action[d] = behaviour[d] + static_cast<float>(rng.normal());
      }
      UnrollStep step;
      step.observation = obs.reshape({2});
      step.reward = action[0] > 0.0f ? 1.0f : 0.0f;  // reward the first dimension's sign
      step.flags = t == 0 ? F : 0;
      step.set_action(action, 2);
      step.behaviour = behaviour;
      if (auto u = store.append(slot, step)) unrolls.push_back(std::move(u));
    }
  }
  REQUIRE(unrolls.size() == 3);
  const Tensor before = learner.network().parameters().values().clone();
  const LearnerStepStats stats = learner.train_on(unrolls);
  CHECK_FALSE(stats.skipped);
  CHECK(learner.steps() == 1);
  for (const Metric& m : stats.metrics.items()) CHECK(std::isfinite(m.value));
  // entropy of a unit Gaussian in 2 dimensions: 2 (1 + log 2 pi) / 2
  CHECK(stats.metrics["entropy"] == doctest::Approx(1.0 + std::log(2.0 * M_PI)).epsilon(1e-4));
  CHECK((before.flat<float>() - learner.network().parameters().values().flat<float>())
            .abs()
            .maxCoeff() > 0.0f);
}

TEST_CASE("train_locally: V-trace learns Pendulum with a Gaussian policy" *
          doctest::test_suite("learning")) {
  const std::int64_t frames = 300'000;
  VTraceAgentOptions o;  // examples/pendulum_ppo --agent vtrace
  o.network = nn::NetworkOptions::mlp(3, 0).gaussian(1);
  o.network.seed = 1;
  o.batch_size = 8;
  o.discount = 0.9f;
  o.loss.baseline_cost = 0.5f;
  o.loss.entropy_cost = 0.0f;
  o.max_grad_norm = 0.5;
  o.optimizer.adam.epsilon = 1e-5f;
  o.learning_rate = {1e-3, frames / (8 * 16), 0.0};
  o.normalization.observations = true;
  o.normalization.rewards = true;
  LocalTrainerOptions run;
  run.total_frames = frames;
  run.num_actors = 1;
  run.envs_per_actor = 16;
  run.server.unroll_length = 16;
  run.server.seed = 1;
  const TrainingResult result = train_locally<VTraceAgent, Backend>(
      VTraceAgent(o),
      [](std::int32_t, std::int32_t e) { return Pendulum(static_cast<std::uint64_t>(50 + e)); },
      run);
  CAPTURE(result.mean_return);
  // Random play averages about -1200; this reaches about -250 (docs/results.md).
  CHECK(result.mean_return > -600.0);
}

}  // namespace test_vtrace_learner
