// The SAC learner: its n-step windows against a brute force (terminations end them, truncations
// bootstrap), what one update moves (every network, the Polyak targets by tau, the actor only
// every actor_update_period updates, a fixed temperature not at all), the temperature's direction
// towards its target entropy, the rate limiter's schedule, checkpoints of every network, the
// temperature and the replay (a resumed learner continues), resets with their catch-up updates,
// prioritized replay's priorities, Policy acting with the squashed mean, and a bandit it solves
// through the whole runtime, uniform and prioritized.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <vector>

#include "seedrl/agents/sac.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/experience/unroll_store.hpp"
#include "seedrl/policy/policy.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"
#include "support/sac_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_sac_learner {

using namespace seedrl;
using namespace seedrl::test::sac;
using Backend = cpu::Backend;
using SacLearner = Learner<SacAgent, Backend>;

namespace {

std::vector<float> values_of(nn::Network<Backend>& net) {
  const Tensor& v = net.parameters().values();
  return {v.data<float>(), v.data<float>() + v.numel()};
}

// Pushes `count` random windows for `agent` and closes the queue; returns the transitions among
// them (a window that starts at an episode's last step holds none).
int push_and_close(UnrollQueue& queue, const SacAgent& agent, int count, std::uint64_t seed) {
  int transitions = 0;
  for (auto& u : random_windows(spec_for(agent), count, seed)) {
    if (!is_last(u->flags.data<std::uint8_t>()[0])) ++transitions;
    queue.push(std::move(u));
  }
  queue.close();
  return transitions;
}

}  // namespace

TEST_CASE("SAC windows: n-step returns end at terminations and bootstrap after truncations") {
  // Five windows of n = 3 (4 steps), built by hand: rewards r[t] arrive at step t.
  const std::int64_t n = 3, batch = 5;
  UnrollBatch b;
  b.flags = Tensor::zeros({n + 1, batch}, DType::u8);
  b.rewards = Tensor::zeros({n + 1, batch});
  b.actions = Tensor::zeros({n + 1, batch, 1});
  b.policy_versions = Tensor::zeros({n + 1, batch}, DType::i32);
  const std::uint8_t F = step_flags::kFirst, T = step_flags::kTerminated,
                     U = step_flags::kTruncated;
  const std::uint8_t flags[4][5] = {
      {0, 0, 0, T, F}, {0, 0, U, F, 0}, {0, T, F, 0, 0}, {0, F, 0, 0, 0}};
  for (int t = 0; t < 4; ++t)
    for (int c = 0; c < 5; ++c) {
      b.flags.data<std::uint8_t>()[t * batch + c] = flags[t][c];
      b.rewards.data<float>()[t * batch + c] = static_cast<float>(1 + t + 10 * c);
    }
  const float g = 0.9f;
  const SacWindows w = sac_windows(b, n, g, 0.0f, 0);
  auto r = [&](int t, int c) { return static_cast<double>(1 + t + 10 * c); };
  // Column 0: three rewards, bootstrap from step 3.
  CHECK(w.returns(0) == doctest::Approx(r(1, 0) + g * r(2, 0) + g * g * r(3, 0)));
  CHECK(w.discounts(0) == doctest::Approx(g * g * g));
  CHECK(w.bootstrap_step[0] == 3);
  // Column 1: terminated with the reward at step 2: two rewards, no bootstrap.
  CHECK(w.returns(1) == doctest::Approx(r(1, 1) + g * r(2, 1)));
  CHECK(w.discounts(1) == 0.0f);
  // Column 2: truncated at step 1: one reward, bootstrap from the final observation (step 1).
  CHECK(w.returns(2) == doctest::Approx(r(1, 2)));
  CHECK(w.discounts(2) == doctest::Approx(g));
  CHECK(w.bootstrap_step[2] == 1);
  // Column 3: the window starts at an episode's last step: no transition.
  CHECK(w.mask(3) == 0.0f);
  // Column 4: an episode's first step starts a window like any other.
  CHECK(w.mask(4) == 1.0f);
  CHECK(w.returns(4) == doctest::Approx(r(1, 4) + g * r(2, 4) + g * g * r(3, 4)));
  CHECK(w.count == 4);
}

