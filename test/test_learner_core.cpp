// What every learner shares (learner/learner_core.hpp): steps that are skipped, not applied, when
// something is not finite, and the gradient reducer of a learner group. (The transitions and the
// metrics: test_transitions.cpp, test_learner_metrics.cpp.)
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "seedrl/agents/r2d2.hpp"
#include "seedrl/agents/vtrace.hpp"
#include "seedrl/experience/unroll_store.hpp"
#include "seedrl/inference/inference_server.hpp"
#include "support/runtime_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_learner_core {

using namespace seedrl;
using namespace seedrl::test;

namespace {

constexpr std::uint8_t F = step_flags::kFirst;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// What to put into step `step` of every unroll.
struct Poison {
  std::int64_t step = -1;
  float observation = 0.0f;  ///< observation entry 0 (when not 0)
  float reward = 0.0f;       ///< the step's reward (when not 0)
};

// Unrolls of a 2-float observation, 3 actions, T + 1 steps, from a store as inference builds
// them, with `poison` in one step.
std::vector<std::unique_ptr<Unroll>> unrolls(const UnrollSpec& spec, int count, std::uint64_t seed,
                                             Poison poison = {}) {
  Rng rng(seed);
  UnrollStore store(count, spec);
  std::vector<std::unique_ptr<Unroll>> out;
  Tensor obs = Tensor::empty({2});
  float logits[3] = {0.1f, -0.2f, 0.3f};
  std::vector<float> state(static_cast<std::size_t>(std::max<std::int64_t>(spec.state_size, 1)));
  for (std::int64_t t = 0; t < spec.length; ++t)
    for (int slot = 0; slot < count; ++slot) {
      const bool poisoned = t == poison.step;
      obs.data<float>()[0] = poisoned && poison.observation != 0.0f
                                 ? poison.observation
                                 : static_cast<float>(rng.uniform(-1, 1));
      obs.data<float>()[1] = static_cast<float>(rng.uniform(-1, 1));
      UnrollStep s;
      s.observation = obs;
      s.reward =
          poisoned && poison.reward != 0.0f ? poison.reward : static_cast<float>(rng.uniform(0, 1));
      s.flags = t == 0 ? F : 0;
      const auto action = static_cast<std::int32_t>(rng.below(3));
      s.set_action(&action);
      s.behaviour = spec.store_behaviour ? logits : nullptr;
      s.state_h = spec.state_size > 0 ? state.data() : nullptr;
      s.state_c = s.state_h;
      if (auto u = store.append(slot, s)) out.push_back(std::move(u));
    }
  return out;
}

std::vector<float> values_of(nn::ParameterStore& store) {
  const float* v = store.values().data<float>();
  return {v, v + store.values().numel()};
}

}  // namespace

TEST_CASE("V-trace learner: a batch that makes the loss or the gradient non-finite is skipped") {
  const VTraceAgent agent = tiny_agent();
  InferenceServerOptions server;
  server.unroll_length = 4;
  const UnrollSpec spec = make_unroll_spec(agent, {{2}, DType::f32}, {3}, server);
  UnrollQueue queue(8);
  Learner<VTraceAgent, Backend> learner(agent, spec, queue);
  const std::vector<float> before = values_of(learner.network().parameters());

  // A finite but enormous reward: the value loss overflows to infinity.
  const Poison huge_reward{2, 0.0f, std::numeric_limits<float>::max()};
  const LearnerStepStats overflow = learner.train_on(unrolls(spec, 2, 1, huge_reward));
  CHECK(overflow.skipped);
  CHECK(overflow.step == 0);
  CHECK_FALSE(std::isfinite(overflow.metrics["total_loss"]));
  CHECK(overflow.metrics["skipped_steps"] == 1.0);
  CHECK(learner.steps() == 0);
  CHECK(learner.skipped_steps() == 1);
  CHECK(learner.parameters().version() == 0);
  CHECK(values_of(learner.network().parameters()) == before);  // nothing applied

  // A NaN observation: the ReLUs may hide it from the loss, not from the first layer's gradient.
  const LearnerStepStats nan_gradient = learner.train_on(unrolls(spec, 2, 2, {1, kNaN, 0.0f}));
  CHECK(nan_gradient.skipped);
  CHECK_FALSE(std::isfinite(nan_gradient.metrics["grad_norm"]));
  CHECK(values_of(learner.network().parameters()) == before);

  // The run goes on: the next good batch trains as usual.
  const LearnerStepStats good = learner.train_on(unrolls(spec, 2, 3));
  CHECK_FALSE(good.skipped);
  CHECK(good.step == 1);
  CHECK(good.metrics["skipped_steps"] == 2.0);
  CHECK(values_of(learner.network().parameters()) != before);
}

