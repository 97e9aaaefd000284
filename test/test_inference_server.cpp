// InferenceServer: dynamic batching, slot restarts, evaluation slots, hostile requests,
// back-pressure and shutdown, the parameters it acts with, the Q-values it records for R2D2's
// actor priorities. (Also run under ThreadSanitizer in CI.)
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <thread>

#include "seedrl/agents/ppo.hpp"
#include "support/r2d2_fixtures.hpp"
#include "support/runtime_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_inference_server {

using namespace seedrl;
using namespace seedrl::test;
using namespace std::chrono_literals;

namespace {

InferenceServerOptions options(std::int32_t max_batch, std::chrono::microseconds timeout,
                               std::int64_t unroll = 3) {
  InferenceServerOptions o;
  o.max_slots = 16;
  o.max_batch = max_batch;
  o.batch_timeout = timeout;
  o.unroll_length = unroll;
  return o;
}

}  // namespace

// Serving at once is tested with a timeout of an hour (a wait for it would run into the test's
// CTest timeout), and waiting by what is batched together: no test asserts on elapsed time.

TEST_CASE("InferenceServer: a partial batch is served after batch_timeout") {
  ServerFixture f(tiny_agent(), options(16, 20ms));
  Connection a, b;
  REQUIRE(f.server.connect(connect_request(1, 2), &a).is_ok());
  REQUIRE(f.server.connect(connect_request(2, 2), &b).is_ok());  // connected, but never steps
  StepBuffers buffers(2);
  REQUIRE(buffers.step(f.server, a).is_ok());  // only the timeout can serve it
  CHECK(buffers.actions[0] >= 0);
  CHECK(buffers.actions[1] < 3);
  const InferenceServerStats stats = f.server.stats();
  CHECK(stats.batches == 1);
  CHECK(stats.frames == 2);
  CHECK(stats.timeouts == 1);
}

TEST_CASE(
    "InferenceServer: a full batch, or every connected environment waiting, is served at once") {
  ServerFixture f(tiny_agent(), options(4, 1h));
  Connection a, b;
  REQUIRE(f.server.connect(connect_request(1, 2), &a).is_ok());
  REQUIRE(f.server.connect(connect_request(2, 2), &b).is_ok());
  StepBuffers ba(2), bb(2);
  std::thread other([&] { CHECK(bb.step(f.server, b).is_ok()); });
  CHECK(ba.step(f.server, a).is_ok());
  other.join();
  CHECK(f.server.stats().batches == 1);  // whoever came first waited for the other
  CHECK(f.server.stats().frames == 4);
  // With b gone, a alone is everything that can come: no waiting either.
  f.server.disconnect(b);
  CHECK(ba.step(f.server, a).is_ok());
  CHECK(f.server.stats().batches == 2);
  // Nor for an evaluating actor: it rides along when it steps, but is never waited for.
  Connection e;
  REQUIRE(f.server.connect(connect_request(3, 2, -1, /*evaluation=*/true), &e).is_ok());
  CHECK(ba.step(f.server, a).is_ok());
  CHECK(f.server.stats().batches == 3);
}

TEST_CASE(
    "InferenceServer: a new connection restarts the slot (state zeroed, partial unroll dropped)") {
  const VTraceAgent agent = tiny_agent(/*lstm=*/4);
  ServerFixture f(agent, options(8, 1ms, /*unroll=*/3));
  ServerFixture fresh(agent, options(8, 1ms, 3));
  Connection c, c_fresh;
  REQUIRE(f.server.connect(connect_request(1, 1, 0), &c).is_ok());
  REQUIRE(fresh.server.connect(connect_request(9, 1, 0), &c_fresh).is_ok());
  StepBuffers s(1), s_fresh(1);
  // Run 1: three steps (an unroll needs four), the LSTM state moves away from zero.
  for (int k = 0; k < 3; ++k) {
    s.observations.data<float>()[0] = static_cast<float>(k);
    s.flags[0] = k == 0 ? step_flags::kFirst : 0;
    REQUIRE(s.step(f.server, c).is_ok());
  }
  // Run 2 reconnects to the same slot and starts mid-episode on purpose: only the new connection
  // can zero the state.
  f.server.disconnect(c);
  REQUIRE(f.server.connect(connect_request(2, 1, 0), &c).is_ok());
  for (int k = 10; k < 14; ++k) {
    s.observations.data<float>()[0] = static_cast<float>(k);
    s.flags[0] = 0;
    REQUIRE(s.step(f.server, c).is_ok());
    s_fresh.observations.copy_from(s.observations);
    s_fresh.flags[0] = 0;
    REQUIRE(s_fresh.step(fresh.server, c_fresh).is_ok());
  }
  auto unroll = f.queue.pop_for(5s);
  auto expected = fresh.queue.pop_for(5s);
  REQUIRE(unroll);
  REQUIRE(expected);
  CHECK(f.queue.size() == 0);  // nothing left from run 1
  for (int t = 0; t < 4; ++t) {
    CHECK((*unroll)->observations[t].data<float>()[0] == static_cast<float>(10 + t));
    for (int a = 0; a < 3; ++a) {
      // The same logits as a slot that never saw run 1.
      CHECK((*unroll)->behaviour[t].data<float>()[a] ==
            doctest::Approx((*expected)->behaviour[t].data<float>()[a]));
    }
  }
  CHECK((*unroll)->initial_state.h.flat<float>().abs().maxCoeff() == 0.0f);
}