TEST_CASE("SAC learner: an update moves every network, the targets by tau; options hold") {
  const SacAgent agent(tiny_options());
  UnrollQueue queue(64);
  SacLearner learner(agent, spec_for(agent), queue);
  for (auto& u : random_windows(spec_for(agent), 40, 1)) queue.push(std::move(u));
  NetworkSet<Backend>& nets = learner.networks();
  const auto actor = values_of(nets.network("actor"));
  const auto critic1 = values_of(nets.network("critic1"));
  const auto temperature = values_of(nets.network("temperature"));
  const auto target_before = values_of(nets.network("critic1_target"));
  CHECK(target_before == critic1);  // targets start as copies
  CHECK(learner.alpha() == doctest::Approx(1.0));

  const std::optional<LearnerStepStats> stats = learner.step();
  REQUIRE(stats.has_value());
  CHECK_FALSE(stats->skipped);
  CHECK(values_of(nets.network("actor")) != actor);
  const auto critic_after = values_of(nets.network("critic1"));
  CHECK(critic_after != critic1);
  CHECK(values_of(nets.network("temperature")) != temperature);
  CHECK(learner.alpha() != doctest::Approx(1.0));
  const auto target_after = values_of(nets.network("critic1_target"));
  for (std::size_t i = 0; i < target_after.size(); ++i)
    REQUIRE(target_after[i] == doctest::Approx(0.9 * target_before[i] + 0.1 * critic_after[i]));

  // The actor (and the temperature) every second update; a fixed temperature never.
  SacAgentOptions o = tiny_options();
  o.actor_update_period = 2;
  o.learn_temperature = false;
  o.initial_alpha = 0.2f;
  const SacAgent delayed(o);
  UnrollQueue queue2(64);
  SacLearner second(delayed, spec_for(delayed), queue2);
  for (auto& u : random_windows(spec_for(delayed), 40, 2)) queue2.push(std::move(u));
  NetworkSet<Backend>& n2 = second.networks();
  const auto actor0 = values_of(n2.network("actor")), temp0 = values_of(n2.network("temperature"));
  REQUIRE(second.step().has_value());
  CHECK(values_of(n2.network("actor")) == actor0);
  REQUIRE(second.step().has_value());
  CHECK(values_of(n2.network("actor")) != actor0);
  CHECK(values_of(n2.network("temperature")) == temp0);
  CHECK(second.alpha() == doctest::Approx(0.2));

  // Unrolls that are not windows of n_step + 1 are refused by name.
  InferenceServerOptions long_unrolls;
  long_unrolls.unroll_length = 4;
  UnrollQueue queue3(4);
  CHECK_THROWS_WITH_AS(
      SacLearner(agent,
                 make_unroll_spec(agent, StepSpec{{{2}, DType::f32}, kBox, {}}, long_unrolls),
                 queue3),
      doctest::Contains("SAC trains on windows of n_step + 1 = 2 steps"), Error);
}

TEST_CASE("SAC learner: the temperature moves towards the target entropy, -dims unless set") {
  SacAgentOptions o = tiny_options();
  CHECK(SacAgent(o).target_entropy() == -static_cast<double>(o.network.action_dims));
  // One update on the same windows: a target far above the policy's entropy raises alpha, one
  // far below lowers it (the temperature's loss is -log alpha (log pi + target)).
  auto alpha_after_one_update = [&](double target) {
    o.target_entropy = target;
    const SacAgent agent(o);
    CHECK(agent.target_entropy() == target);
    UnrollQueue queue(64);
    SacLearner learner(agent, spec_for(agent), queue);
    for (auto& u : random_windows(spec_for(agent), 40, 3)) queue.push(std::move(u));
    REQUIRE(learner.step().has_value());
    return learner.alpha();
  };
  CHECK(alpha_after_one_update(100.0) > 1.0);
  CHECK(alpha_after_one_update(-100.0) < 1.0);
  o.target_entropy = std::nan("");
  CHECK_THROWS_WITH_AS(SacAgent{o}, doctest::Contains("target_entropy must be finite"), Error);
}

