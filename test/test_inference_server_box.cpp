// InferenceServer with box actions (a PPO agent's Gaussian policy): draws clipped to the
// environment's bounds for the actor and kept as drawn in the unrolls, requests that do not fit
// refused by name, observations normalised and rewards scaled as its normaliser does. (Also run
// under ThreadSanitizer in CI.)
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <thread>

#include "seedrl/agents/ppo.hpp"
#include "support/r2d2_fixtures.hpp"
#include "support/runtime_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_inference_server_box {

using namespace seedrl;
using namespace seedrl::test;
using namespace std::chrono_literals;

namespace {

InferenceServerOptions small_options() {
  InferenceServerOptions o;
  o.max_slots = 16;
  o.max_batch = 8;
  o.batch_timeout = std::chrono::hours(1);
  o.unroll_length = 2;
  return o;
}

// PPO on an MLP over observations [2] with a Gaussian over 2 reals; std e^1 so that many draws
// fall outside the bounds [-1, 1] x [-0.5, 0.5].
PpoAgent box_agent(bool normalize) {
  PpoAgentOptions o;
  o.network = nn::NetworkOptions::mlp(2, 0, {8}).gaussian(2);
  o.network.initial_log_std = 1.0f;
  o.network.seed = 5;
  o.batch_size = 2;
  o.normalization.observations = normalize;
  o.normalization.rewards = normalize;
  return PpoAgent(o);
}

const ActionSpec kBox = ActionSpec::box({-1.0f, -0.5f}, {1.0f, 0.5f});

struct BoxServer {
  PpoAgent agent;
  nn::Network<Backend> learner_net;
  SharedParameters parameters;
  UnrollQueue queue{64};
  InferenceServer<PpoAgent, Backend> server;
  explicit BoxServer(bool normalize)
      : agent(box_agent(normalize)),
        learner_net(agent.network_config()),
        parameters(learner_net.parameters()),
        server(agent, parameters, queue, {{2}, DType::f32}, kBox, small_options()) {
    server.start();
  }
};

ConnectRequest box_request(std::uint64_t run_id, std::int32_t envs, bool evaluation = false) {
  ConnectRequest r = connect_request(run_id, envs, -1, evaluation);
  r.spec.action = kBox;
  return r;
}

}  // namespace

TEST_CASE("InferenceServer: box actions are drawn, clipped to the bounds, and kept as drawn") {
  BoxServer f(/*normalize=*/false);
  Connection c, e;
  REQUIRE(f.server.connect(box_request(1, 2), &c).is_ok());
  Tensor obs = Tensor::zeros({2, 2});
  std::vector<float> rewards(2, 0.0f), actions(4, 99.0f);
  std::vector<std::uint8_t> flags(2, step_flags::kFirst);
  std::vector<std::vector<float>> sent;  // per step, the 4 values the actor got
  for (int k = 0; k < 3; ++k) {
    obs.data<float>()[0] = static_cast<float>(k);
    obs.data<float>()[3] = -static_cast<float>(k);
    REQUIRE(f.server.step(c, {obs, rewards, flags, {}}, std::span<float>(actions)).is_ok());
    for (int i = 0; i < 2; ++i) {
      CHECK(actions[2 * i] >= -1.0f);
      CHECK(actions[2 * i] <= 1.0f);
      CHECK(actions[2 * i + 1] >= -0.5f);
      CHECK(actions[2 * i + 1] <= 0.5f);
    }
    sent.push_back(actions);
    flags.assign(2, 0);
  }
  // Each slot's unroll (T = 2: three steps) holds the unclipped draws and the policy's mean and
  // log std; clipping them gives what the actor got.
  std::vector<std::unique_ptr<Unroll>> popped;
  REQUIRE(f.queue.pop_many(2, popped));
  int clipped = 0;
  nn::Network<Backend> reference(f.agent.network_config());
  reference.parameters().copy_values_from(f.learner_net.parameters());
  for (const auto& u : popped) {
    const int i = u->slot;
    REQUIRE(u->actions.shape() == Shape{3, 2});
    for (int t = 0; t < 3; ++t) {
      Tensor x = Tensor::zeros({1, 1, 2});
      x.data<float>()[0] = i == 0 ? static_cast<float>(t) : 0.0f;
      x.data<float>()[1] = i == 0 ? 0.0f : -static_cast<float>(t);
      const nn::NetworkOutputs& out = reference.forward(x);
      for (int d = 0; d < 2; ++d) {
        const float drawn = u->actions[t].data<float>()[d];
        const float low = kBox.low[static_cast<std::size_t>(d)];
        const float high = kBox.high[static_cast<std::size_t>(d)];
        CHECK(sent[static_cast<std::size_t>(t)][static_cast<std::size_t>(2 * i + d)] ==
              std::clamp(drawn, low, high));
        clipped += drawn < low || drawn > high;
        CHECK(u->behaviour[t].data<float>()[d] == doctest::Approx(out.mean.data<float>()[d]));
        CHECK(u->behaviour[t].data<float>()[2 + d] == doctest::Approx(1.0f));  // the free log std
      }
    }
  }
  CHECK(clipped > 0);  // std e: some draws were out of bounds

  // Evaluation slots get the mean (clipped), and store nothing.
  f.server.disconnect(c);  // else the batch would wait for c's environments too
  REQUIRE(f.server.connect(box_request(2, 1, /*evaluation=*/true), &e).is_ok());
  Tensor one = Tensor::zeros({1, 2});
  std::vector<float> eval_action(2), one_reward(1, 0.0f);
  std::vector<std::uint8_t> one_flag(1, step_flags::kFirst);
  REQUIRE(f.server.step(e, {one, one_reward, one_flag, {}}, std::span<float>(eval_action)).is_ok());
  const nn::NetworkOutputs& out = reference.forward(Tensor::zeros({1, 1, 2}));
  CHECK(eval_action[0] == doctest::Approx(std::clamp(out.mean.data<float>()[0], -1.0f, 1.0f)));
  CHECK(eval_action[1] == doctest::Approx(std::clamp(out.mean.data<float>()[1], -0.5f, 0.5f)));
}