TEST_CASE(
    "InferenceServer: evaluation slots act greedily and store nothing; training slots sample") {
  ServerFixture f(tiny_agent(), options(8, 1ms, 2), /*queue_capacity=*/4096);
  // Make action 2 the most likely by far, action 1 second.
  nn::Parameter& bias = f.learner_net.parameters().find("policy.bias");
  bias.value.data<float>()[1] = 2.0f;
  bias.value.data<float>()[2] = 4.0f;
  f.learner_net.parameters().bump_version();
  Connection eval, train;
  REQUIRE(f.server.connect(connect_request(1, 2, -1, true), &eval).is_ok());
  REQUIRE(f.server.connect(connect_request(2, 2), &train).is_ok());
  StepBuffers se(2), st(2);
  int counts[3] = {0, 0, 0};
  for (int k = 0; k < 200; ++k) {
    se.flags.assign(2, k == 0 ? step_flags::kFirst : 0);
    st.flags.assign(2, k == 0 ? step_flags::kFirst : 0);
    REQUIRE(se.step(f.server, eval).is_ok());
    CHECK(se.actions[0] == 2);
    CHECK(se.actions[1] == 2);
    REQUIRE(st.step(f.server, train).is_ok());
    for (int a : st.actions) ++counts[a];
  }
  // Sampling follows softmax(0, 2, 4) = (0.016, 0.117, 0.867) over 400 draws.
  CHECK(counts[2] > 300);
  CHECK(counts[1] > 20);
  CHECK(counts[0] < 30);
  // Unrolls come from the training slots only.
  std::size_t unrolls = 0;
  while (auto u = f.queue.pop_for(0ms)) {
    CHECK((*u)->slot >= train.first_slot);
    CHECK((*u)->slot < train.first_slot + train.num_envs);
    ++unrolls;
  }
  CHECK(unrolls > 0);
}

TEST_CASE("InferenceServer: bad requests get invalid_argument while a good actor keeps going") {
  ServerFixture f(tiny_agent(), options(4, 1ms, 2), /*queue_capacity=*/4096);
  Connection good;
  REQUIRE(f.server.connect(connect_request(1, 2, 0), &good).is_ok());
  std::atomic<bool> stop{false};
  std::atomic<int> good_steps{0};
  std::thread good_actor([&] {
    StepBuffers s(2);
    while (!stop) {
      if (!s.step(f.server, good).is_ok()) break;
      s.flags.assign(2, 0);
      ++good_steps;
    }
  });

  Connection c;
  ConnectRequest wrong_obs = connect_request(2, 1);
  wrong_obs.spec.observation = {{3}, DType::f32};
  CHECK(f.server.connect(wrong_obs, &c).is_invalid_argument());
  ConnectRequest wrong_actions = connect_request(2, 1);
  wrong_actions.spec.action = {4};
  CHECK(f.server.connect(wrong_actions, &c).is_invalid_argument());
  CHECK(f.server.connect(connect_request(2, 1, 0), &c).is_invalid_argument());  // slot 0 is taken
  CHECK(f.server.connect(connect_request(2, 5), &c)
            .is_invalid_argument());  // more envs than max_batch
  CHECK(f.server.connect(connect_request(2, 1, 15), &c).is_ok());

  StepBuffers s(1);
  Tensor wrong = Tensor::zeros({1, 3});
  CHECK(f.server.step(c, {wrong, s.rewards, s.flags, {}}, s.actions).is_invalid_argument());
  s.rewards[0] = NAN;
  CHECK(s.step(f.server, c).is_invalid_argument());
  s.rewards[0] = 0.0f;
  // Observations that are not finite are refused, naming the environment and the element, whether
  // or not the agent normalises them.
  const std::int64_t last = s.observations.numel() - 1;
  for (const float bad : {std::nanf(""), INFINITY, -INFINITY}) {
    s.observations.data<float>()[last] = bad;
    const Status refused = s.step(f.server, c);
    CHECK(refused.is_invalid_argument());
    CHECK(refused.message() == str_cat("environment 0: its observation holds ", bad, " at element ",
                                       last, "; values must be finite"));
  }
  s.observations.data<float>()[last] = 0.0f;
  s.flags[0] = 0xFF;
  CHECK(s.step(f.server, c).is_invalid_argument());
  s.flags[0] = step_flags::kFirst | step_flags::kTerminated;
  CHECK(s.step(f.server, c).is_invalid_argument());
  std::vector<float> short_rewards;
  CHECK(f.server.step(c, {s.observations, short_rewards, s.flags, {}}, s.actions)
            .is_invalid_argument());
  CHECK(f.server.step(Connection{}, {s.observations, s.rewards, s.flags, {}}, s.actions)
            .is_invalid_argument());
  s.flags[0] = step_flags::kFirst;
  CHECK(s.step(f.server, c).is_ok());

  const int before = good_steps.load();
  const auto start = std::chrono::steady_clock::now();
  while (good_steps.load() < before + 20 && seconds_since(start) < 30.0)
    std::this_thread::sleep_for(1ms);
  CHECK(good_steps.load() >= before + 20);
  stop = true;
  good_actor.join();
}

