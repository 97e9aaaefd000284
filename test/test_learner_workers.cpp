// Learner workers and micro-batches: the learners that split batches (V-trace, R2D2) get the whole
// batch's gradient, metrics and priorities from micro-batches, and the number of threads does not
// change a bit of the result. (The WorkerTeam that runs them: test_worker_team.cpp. Also run under
// ThreadSanitizer in CI.)
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "seedrl/agents/ppo.hpp"
#include "seedrl/core/float_mode.hpp"
#include "seedrl/learner/worker_team.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/training_session.hpp"
#include "support/r2d2_fixtures.hpp"
#include "support/runtime_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_learner_workers {

using namespace seedrl;
using Backend = cpu::Backend;

namespace {

std::vector<float> grads_of(nn::ParameterStore& store) {
  const Tensor& g = store.grads();
  return {g.data<float>(), g.data<float>() + g.numel()};
}
std::vector<float> values_of(nn::ParameterStore& store) {
  const Tensor& v = store.values();
  return {v.data<float>(), v.data<float>() + v.numel()};
}

// max |a - b| relative to max |a|, and max |a|.
std::pair<double, double> relative_difference(const std::vector<float>& a,
                                              const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double diff = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(a[i]) - b[i]));
    norm = std::max(norm, std::abs(static_cast<double>(a[i])));
  }
  return {norm > 0.0 ? diff / norm : diff, norm};
}

double metric(const LearnerStepStats& s, std::string_view name) {
  return s.metrics[name];
}

}  // namespace

TEST_CASE("V-trace learner: micro-batches give the whole batch's update; workers change no bit") {
  VTraceAgentOptions o = test::tiny_agent().options();
  o.batch_size = 6;
  o.max_grad_norm = 0.0;  // compare the gradients as computed, not clipped
  const VTraceAgent agent(o);
  InferenceServerOptions server;
  server.unroll_length = 7;
  const UnrollSpec spec = make_unroll_spec(agent, {{2}, DType::f32}, {3}, server);
  // Terminations make the unrolls' transition counts differ: the micro-batches' means must be
  // weighted by them, not averaged.
  const auto unrolls = test::random_unrolls(spec, 6, 17, 0.3);
  std::set<std::int64_t> counts;
  for (const auto& u : unrolls) {
    std::int64_t boundaries = 0;
    for (std::int64_t t = 0; t + 1 < spec.length; ++t)
      boundaries += is_last(u->flags.data<std::uint8_t>()[t]);
    counts.insert(boundaries);
  }
  REQUIRE(counts.size() > 1);

  UnrollQueue queue(1);
  Learner<VTraceAgent, Backend> whole(agent, spec, queue), parts(agent, spec, queue),
      threaded(agent, spec, queue);
  parts.set_workers(1, 3);
  threaded.set_workers(2, 3);
  CHECK(threaded.workers() == 2);
  CHECK(threaded.micro_batches() == 3);
  for (int step = 0; step < 3; ++step) {
    CAPTURE(step);
    const LearnerStepStats a = whole.train_on(unrolls);
    const LearnerStepStats b = parts.train_on(unrolls);
    const LearnerStepStats c = threaded.train_on(unrolls);
    const auto [diff, norm] = relative_difference(grads_of(whole.network().parameters()),
                                                  grads_of(parts.network().parameters()));
    CHECK(norm > 1e-3);
    CHECK(diff < 2e-5);
    for (const char* name : {"total_loss", "policy_loss", "baseline_loss", "entropy"}) {
      CAPTURE(name);
      CHECK(metric(b, name) == doctest::Approx(metric(a, name)).epsilon(1e-5));
    }
    CHECK(metric(b, "transitions") == metric(a, "transitions"));
    CHECK(metric(b, "policy_lag") == doctest::Approx(metric(a, "policy_lag")));
    // The same micro-batches on two threads: the same sums in the same order.
    CHECK(grads_of(threaded.network().parameters()) == grads_of(parts.network().parameters()));
    CHECK(values_of(threaded.network().parameters()) == values_of(parts.network().parameters()));
    CHECK(metric(c, "total_loss") == metric(b, "total_loss"));
    CHECK(c.step == a.step);
  }
}