TEST_CASE("InferenceServer: box and discrete requests that do not fit are refused by name") {
  BoxServer f(/*normalize=*/true);
  Connection c;
  ConnectRequest discrete = box_request(1, 1);
  discrete.spec.action = {3};
  const Status refused = f.server.connect(discrete, &c);
  CHECK(refused.is_invalid_argument());
  CHECK(refused.message().find("box of 2") != std::string::npos);
  ConnectRequest other_bounds = box_request(1, 1);
  other_bounds.spec.action = ActionSpec::box(2, -1.0f, 1.0f);
  CHECK(f.server.connect(other_bounds, &c).is_invalid_argument());
  REQUIRE(f.server.connect(box_request(1, 1), &c).is_ok());
  Tensor obs = Tensor::zeros({1, 2});
  std::vector<float> rewards(1, 0.0f), too_few(1);
  std::vector<std::int32_t> discrete_actions(1);
  std::vector<std::uint8_t> flags(1, step_flags::kFirst);
  CHECK(
      f.server.step(c, {obs, rewards, flags, {}}, std::span<float>(too_few)).is_invalid_argument());
  CHECK(f.server.step(c, {obs, rewards, flags, {}}, std::span<std::int32_t>(discrete_actions))
            .is_invalid_argument());
  obs.data<float>()[1] = NAN;  // normalised observations must be finite
  std::vector<float> actions(2);
  CHECK(
      f.server.step(c, {obs, rewards, flags, {}}, std::span<float>(actions)).is_invalid_argument());
  obs.data<float>()[1] = 0.0f;
  CHECK(f.server.step(c, {obs, rewards, flags, {}}, std::span<float>(actions)).is_ok());

  // A discrete network cannot serve a box, nor a Gaussian head a box of another size.
  nn::Network<Backend> net(tiny_agent().network_config());
  SharedParameters parameters(net.parameters());
  UnrollQueue queue(4);
  CHECK_THROWS_WITH_AS((InferenceServer<VTraceAgent, Backend>(tiny_agent(), parameters, queue,
                                                              {{2}, DType::f32}, kBox)),
                       doctest::Contains("Gaussian head has 0 dimensions"), Error);
  CHECK_THROWS_WITH_AS(
      (InferenceServer<PpoAgent, Backend>(box_agent(false), f.parameters, queue, {{2}, DType::f32},
                                          ActionSpec::box(3, -1.0f, 1.0f))),
      doctest::Contains("2 dimensions"), Error);
}

TEST_CASE("InferenceServer: normalises observations and scales rewards as its normaliser does") {
  BoxServer f(/*normalize=*/true);
  ExperienceNormalizer expected(f.agent.options().normalization, 2, f.agent.options().discount, 16);
  Connection c;
  REQUIRE(f.server.connect(box_request(1, 2), &c).is_ok());
  Tensor obs = Tensor::zeros({2, 2});
  std::vector<float> rewards(2, 0.0f), actions(4);
  std::vector<std::uint8_t> flags(2, step_flags::kFirst);
  std::vector<std::vector<float>> normalised, scaled;
  const std::vector<std::int32_t> slots = {c.first_slot, c.first_slot + 1};
  const std::vector<std::uint8_t> training(2, 0);
  for (int k = 0; k < 3; ++k) {
    for (int j = 0; j < 4; ++j) obs.data<float>()[j] = static_cast<float>(k * 4 + j) * 0.5f - 2.0f;
    rewards = {static_cast<float>(k) - 1.0f, 2.0f * static_cast<float>(k)};
    RowMatrixXf x = obs.matrix<float>();
    expected.normalize_observations(x, training);
    std::vector<float> r = rewards;
    expected.scale_rewards(slots, flags, training, r);
    normalised.emplace_back(x.data(), x.data() + 4);
    scaled.push_back(r);
    REQUIRE(f.server.step(c, {obs, rewards, flags, {}}, std::span<float>(actions)).is_ok());
    flags.assign(2, 0);
  }
  std::vector<std::unique_ptr<Unroll>> popped;
  REQUIRE(f.queue.pop_many(2, popped));
  for (const auto& u : popped) {
    const int i = u->slot - c.first_slot;
    for (int t = 0; t < 3; ++t) {
      const auto k = static_cast<std::size_t>(t);
      CHECK(u->observations[t].data<float>()[0] == doctest::Approx(normalised[k][2 * i]));
      CHECK(u->observations[t].data<float>()[1] == doctest::Approx(normalised[k][2 * i + 1]));
      CHECK(u->rewards.data<float>()[t] == doctest::Approx(scaled[k][static_cast<std::size_t>(i)]));
    }
  }
  // The episode figures stay in raw rewards: nothing ended yet, but the text round-trips.
  const std::string text = f.server.normalization_text();
  CHECK(text == expected.to_text());
  BoxServer other(/*normalize=*/true);
  other.server.restore_normalization(text, "test");
  CHECK(other.server.normalization_text() == text);
  BoxServer plain(/*normalize=*/false);
  CHECK_THROWS_WITH_AS(plain.server.restore_normalization(text, "ckpt"),
                       doctest::Contains("normalises nothing"), Error);
  CHECK_THROWS_WITH_AS(other.server.restore_normalization("", "ckpt"),
                       doctest::Contains("no normalization statistics"), Error);
}

}  // namespace test_inference_server_box