TEST_CASE("InferenceServer: a full unroll queue blocks inference until the learner takes from it") {
  ServerFixture f(tiny_agent(), options(1, 1ms, /*unroll=*/1), /*queue_capacity=*/1);
  Connection c;
  REQUIRE(f.server.connect(connect_request(1, 1), &c).is_ok());
  StepBuffers s(1);
  REQUIRE(s.step(f.server, c).is_ok());  // step 0
  s.flags[0] = 0;
  REQUIRE(s.step(f.server, c).is_ok());  // step 1 completes unroll [0, 1]: the queue is full
  std::atomic<bool> returned{false};
  std::thread blocked([&] {
    CHECK(s.step(f.server, c).is_ok());  // step 2 completes unroll [1, 2]: must wait
    returned = true;
  });
  std::this_thread::sleep_for(200ms);
  CHECK_FALSE(returned.load());
  CHECK(f.queue.pop_for(5s));
  blocked.join();
  CHECK(returned.load());
  CHECK(f.queue.size() == 1);
}

TEST_CASE("InferenceServer: stop answers waiting actors with closed and closes the queue") {
  ServerFixture f(tiny_agent(), options(8, 30s));
  Connection a, b;
  REQUIRE(f.server.connect(connect_request(1, 1), &a).is_ok());
  REQUIRE(f.server.connect(connect_request(2, 1), &b).is_ok());
  std::atomic<bool> done{false};
  Status result;
  std::thread waiting([&] {
    StepBuffers s(1);
    result = s.step(f.server, a);  // waits: b never steps and the timeout is long
    done = true;
  });
  std::this_thread::sleep_for(100ms);
  CHECK_FALSE(done.load());
  f.server.stop();
  waiting.join();
  CHECK(result.is_closed());
  CHECK(f.queue.closed());
  Connection c;
  CHECK(f.server.connect(connect_request(3, 1), &c).is_closed());
}

TEST_CASE("InferenceServer: episode statistics and frame counts from the step stream") {
  ServerFixture f(tiny_agent(), options(8, 1ms, 2), 4096);
  Connection c, e;
  REQUIRE(f.server.connect(connect_request(1, 1), &c).is_ok());
  REQUIRE(f.server.connect(connect_request(2, 1, -1, true), &e).is_ok());
  StepBuffers s(1), se(1);
  // Two training episodes: returns 3 (1+2) and 5 (5); one evaluation episode: return 7.
  const std::uint8_t T = step_flags::kTerminated, U = step_flags::kTruncated,
                     F = step_flags::kFirst;
  const std::vector<std::pair<float, std::uint8_t>> script = {{0, F}, {1, 0}, {2, T},
                                                              {0, F}, {5, U}, {0, F}};
  for (const auto& [reward, flags] : script) {
    s.rewards[0] = reward;
    s.flags[0] = flags;
    REQUIRE(s.step(f.server, c).is_ok());
  }
  for (const auto& [reward, flags] : std::vector<std::pair<float, std::uint8_t>>{{0, F}, {7, T}}) {
    se.rewards[0] = reward;
    se.flags[0] = flags;
    REQUIRE(se.step(f.server, e).is_ok());
  }
  const EpisodeSummary summary = f.server.episodes().summary();
  CHECK(summary.episodes == 2);
  CHECK(summary.mean_return == doctest::Approx(4.0));
  CHECK(summary.mean_length == doctest::Approx(1.5));
  CHECK(summary.evaluation_episodes == 1);
  CHECK(summary.evaluation_mean_return == doctest::Approx(7.0));
  CHECK(f.server.training_frames() == 3);  // environment steps of training actors
}