TEST_CASE("R2D2 learner: micro-batches of a sample give its gradient, priorities and metrics") {
  R2D2AgentOptions o = test::tiny_options();
  o.batch_size = 8;
  o.replay_capacity = 32;
  o.max_grad_norm = 0.0;
  o.concurrent_insertion = false;
  const R2D2Agent agent(o);
  const UnrollSpec spec = test::spec_for(agent, 2, 5);
  UnrollQueue queue(1);
  Learner<R2D2Agent, Backend> whole(agent, spec, queue), threaded(agent, spec, queue);
  threaded.set_workers(2, 3);  // parts of 2, 3 and 3 sequences
  auto a = test::random_sequences(spec, 12, 31), b = test::random_sequences(spec, 12, 31);
  whole.insert(a);
  threaded.insert(b);
  for (std::uint64_t i = 0; i < 12; ++i)
    REQUIRE(threaded.replay().priority(i) == whole.replay().priority(i));

  for (int step = 0; step < 3; ++step) {  // the same replay seed: the same samples
    CAPTURE(step);
    const LearnerStepStats sa = whole.train_on_sample();
    const LearnerStepStats sb = threaded.train_on_sample();
    const auto [diff, norm] = relative_difference(grads_of(whole.network().parameters()),
                                                  grads_of(threaded.network().parameters()));
    CHECK(norm > 1e-4);
    CHECK(diff < 2e-5);
    for (const char* name : {"loss", "mean_q", "mean_priority"}) {
      CAPTURE(name);
      CHECK(metric(sb, name) == doctest::Approx(metric(sa, name)).epsilon(1e-5));
    }
    CHECK(metric(sb, "transitions") == metric(sa, "transitions"));
    for (std::uint64_t i = 0; i < 12; ++i) {
      CAPTURE(i);
      CHECK(threaded.replay().priority(i) ==
            doctest::Approx(whole.replay().priority(i)).epsilon(1e-5));
    }
  }
}

TEST_CASE("Learner workers: refused by name where they cannot work") {
  PpoAgentOptions po;
  po.network = nn::NetworkOptions::mlp(2, 3, {8});
  const PpoAgent ppo(po);
  InferenceServerOptions server;
  server.unroll_length = 4;
  UnrollQueue queue(1);
  Learner<PpoAgent, Backend> learner(ppo, make_unroll_spec(ppo, {{2}, DType::f32}, {3}, server),
                                     queue);
  CHECK_THROWS_WITH_AS(learner.set_workers(2, 2), doctest::Contains("trains on whole batches"),
                       Error);
  CHECK_THROWS_WITH_AS(learner.set_workers(1, 2), doctest::Contains("trains on whole batches"),
                       Error);
  learner.set_workers(1, 1);  // what every learner does

  const VTraceAgent vtrace = test::tiny_agent();
  Learner<VTraceAgent, Backend> v(vtrace, make_unroll_spec(vtrace, {{2}, DType::f32}, {3}, server),
                                  queue);
  CHECK_THROWS_WITH_AS(v.set_workers(0, 1), doctest::Contains("learner workers must be >= 1"),
                       Error);
  CHECK_THROWS_WITH_AS(v.set_workers(1, 0), doctest::Contains("micro-batches must be >= 1"), Error);

  TrainingSessionOptions bad;
  bad.learner_workers = 0;
  CHECK_THROWS_WITH_AS(bad.validate(), doctest::Contains("learner_workers"), Error);
  bad = {};
  bad.micro_batches = -1;
  CHECK_THROWS_WITH_AS(bad.validate(), doctest::Contains("micro_batches"), Error);
}

}  // namespace test_learner_workers