namespace {

// A stand-in for a group of learners: records what it was given, and replaces the gradients by
// `scale` times themselves (as if the other members had gradients of that sum) or by NaN where
// the step was unusable, as seedrl::mpi::LearnerGroup does.
struct RecordingReducer : GradientReducer {
  float scale = 1.0f;
  std::vector<float> seen;
  std::vector<bool> finite;
  void all_reduce(const Tensor& gradients, bool ok) override {
    seen.assign(gradients.data<float>(), gradients.data<float>() + gradients.numel());
    finite.push_back(ok);
    gradients.flat<float>() *= scale;
    if (!ok) gradients.data<float>()[0] = kNaN;
  }
};

}  // namespace

TEST_CASE("LearnerCore: a gradient reducer gets the flat gradients before the clip and update") {
  const VTraceAgent agent = tiny_agent();
  InferenceServerOptions server;
  server.unroll_length = 4;
  const UnrollSpec spec = make_unroll_spec(agent, {{2}, DType::f32}, {3}, server);
  UnrollQueue queue(8);
  Learner<VTraceAgent, Backend> alone(agent, spec, queue), grouped(agent, spec, queue);
  RecordingReducer reducer;
  reducer.scale = 0.5f;
  grouped.set_gradient_reducer(&reducer);
  CHECK(grouped.gradient_reducer() == &reducer);

  // The reducer sees the learner's own gradient (as alone computes it), and the update and the
  // reported norm use what it returns.
  const LearnerStepStats a = alone.train_on(unrolls(spec, 2, 5));
  const LearnerStepStats g = grouped.train_on(unrolls(spec, 2, 5));
  REQUIRE(reducer.seen.size() ==
          static_cast<std::size_t>(grouped.network().parameters().grads().numel()));
  CHECK(reducer.finite == std::vector<bool>{true});
  CHECK_FALSE(g.skipped);
  // The unclipped norm of the reduced gradient is half the learner's own (tiny_agent clips at
  // 40, far above these norms).
  CHECK(g.metrics["grad_norm"] == doctest::Approx(0.5 * a.metrics["grad_norm"]).epsilon(1e-5));

  // A step this learner cannot use is handed on as such, and every member skips it.
  const std::vector<float> before = values_of(grouped.network().parameters());
  const LearnerStepStats bad =
      grouped.train_on(unrolls(spec, 2, 6, {2, 0.0f, std::numeric_limits<float>::max()}));
  CHECK(reducer.finite == std::vector<bool>{true, false});
  CHECK(bad.skipped);
  CHECK(values_of(grouped.network().parameters()) == before);
}

TEST_CASE("R2D2 learner: sequences without a finite priority are dropped, such steps skipped") {
  R2D2AgentOptions o;
  o.network = nn::NetworkOptions::mlp(2, 3, {8});  // no LSTM: it would saturate what follows
  o.network.policy_value_heads = false;
  o.network.q_head = true;
  o.n_step = 1;  // every step bootstraps from the next one's Q
  o.batch_size = 2;
  o.replay_capacity = 16;
  o.min_replay_size = 2;
  const R2D2Agent agent(o);
  InferenceServerOptions server;
  server.unroll_length = 3;
  server.burn_in = 1;
  const UnrollSpec spec = make_unroll_spec(agent, {{2}, DType::f32}, {3}, server);
  UnrollQueue queue(8);
  Learner<R2D2Agent, Backend> learner(agent, spec, queue);

  // An observation of 1e36 makes its step's Q about as large, and h^-1 of that (about 1000 times
  // more: the bootstrap of the step before) overflows: the priority is not finite. Such a sequence
  // is dropped and counted; the others go in.
  const Poison enormous{2, 1e36f, 0.0f};
  auto good = unrolls(spec, 3, 1);
  auto bad = unrolls(spec, 1, 2, enormous);
  REQUIRE_FALSE(std::isfinite(learner.sequence_priorities_of(bad)(0)));
  std::vector<std::unique_ptr<Unroll>> incoming;
  for (auto& u : good) incoming.push_back(std::move(u));
  incoming.push_back(std::move(bad[0]));
  learner.insert(incoming);
  CHECK(learner.replay().size() == 3);
  CHECK(learner.dropped() == 1);
  CHECK(learner.inserted() == 3);
  const LearnerStepStats trained = learner.train_on_sample();
  CHECK_FALSE(trained.skipped);
  CHECK(learner.steps() == 1);

  // Such a sequence already in the replay (say, prioritised by an older network): the step that
  // samples it is skipped, and its priority and the parameters stay as they were.
  Learner<R2D2Agent, Backend> other(agent, spec, queue);
  auto poisoned = unrolls(spec, 1, 3, enormous);
  const std::uint64_t index = other.replay().insert(std::move(*poisoned[0]), 0.5);
  const std::vector<float> before = values_of(other.network().parameters());
  const LearnerStepStats stats = other.train_on_sample();
  CHECK(stats.skipped);
  CHECK_FALSE(std::isfinite(stats.metrics["loss"]));
  CHECK(other.skipped_steps() == 1);
  CHECK(other.replay().priority(index) == 0.5);
  CHECK(values_of(other.network().parameters()) == before);
}

}  // namespace test_learner_core