TEST_CASE("SAC agent: an annealed target entropy moves linearly between its steps, then holds") {
  SacAgentOptions o = tiny_options();
  o.target_entropy = -1.0;
  o.final_target_entropy = -4.0;
  o.target_entropy_anneal_begin = 100;
  o.target_entropy_anneal_end = 400;
  const SacAgent agent(o);
  // Hand-computed: -1 until step 100, -1 + (-3) (s - 100) / 300 between, -4 from 400 on.
  CHECK(agent.target_entropy(0) == -1.0);
  CHECK(agent.target_entropy(100) == -1.0);
  CHECK(agent.target_entropy(200) == doctest::Approx(-2.0));
  CHECK(agent.target_entropy(325) == doctest::Approx(-3.25));
  CHECK(agent.target_entropy(400) == -4.0);
  CHECK(agent.target_entropy(1'000'000) == -4.0);
  // Unset: constant at its start, whatever the anneal's steps say.
  o.final_target_entropy.reset();
  CHECK(SacAgent(o).target_entropy(1'000'000) == -1.0);
  // A step change at one point, and the bad settings by name.
  o.final_target_entropy = -2.0;
  o.target_entropy_anneal_begin = o.target_entropy_anneal_end = 50;
  CHECK(SacAgent(o).target_entropy(50) == -1.0);
  CHECK(SacAgent(o).target_entropy(51) == -2.0);
  o.target_entropy_anneal_begin = 60;
  CHECK_THROWS_WITH_AS(SacAgent{o}, doctest::Contains("must satisfy 0 <= begin <= end"), Error);
  o.target_entropy_anneal_begin = 0;
  o.final_target_entropy = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH_AS(SacAgent{o}, doctest::Contains("final_target_entropy must be finite"),
                       Error);
}

TEST_CASE("SAC learner: the temperature's target follows the anneal by learner step") {
  // Target far above the policy's entropy for the first update, far below from the second on:
  // alpha rises on update 0 and falls on update 1 (the learner passes its step to the agent).
  SacAgentOptions o = tiny_options();
  o.target_entropy = 100.0;
  o.final_target_entropy = -100.0;
  o.target_entropy_anneal_begin = o.target_entropy_anneal_end = 0;
  const SacAgent agent(o);
  UnrollQueue queue(64);
  SacLearner learner(agent, spec_for(agent), queue);
  for (auto& u : random_windows(spec_for(agent), 60, 7)) queue.push(std::move(u));
  REQUIRE(learner.step().has_value());
  const double after_first = learner.alpha();
  CHECK(after_first > 1.0);
  REQUIRE(learner.step().has_value());
  CHECK(learner.alpha() < after_first);
}

TEST_CASE("SAC learner: learning_starts transitions pay for no update, then one per ratio") {
  // learning_starts 8, batch 8, replay_ratio 8: one update per transition after the first 8
  // (CleanRL's schedule), not a burst of 8 updates for the random ones.
  const SacAgent agent(tiny_options());
  UnrollQueue queue(64);
  SacLearner learner(agent, spec_for(agent), queue);
  const int transitions = push_and_close(queue, agent, 40, 5);
  REQUIRE(transitions > 20);
  int updates = 0;
  while (learner.step().has_value()) ++updates;
  CHECK(updates == transitions - 8);
}

