// Learning with action branches (issue 36): on Gunner, whose move and trigger must be chosen
// together, V-trace and PPO (one categorical per branch) and R2D2 (a branching dueling
// Q-network) trained with the per-branch mask take no illegal action in training nor in greedy
// play of their checkpoint through Policy, and learn to hit the target (a random legal player
// scores 0.2 on average, a player that chases the target 13.8). The same V-trace without the mask
// does take illegal actions, so the count can fail. Branched actions and masks also cross a real
// socket into the unrolls.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "seedrl/acting/actor.hpp"
#include "seedrl/agents/ppo.hpp"
#include "seedrl/agents/r2d2.hpp"
#include "seedrl/agents/vtrace.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"
#include "support/example_defaults.hpp"
#include "support/gunner_fixtures.hpp"
#include "support/temp_dir.hpp"
#include "support/transport_fixtures.hpp"

namespace test_branched_learning {

using namespace seedrl;
using Backend = cpu::Backend;

namespace {

struct Outcome {
  std::int64_t training_illegal = 0;
  test::GunnerPlay play;  // greedy play of the final checkpoint, 50 unseen games
};

// Trains `agent` on Gunner (with or without the mask) and plays its checkpoint greedily.
template <class A>
Outcome learn(const A& agent, bool masks, LocalTrainerOptions run, const std::string& name) {
  const test::TempDir dir(name);
  run.logdir = dir.path.string();
  Outcome out;
  out.training_illegal = test::train_gunner(agent, masks, run);
  out.play = test::play_gunner((dir.path / "checkpoint.safetensors").string(), 50, masks);
  MESSAGE(name, ": ", out.training_illegal, " illegal actions in training; greedy play ",
          out.play.mean_return, " with ", out.play.illegal, " illegal");
  return out;
}

// With the mask: no illegal action in training or greedy play, and more than `target` a game.
template <class A>
void check_learns(const A& agent, const LocalTrainerOptions& run, const std::string& name,
                  double target) {
  const Outcome masked = learn(agent, true, run, "branched_" + name);
  CHECK(masked.training_illegal == 0);
  CHECK(masked.play.illegal == 0);
  CHECK(masked.play.mean_return > target);
}

}  // namespace

TEST_CASE("Branched learning: V-trace learns Gunner, without an illegal action given the mask" *
          doctest::test_suite("learning")) {
  const std::int64_t frames = 300'000;
  VTraceAgentOptions o = test::example_vtrace_options(test::gunner_network(), frames);
  o.learning_rate = {1e-3, 0, 0.0};
  o.optimizer.kind = nn::OptimizerKind::adam;
  const VTraceAgent agent(o);
  check_learns(agent, test::gunner_run(frames), "vtrace", 5.0);
  CHECK(learn(agent, false, test::gunner_run(frames), "unmasked_vtrace").training_illegal > 100);
}

TEST_CASE("Branched learning: PPO learns Gunner, without an illegal action given the mask" *
          doctest::test_suite("learning")) {
  PpoAgentOptions o;
  o.network = test::gunner_network();
  o.network.seed = 1;
  o.batch_size = 4;
  o.learning_rate = {1e-3, 0, 0.0};
  o.loss.entropy_cost = 0.01f;
  check_learns(PpoAgent(o), test::gunner_run(200'000), "ppo", 5.0);
}

TEST_CASE("Branched learning: R2D2's branching dueling Q-network learns Gunner" *
          doctest::test_suite("learning")) {
  R2D2AgentOptions o;
  o.network = test::gunner_network();
  o.network.seed = 1;
  o.network.q_head = true;
  o.network.dueling = true;
  o.network.policy_value_heads = false;
  o.network.lstm_size = 32;
  o.batch_size = 16;
  o.n_step = 3;
  o.discount = 0.99;
  o.replay_capacity = 4'000;
  o.min_replay_size = 64;
  o.exploration_slots = 16;
  o.target_update_period = 100;
  o.learning_rate = {1e-3, 0, 0.0};
  LocalTrainerOptions run = test::gunner_run(300'000);
  run.server.unroll_length = 10;
  run.server.burn_in = 2;
  // Its greedy play depends on the actors' thread schedule (which steps share a batch, when the
  // learner samples), and that spread is wide under ThreadSanitizer: 4.7 to 10.9, mean 8.6, sd
  // 1.8 over 13 runs there (2026-11-28; a bar of 5 failed CI once), 8.7 to 9.4 in 4 release runs.
  // The bar sits 3 sd below the mean, still 15 times a random legal player's 0.2.
  check_learns(R2D2Agent(o), run, "r2d2", 3.0);
}

TEST_CASE("Branched learning: K actions and per-branch masks cross a socket into the unrolls") {
  VTraceAgentOptions o = test::example_vtrace_options(test::gunner_network(), 1'000);
  const VTraceAgent agent(o);
  nn::Network<Backend> net(agent.network_config());
  SharedParameters parameters(net.parameters());
  UnrollQueue unrolls(64);
  const StepSpec spec = step_spec(Gunner(0));
  InferenceServerOptions inference_options;
  inference_options.unroll_length = 6;
  InferenceServer<VTraceAgent, Backend> inference(agent, parameters, unrolls, spec,
                                                  inference_options);
  inference.start();
  SocketServer sockets(inference, test::server_options());
  sockets.start();
  auto illegal = std::make_shared<std::atomic<std::int64_t>>(0);
  std::vector<test::CountedGunner> envs;
  for (std::uint64_t e = 0; e < 3; ++e) envs.push_back({Gunner(40 + e), illegal});
  Actor<test::CountedGunner, RemoteClient> actor(
      std::move(envs), RemoteClient(test::client_options(sockets.address())));
  std::thread acting([&] { CHECK(actor.run().is_ok()); });
  // Each step's two actions lie in their branches and are legal under the step's mask, which the
  // observation implies (the gun's cell and the reloading flag).
  std::int64_t fired = 0, moved = 0;
  for (int i = 0; i < 30; ++i) {
    std::optional<std::unique_ptr<Unroll>> popped = unrolls.pop();
    REQUIRE(popped.has_value());
    const Unroll& u = **popped;
    REQUIRE(u.actions.shape() == Shape{7, 2});
    REQUIRE(u.fields[0].shape() == Shape{7, 5});
    for (std::int64_t t = 0; t < 7; ++t) {
      const float* obs = u.observations.data<float>() + t * 16;
      const std::uint8_t* mask = u.fields[0].data<std::uint8_t>() + t * 5;
      CHECK(mask[Gunner::kLeft] == (obs[0] == 1.0f ? 0 : 1));
      CHECK(mask[Gunner::kRight] == (obs[6] == 1.0f ? 0 : 1));
      CHECK(mask[3 + Gunner::kFire] == (obs[14] == 1.0f ? 0 : 1));
      const std::int32_t move = u.actions.data<std::int32_t>()[2 * t],
                         trigger = u.actions.data<std::int32_t>()[2 * t + 1];
      REQUIRE((move >= 0 && move < 3 && trigger >= 0 && trigger < 2));
      CHECK(mask[move] == 1);
      CHECK(mask[3 + trigger] == 1);
      fired += trigger;
      moved += move != Gunner::kStay;
    }
  }
  actor.stop();
  inference.stop();
  acting.join();
  sockets.stop();
  CHECK(fired > 20);
  CHECK(moved > 40);
  CHECK(illegal->load() == 0);
}

}  // namespace test_branched_learning
