// Legal-action masks in acting (issue 36): where the environment declares the step field
// "action_mask", central inference chooses among the legal actions only, for V-trace and PPO
// (sampling) and R2D2 (epsilon-greedy), in training; the same agents on the same game without the
// mask do pick illegal actions (so the count can fail); masks that do not fit the actions are
// refused by name; masks sent over a socket (as bits) arrive as they were written.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "seedrl/acting/actor.hpp"
#include "seedrl/agents/ppo.hpp"
#include "seedrl/agents/r2d2.hpp"
#include "seedrl/agents/vtrace.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/env/card_pick.hpp"
#include "seedrl/env/flatten_observation.hpp"
#include "seedrl/policy/policy.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"
#include "support/card_pick_fixtures.hpp"
#include "support/example_defaults.hpp"
#include "support/runtime_fixtures.hpp"
#include "support/temp_dir.hpp"
#include "support/transport_fixtures.hpp"

namespace test_action_masks {

using namespace seedrl;
using Backend = cpu::Backend;

TEST_CASE("Action masks: V-trace and PPO sample only legal cards; without the mask they do not") {
  const VTraceAgent vtrace(test::example_vtrace_options(test::card_network(), 6'000));
  CHECK(test::train_card_pick(vtrace, true, test::card_pick_run(6'000)) == 0);
  CHECK(test::train_card_pick(vtrace, false, test::card_pick_run(6'000)) > 100);

  PpoAgentOptions o;
  o.network = test::card_network();
  o.batch_size = 4;
  const PpoAgent ppo(o);
  CHECK(test::train_card_pick(ppo, true, test::card_pick_run(6'000)) == 0);
  CHECK(test::train_card_pick(ppo, false, test::card_pick_run(6'000)) > 100);
}

TEST_CASE("Action masks: R2D2's epsilon-greedy picks only legal cards, exploring or not") {
  R2D2AgentOptions o;
  o.network = test::card_network();
  o.network.q_head = true;
  o.network.policy_value_heads = false;
  o.network.lstm_size = 8;
  o.batch_size = 8;
  o.n_step = 2;
  o.replay_capacity = 2'000;
  o.min_replay_size = 16;
  o.exploration_slots = 16;
  o.epsilon_base = 0.9;  // most picks explore: uniformly among the legal cards
  LocalTrainerOptions run = test::card_pick_run(6'000);
  run.server.burn_in = 2;
  const R2D2Agent r2d2(o);
  CHECK(test::train_card_pick(r2d2, true, run) == 0);
  CHECK(test::train_card_pick(r2d2, false, run) > 100);
}

TEST_CASE("Action masks: a mask that does not fit the actions is refused by name") {
  const VTraceAgent agent(test::example_vtrace_options(test::card_network(), 1'000));
  nn::Network<Backend> learner(agent.network_config());
  SharedParameters parameters(learner.parameters());
  UnrollQueue unrolls(4);
  const TensorSpec observation{{16}, DType::f32};
  for (const TensorSpec& mask :
       {TensorSpec{{8}, DType::f32}, TensorSpec{{7}, DType::u8}, TensorSpec{{2, 4}, DType::u8}}) {
    CAPTURE(mask.to_string());
    const StepSpec spec{observation, ActionSpec(8), {{"action_mask", mask}}};
    CHECK_THROWS_WITH_AS((InferenceServer<VTraceAgent, Backend>(agent, parameters, unrolls, spec)),
                         doctest::Contains("a legal-action mask is u8[8] for 8 discrete actions"),
                         Error);
  }
  // A box's actions take no mask.
  const StepSpec box{
      observation, ActionSpec::box(2, -1.0f, 1.0f), {{"action_mask", {{2}, DType::u8}}}};
  CHECK_THROWS_WITH_AS(box.validate("the environment"),
                       doctest::Contains("the environment: the step field 'action_mask' is u8[2]"),
                       Error);
}

TEST_CASE("Action masks: a step whose mask allows nothing is refused, unless it is the last") {
  const VTraceAgent agent(test::example_vtrace_options(test::card_network(), 1'000));
  nn::Network<Backend> net(agent.network_config());
  SharedParameters parameters(net.parameters());
  UnrollQueue unrolls(64);
  const StepSpec spec{{{16}, DType::f32}, ActionSpec(8), {{"action_mask", {{8}, DType::u8}}}};
  InferenceServer<VTraceAgent, Backend> server(agent, parameters, unrolls, spec);
  server.start();
  ConnectRequest request = test::connect_request(3, 2);
  request.spec = spec;
  Connection c;
  REQUIRE(server.connect(request, &c).is_ok());
  const Tensor observations = Tensor::zeros({2, 16});
  Tensor masks = Tensor::zeros({2, 8}, DType::u8);
  const std::vector<Tensor> fields{masks};
  const std::vector<float> rewards{0.0f, 0.0f};
  std::vector<std::uint8_t> flags{step_flags::kFirst, step_flags::kFirst};
  std::vector<std::int32_t> actions(2);
  masks.data<std::uint8_t>()[3] = 1;  // environment 0: only card 3; environment 1: none
  const Status refused = server.step(c, {observations, rewards, flags, fields}, actions);
  CHECK(refused.is_invalid_argument());
  CHECK(refused.message().find("environment 1: its action_mask allows no action") !=
        std::string::npos);
  masks.data<std::uint8_t>()[8 + 6] = 1;  // environment 1: only card 6
  for (int i = 0; i < 20; ++i) {
    REQUIRE(server.step(c, {observations, rewards, flags, fields}, actions).is_ok());
    CHECK(actions == std::vector<std::int32_t>{3, 6});
    flags = {0, 0};
  }
  // At an episode's last step nothing needs to be legal (a full board); its action is not played.
  masks.data<std::uint8_t>()[8 + 6] = 0;
  flags = {0, step_flags::kTerminated};
  CHECK(server.step(c, {observations, rewards, flags, fields}, actions).is_ok());
  CHECK(actions[0] == 3);
  server.stop();
}

TEST_CASE("Action masks: Policy acts among the legal actions, greedy, sampling or exploring") {
  const test::TempDir dir("action_masks_policy");
  const VTraceAgent agent(test::example_vtrace_options(test::card_network(), 2'000));
  LocalTrainerOptions run = test::card_pick_run(2'000);
  run.logdir = dir.path.string();
  train_locally<VTraceAgent, Backend>(
      agent,
      [](std::int32_t a, std::int32_t e) {
        return FlattenObservation(CardPick(static_cast<std::uint64_t>(10 * a + e)));
      },
      run);
  const std::string checkpoint = (dir.path / "checkpoint.safetensors").string();
  Tensor masks = Tensor::zeros({3, 8}, DType::u8);
  for (int i = 0; i < 3; ++i) masks.data<std::uint8_t>()[i * 8 + 2 * i + 1] = 1;  // 1, 3, 5
  const std::vector<Tensor> fields{masks};
  Rng rng(4);
  for (const ActingOptions acting :
       {ActingOptions{ActionMode::greedy}, ActingOptions{ActionMode::sample},
        ActingOptions{ActionMode::epsilon_greedy, 1.0}}) {
    CAPTURE(acting.to_text());
    Policy<> policy(checkpoint, {.acting = acting, .seed = 9});
    REQUIRE(policy.step_fields() == std::vector<StepFieldSpec>{{"action_mask", {{8}, DType::u8}}});
    for (int round = 0; round < 20; ++round) {
      Tensor observations = Tensor::empty({3, 16});
      for (std::int64_t j = 0; j < observations.numel(); ++j)
        observations.data<float>()[j] = static_cast<float>(rng.uniform());
      CHECK(policy.act({observations, fields}) == std::vector<std::int32_t>{1, 3, 5});
    }
  }
  // A row that allows nothing is refused by name.
  masks.data<std::uint8_t>()[8 + 3] = 0;
  Policy<> policy(checkpoint);
  CHECK_THROWS_WITH_AS(policy.act({Tensor::zeros({3, 16}), fields}),
                       doctest::Contains("mask of row 1 allows no action"), Error);
}

TEST_CASE("Action masks: masks cross a socket as bits and reach the unrolls bit for bit") {
  const VTraceAgent agent(test::example_vtrace_options(test::card_network(), 1'000));
  nn::Network<Backend> net(agent.network_config());
  SharedParameters parameters(net.parameters());
  UnrollQueue unrolls(64);
  const StepSpec spec = step_spec(FlattenObservation(CardPick(0)));
  InferenceServerOptions inference_options;
  inference_options.unroll_length = 6;
  InferenceServer<VTraceAgent, Backend> inference(agent, parameters, unrolls, spec,
                                                  inference_options);
  inference.start();
  SocketServer sockets(inference, test::server_options());
  sockets.start();
  auto illegal = std::make_shared<std::atomic<std::int64_t>>(0);
  std::vector<test::CountedCardPick> envs;
  for (std::uint64_t e = 0; e < 3; ++e)
    envs.push_back({FlattenObservation(CardPick(40 + e)), illegal});
  Actor<test::CountedCardPick, RemoteClient> actor(
      std::move(envs), RemoteClient(test::client_options(sockets.address())));
  std::thread acting([&] { CHECK(actor.run().is_ok()); });
  // A card is legal exactly where the observation's plane 1 says it was not taken.
  std::int64_t steps = 0;
  for (int i = 0; i < 30; ++i) {
    std::optional<std::unique_ptr<Unroll>> popped = unrolls.pop();
    REQUIRE(popped.has_value());
    const std::unique_ptr<Unroll>& u = *popped;
    const Tensor& mask = u->fields[0];
    REQUIRE(mask.shape() == Shape{7, 8});
    for (std::int64_t t = 0; t < 7; ++t, ++steps)
      for (std::int64_t j = 0; j < 8; ++j) {
        const bool taken = u->observations.data<float>()[t * 16 + 8 + j] != 0.0f;
        CHECK(mask.data<std::uint8_t>()[t * 8 + j] == (taken ? 0 : 1));
      }
  }
  actor.stop();
  inference.stop();
  acting.join();
  sockets.stop();
  CHECK(steps == 30 * 7);
  CHECK(illegal->load() == 0);
}

}  // namespace test_action_masks