TEST_CASE("SAC learner: resets start the actor and critics afresh, then catch up on the replay") {
  // Resets after 5 and 10 updates, each followed by 3 updates outside the rate limiter.
  SacAgentOptions o = tiny_options();
  o.resets = 2;
  o.reset_period = 5;
  o.reset_updates = 3;
  const SacAgent agent(o);
  CHECK_FALSE(agent.reset_due(0));
  CHECK(agent.reset_due(5));
  CHECK(agent.reset_due(10));
  CHECK_FALSE(agent.reset_due(15));  // two resets only
  for (std::int64_t done : {0, 4, 8, 9, 13, 15, 16}) CHECK_FALSE(agent.catch_up_update(done));
  for (std::int64_t done : {5, 6, 7, 10, 11, 12}) CHECK(agent.catch_up_update(done));
  CHECK(agent.reset_generation(5) == 0);
  CHECK(agent.reset_generation(6) == 1);
  CHECK(agent.reset_generation(100) == 2);

  UnrollQueue queue(64);
  SacLearner learner(agent, spec_for(agent), queue);
  const int transitions = push_and_close(queue, agent, 40, 5);
  REQUIRE(transitions > 20);
  int updates = 0;
  for (;;) {
    const std::int64_t done = learner.steps(), sampled = learner.replay().counters().sampled;
    std::vector<float> fresh;  // the critic a reset draws (NetworkSet::reinitialize)
    if (agent.reset_due(done)) {
      nn::NetworkOptions c = learner.networks().trained("critic1").options.network;
      c.seed = NetworkSet<Backend>::mix_seed(c.seed, static_cast<std::uint64_t>(done / 5));
      nn::Network<Backend> net(c);
      fresh = values_of(net);
      REQUIRE(values_of(learner.networks().network("critic1")) != fresh);
    }
    if (!learner.step().has_value()) break;
    ++updates;
    CAPTURE(done);
    // A catch-up update draws without counting; every other one counts its batch.
    CHECK(learner.replay().counters().sampled == sampled + (agent.catch_up_update(done) ? 0 : 8));
    if (!fresh.empty()) {
      // One Adam step from a zeroed state moves each value of the fresh critic by at most the rate.
      const std::vector<float> now = values_of(learner.networks().network("critic1"));
      for (std::size_t i = 0; i < now.size(); ++i) REQUIRE(std::abs(now[i] - fresh[i]) <= 0.0101f);
    }
  }
  CHECK(updates == transitions - 8 + 2 * 3);
  CHECK(learner.gauges()[4].value == 2.0);  // resets
  // The optimizers of the reset networks count from the last reset, the temperature's from the
  // start.
  NetworkSet<Backend>& nets = learner.networks();
  CHECK(nets.trained("actor").optimizer->steps() == updates - 10);
  CHECK(nets.trained("critic2").optimizer->steps() == updates - 10);
  CHECK(nets.trained("temperature").optimizer->steps() == updates);

  o.reset_updates = 5;  // a reset period must leave room for counted updates
  CHECK_THROWS_WITH_AS(SacAgent{o}, doctest::Contains(".reset_period (5) must exceed"), Error);
}