TEST_CASE("InferenceServer: a connection can only step and free its own slots") {
  ServerFixture f(tiny_agent(), options(8, 1ms));
  Connection a, b;
  REQUIRE(f.server.connect(connect_request(1, 1, 0), &a).is_ok());
  StepBuffers s(1);
  REQUIRE(s.step(f.server, a).is_ok());
  f.server.disconnect(a);
  CHECK(s.step(f.server, a).is_invalid_argument());                 // a stale connection
  REQUIRE(f.server.connect(connect_request(2, 1, 0), &b).is_ok());  // the slot is free again
  Connection forged = b;
  forged.id = a.id;
  CHECK(s.step(f.server, forged).is_invalid_argument());
  f.server.disconnect(forged);  // frees nothing it does not hold
  forged = b;
  forged.evaluation = true;  // a training connection's steps may not skip the unroll, nor wait less
  CHECK(s.step(f.server, forged).is_invalid_argument());
  CHECK(s.step(f.server, b).is_ok());
}

TEST_CASE("InferenceServer: acts with the learner's newest values and records R2D2's Q-values") {
  R2D2AgentOptions o = test::tiny_options();
  o.actor_priorities = true;
  const R2D2Agent agent(o);
  nn::Network<Backend> learner_net(agent.network_config());
  SharedParameters parameters(learner_net.parameters());
  UnrollQueue queue(8);
  const std::int64_t unroll = 4, length = unroll + 1;
  InferenceServer<R2D2Agent, Backend> server(agent, parameters, queue, {{2}, DType::f32},
                                             {static_cast<std::int32_t>(test::kActions)},
                                             options(1, 1h, unroll));
  server.start();
  nn::Network<Backend> reference(agent.network_config());  // the values inference starts with
  reference.parameters().copy_values_from(learner_net.parameters());
  Connection c;
  REQUIRE(server.connect(connect_request(1, 1), &c).is_ok());
  StepBuffers buffers(1);
  Tensor observations = Tensor::empty({length, 1, 2});
  for (std::int64_t t = 0; t < length; ++t) {
    if (t == 2) {  // the learner updates: the next steps act with its new values
      SharedParameters::WriteGuard guard(parameters);
      learner_net.parameters().values().flat<float>() *= 1.5f;
      learner_net.parameters().bump_version();
      parameters.publish(1);
    }
    buffers.observations.data<float>()[0] = 0.3f * static_cast<float>(t) - 0.5f;
    buffers.observations.data<float>()[1] = 0.2f - 0.1f * static_cast<float>(t);
    observations[t].copy_from(buffers.observations.reshape({1, 2}));
    buffers.flags[0] = t == 0 ? step_flags::kFirst : 0;
    REQUIRE(buffers.step(server, c).is_ok());
  }
  std::vector<std::unique_ptr<Unroll>> unrolls;
  REQUIRE(queue.pop_available(1, unrolls));
  REQUIRE(unrolls.size() == 1);
  const std::unique_ptr<Unroll>& u = unrolls[0];
  server.stop();
  CHECK(u->policy_versions.data<std::int32_t>()[1] == 0);
  CHECK(u->policy_versions.data<std::int32_t>()[2] == 1);
  // The reference: the network that acted, step by step from a zero state, with the scaled
  // values from step 2 on.
  nn::LstmState state = reference.initial_state(1);
  for (std::int64_t t = 0; t < length; ++t) {
    if (t == 2) reference.parameters().copy_values_from(learner_net.parameters());
    const nn::NetworkOutputs& out = reference.forward(observations.slice(t, t + 1), state);
    for (std::int64_t a = 0; a < test::kActions; ++a) {
      CAPTURE(t);
      CAPTURE(a);
      CHECK(u->behaviour.data<float>()[t * test::kActions + a] ==
            doctest::Approx(out.q.data<float>()[a]).epsilon(1e-5));
    }
    state = {out.final_state.h.clone(), out.final_state.c.clone()};
  }
}

}  // namespace test_inference_server
