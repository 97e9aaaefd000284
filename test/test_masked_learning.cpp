// Learning with legal-action masks (issue 36): on CardPick, where an illegal pick costs -1 and
// ends the episode, V-trace, PPO and R2D2 trained with the mask take no illegal action in training
// nor in greedy play of their checkpoint, and learn to take the high cards (a random legal player
// scores 2.22 on average, the best 3.10). The same agents without the mask do pick illegal cards,
// so the counts can fail. The learners' losses read the mask from the unrolls (masked V-trace and
// PPO ratios, R2D2's double-Q argmax over legal actions).
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "seedrl/agents/ppo.hpp"
#include "seedrl/agents/r2d2.hpp"
#include "seedrl/agents/vtrace.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"
#include "support/card_pick_fixtures.hpp"
#include "support/example_defaults.hpp"
#include "support/printing.hpp"
#include "support/runtime_fixtures.hpp"
#include "support/temp_dir.hpp"

namespace test_masked_learning {

using namespace seedrl;
using Backend = cpu::Backend;

namespace {

struct Outcome {
  std::int64_t training_illegal = 0;
  test::CardPickPlay play;  // greedy play of the final checkpoint, 200 unseen deals
};

// Trains `agent` on CardPick (with or without the mask) and plays its checkpoint greedily.
template <class A>
Outcome learn(const A& agent, bool masks, LocalTrainerOptions run, const std::string& name) {
  const test::TempDir dir(name);
  run.logdir = dir.path.string();
  Outcome out;
  out.training_illegal = test::train_card_pick(agent, masks, run);
  out.play = test::play_card_pick((dir.path / "checkpoint.safetensors").string(), 200, masks);
  MESSAGE(name, ": ", out.training_illegal, " illegal picks in training; greedy play ",
          out.play.mean_return, " with ", out.play.illegal, " illegal");
  return out;
}

// With the mask: no illegal pick in training or greedy play, and the high cards taken (above 2.9
// of the best 3.10); without it the same agent picks illegal cards (so the counts can fail).
template <class A>
void check_learns(const A& agent, const LocalTrainerOptions& run, const std::string& name) {
  const Outcome masked = learn(agent, true, run, "masked_" + name);
  CHECK(masked.training_illegal == 0);
  CHECK(masked.play.illegal == 0);
  CHECK(masked.play.mean_return > 2.9);
  const Outcome unmasked = learn(agent, false, run, "unmasked_" + name);
  CHECK(unmasked.training_illegal > 100);
}

}  // namespace

// Unrolls whose every step allows only the action taken: the masked policy is certain of it
// (log-probability 0, entropy 0), so V-trace's and PPO's policy terms vanish; unmasked they do not.
TEST_CASE("Masked learning: V-trace and PPO losses use the masked policy of the unrolls") {
  UnrollSpec spec =
      make_unroll_spec(test::tiny_agent(), {{2}, DType::f32}, {3}, {.unroll_length = 5});
  UnrollSpec masked_spec = spec;
  masked_spec.fields = {{kActionMaskField, {{3}, DType::u8}}};
  UnrollQueue queue(8);
  for (const bool masked : {true, false}) {
    CAPTURE(masked);
    const auto unrolls = test::random_unrolls(masked ? masked_spec : spec, 2, 5);
    Learner<VTraceAgent, Backend> vtrace(test::tiny_agent(), masked ? masked_spec : spec, queue);
    const LearnerStepStats v = vtrace.train_on(unrolls);
    PpoAgentOptions o;
    o.network = nn::NetworkOptions::mlp(2, 3, {8});
    o.batch_size = 2;
    Learner<PpoAgent, Backend> ppo(PpoAgent(o), masked ? masked_spec : spec, queue);
    const std::optional<LearnerStepStats> p = ppo.train_on(unrolls);
    REQUIRE(p.has_value());
    if (masked) {
      CHECK(v.metrics["entropy"] == doctest::Approx(0.0));
      CHECK(v.metrics["policy_loss"] == doctest::Approx(0.0));
      CHECK(p->metrics["entropy"] == doctest::Approx(0.0));
      CHECK(p->metrics["approx_kl"] == doctest::Approx(0.0));
    } else {  // a fresh policy over 3 actions is close to uniform
      CHECK(v.metrics["entropy"] > 0.5);
      CHECK(p->metrics["entropy"] > 0.5);
      CHECK(std::abs(v.metrics["policy_loss"]) > 1e-4);
    }
  }
}

TEST_CASE("Masked learning: V-trace learns CardPick without an illegal pick" *
          doctest::test_suite("learning")) {
  const std::int64_t frames = 150'000;
  VTraceAgentOptions o = test::example_vtrace_options(test::card_network(), frames);
  o.learning_rate = {1e-3, frames / (8 * 8), 0.0};  // to 0 over the run's updates
  const VTraceAgent agent(o);
  check_learns(agent, test::card_pick_run(frames), "vtrace");
}

TEST_CASE("Masked learning: PPO learns CardPick without an illegal pick" *
          doctest::test_suite("learning")) {
  const std::int64_t frames = 150'000;
  PpoAgentOptions o;
  o.network = test::card_network();
  o.network.seed = 1;
  o.batch_size = 4;
  const PpoAgent agent(o);
  check_learns(agent, test::card_pick_run(frames), "ppo");
}

TEST_CASE("Masked learning: R2D2 learns CardPick without an illegal pick" *
          doctest::test_suite("learning")) {
  const std::int64_t frames = 150'000;
  R2D2AgentOptions o;
  o.network = test::card_network();
  o.network.seed = 1;
  o.network.q_head = true;
  o.network.policy_value_heads = false;
  o.network.lstm_size = 16;
  o.batch_size = 16;
  o.n_step = 2;
  o.discount = 0.99;
  o.replay_capacity = 4'000;
  o.min_replay_size = 64;
  o.exploration_slots = 16;
  o.target_update_period = 50;
  o.learning_rate = {1e-3, 0, 0.0};
  LocalTrainerOptions run = test::card_pick_run(frames);
  run.server.burn_in = 2;
  const R2D2Agent agent(o);
  check_learns(agent, run, "r2d2");
}

}  // namespace test_masked_learning