TEST_CASE("SAC learner: checkpoints hold every network, the temperature and Policy's squash") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / str_cat("seedrl_sac_", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "checkpoint.safetensors").string();
  const SacAgent agent(tiny_options());
  UnrollQueue queue(64);
  SacLearner learner(agent, spec_for(agent), queue);
  for (auto& u : random_windows(spec_for(agent), 40, 3)) queue.push(std::move(u));
  for (int i = 0; i < 3; ++i) REQUIRE(learner.step().has_value());
  learner.save_checkpoint(path, {}, {{"action_spec", kBox.to_text()}});

  UnrollQueue queue2(4);
  SacLearner loaded(agent, spec_for(agent), queue2);
  loaded.load_checkpoint(path);
  CHECK(loaded.steps() == 3);
  for (const char* name :
       {"actor", "critic1", "critic2", "critic1_target", "critic2_target", "temperature"}) {
    CAPTURE(name);
    CHECK(values_of(loaded.networks().network(name)) ==
          values_of(learner.networks().network(name)));
  }
  for (const char* name : {"actor", "critic1", "temperature"}) {
    CAPTURE(name);
    const auto& a = learner.networks().trained(name).optimizer->slots();
    const auto& b = loaded.networks().trained(name).optimizer->slots();
    REQUIRE(a.size() == b.size());
    for (std::size_t k = 0; k < a.size(); ++k)
      CHECK(std::equal(a[k].value.data<float>(), a[k].value.data<float>() + a[k].value.numel(),
                       b[k].value.data<float>()));
  }

  // Policy acts with the squashed mean, scaled to the box: tanh(mean) * 2.
  Policy<> policy(path);
  REQUIRE(policy.action_spec() == kBox);
  const Tensor obs = Tensor::from_values<float>({3, 2}, {0.5f, -0.5f, 0.1f, 0.9f, -1.0f, 0.0f});
  std::vector<float> actions(3);
  policy.act(obs, actions);
  const nn::NetworkOutputs& out = policy.outputs();
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(actions[static_cast<std::size_t>(i)] ==
          doctest::Approx(2.0 * std::tanh(out.mean.data<float>()[i])));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("SAC learner: the replay is checkpointed with the run and a resumed learner continues") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / str_cat("seedrl_sac_replay_", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "checkpoint.safetensors").string();
  SacAgentOptions o = tiny_options();
  o.checkpoint_replay = true;
  const SacAgent agent(o);
  UnrollQueue queue(64);
  SacLearner learner(agent, spec_for(agent), queue);
  for (auto& u : random_windows(spec_for(agent), 40, 8)) queue.push(std::move(u));
  for (int i = 0; i < 5; ++i) REQUIRE(learner.step().has_value());
  learner.save_checkpoint(path, {}, {{"action_spec", kBox.to_text()}});
  const std::optional<std::string> linked = io::read_replay_of(io::SafetensorsFile::read(path));
  REQUIRE(linked.has_value());
  const std::string saved = *linked;
  CHECK(saved == learner.replay().save(true));

  UnrollQueue queue2(64);
  SacLearner resumed(agent, spec_for(agent), queue2);
  resumed.load_checkpoint(path);
  CHECK(resumed.steps() == 5);
  CHECK(resumed.replay().save(true) == saved);  // items, priorities and the limiter's counters
  const auto c = resumed.replay().counters();
  CHECK(c.sampled == 5 * 8);
  CHECK(c.size == c.inserted);
  // It goes on from there: every transition inserted after the resume pays for one more update.
  const int transitions = push_and_close(queue2, agent, 12, 9);
  int updates = 0;
  while (resumed.step().has_value()) ++updates;
  CHECK(updates == c.inserted - 8 - 5 + transitions);
  CHECK(resumed.steps() == 5 + updates);

  // Without checkpoint_replay a resumed learner starts with an empty replay.
  UnrollQueue queue3(4);
  SacLearner fresh(SacAgent(tiny_options()), spec_for(agent), queue3);
  fresh.load_checkpoint(path);
  CHECK(fresh.replay().counters().size == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("SAC learner: with a prioritized replay the sampled windows get their TD errors") {
  SacAgentOptions o = tiny_options();
  o.replay.sampler = SamplerKind::prioritized;
  const SacAgent agent(o);
  UnrollQueue queue(64);
  SacLearner learner(agent, spec_for(agent), queue);
  for (auto& u : random_windows(spec_for(agent), 40, 4)) queue.push(std::move(u));
  REQUIRE(learner.step().has_value());
  // Every window went in at priority 1; the batch of 8 (some drawn twice) now holds its largest
  // |TD error| of the two critics instead.
  const std::int64_t inserted = learner.replay().counters().inserted;
  int changed = 0;
  for (std::int64_t i = 0; i < inserted; ++i) {
    const double p = learner.replay().priority(static_cast<std::uint64_t>(i));
    CHECK(std::isfinite(p));
    CHECK(p > 0.0);
    if (p != 1.0) ++changed;
  }
  CHECK(changed >= 1);
  CHECK(changed <= 8);
}

TEST_CASE("SAC through the runtime: central inference, the replay table, a bandit solved") {
  SacAgentOptions o = bandit_options();
  LocalTrainerOptions run;
  run.total_frames = 4'000;
  run.num_actors = 1;
  run.envs_per_actor = 4;
  run.server.unroll_length = 1;
  run.server.seed = 7;
  for (const SamplerKind sampler : {SamplerKind::uniform, SamplerKind::prioritized}) {
    o.replay.sampler = sampler;
    const TrainingResult r = train_locally<SacAgent, Backend>(
        SacAgent(o), [](std::int32_t, std::int32_t) { return Bandit(); }, run);
    CAPTURE(static_cast<int>(sampler));
    REQUIRE(r.mean_return.has_value());
    MESSAGE("bandit: mean return of the last 100 episodes ", *r.mean_return,
            " (uniform actions: about -0.69)");
    CHECK(*r.mean_return > -0.1);
    CHECK(r.learner_steps > 1'000);
  }
}

}  // namespace test_sac_learner
