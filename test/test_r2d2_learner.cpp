// The R2D2 agent and learner: exploration rates, priorities at insertion against a brute-force
// n-step computation, burn-in without gradient, the target-network period, priorities flowing
// back to the replay, importance weights, replay in checkpoints.
#include <doctest/doctest.h>

#include <filesystem>

#include "seedrl/agents/r2d2.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/experience/unroll_store.hpp"
#include "seedrl/inference/inference_server.hpp"
#include "support/r2d2_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_r2d2_learner {

using namespace seedrl;
using Backend = cpu::Backend;
using R2D2Learner = Learner<R2D2Agent, Backend>;
using Sequences = std::vector<std::unique_ptr<Unroll>>;

namespace {

using test::kActions;
using test::kLstm;
using test::random_sequences;
using test::spec_for;
using test::tiny_options;
constexpr std::uint8_t F = step_flags::kFirst, T = step_flags::kTerminated,
                       U = step_flags::kTruncated;

// Q [L, A] of one sequence from `net` run over all its steps from its stored state.
Eigen::ArrayXXf sequence_q(nn::Network<Backend>& net, const Unroll& u) {
  const std::int64_t length = u.flags.dim(0);
  Tensor resets = Tensor::empty({length, 1}, DType::u8);
  for (std::int64_t t = 0; t < length; ++t)
    resets.data<std::uint8_t>()[t] = is_first(u.flags.data<std::uint8_t>()[t]) ? 1 : 0;
  const nn::LstmState state{u.initial_state.h.reshape({1, kLstm}),
                            u.initial_state.c.reshape({1, kLstm})};
  const auto& out = net.forward(u.observations.reshape({length, 1, 2}), state, resets);
  return out.q.reshape({length, kActions}).matrix<float>().array();
}

// The priority of one sequence computed the slow, literal way: for each trained transition walk
// the episode forward up to n rewards, stopping at a termination (no bootstrap) or a truncation
// (bootstrap from the final observation), else bootstrapping at the window's end.
// From the online and target Q-values [L, A] of the sequence's steps.
double brute_force_priority(const Eigen::ArrayXXf& q, const Eigen::ArrayXXf& q_target,
                            const Unroll& u, const R2D2AgentOptions& o, std::int64_t burn_in) {
  const std::int64_t length = u.flags.dim(0), steps = length - burn_in - 1;
  const std::uint8_t* flags = u.flags.data<std::uint8_t>();
  // The sequence's legal-action masks, where it has them.
  const std::uint8_t* legal = u.fields.empty() ? nullptr : u.fields[0].data<std::uint8_t>();
  auto value = [&](std::int64_t step) {  // raw-scale double-Q value of x_step
    Eigen::Index best = -1;
    for (Eigen::Index a = 0; a < q.cols(); ++a)
      if ((legal == nullptr || legal[step * q.cols() + a]) &&
          (best < 0 || q(step, a) > q(step, best)))
        best = a;
    return inverse_value_rescale(static_cast<double>(q_target(step, best)));
  };
  std::vector<double> deltas;
  for (std::int64_t k = 0; k < steps; ++k) {
    const std::int64_t t = burn_in + k;
    if (is_last(flags[t])) {
      deltas.push_back(0.0);
      continue;
    }
    const std::int64_t m = std::min<std::int64_t>(o.n_step, steps - k);
    double y = 0.0, discount = 1.0;
    for (std::int64_t i = 0; i < m; ++i) {
      const std::int64_t next = t + i + 1;
      y += discount * u.rewards.data<float>()[next];
      discount *= o.discount;
      if (flags[next] & T) {
        discount = 0.0;
        break;
      }
      if (flags[next] & U) break;  // bootstrap from the truncated episode's last observation
    }
    // The step reached: where the loop stopped.
    std::int64_t reached = t + m;
    for (std::int64_t i = 1; i <= m; ++i)
      if (is_last(flags[t + i])) {
        reached = t + i;
        break;
      }
    if (discount != 0.0) y += discount * value(reached);
    const double predicted = q(t, u.actions.data<std::int32_t>()[t]);
    deltas.push_back(predicted - value_rescale(y));
  }
  double max = 0.0, mean = 0.0;
  for (double d : deltas) {
    max = std::max(max, std::abs(d));
    mean += std::abs(d) / static_cast<double>(deltas.size());
  }
  return 0.9 * max + 0.1 * mean;
}

double brute_force_priority(nn::Network<Backend>& online, nn::Network<Backend>& target,
                            const Unroll& u, const R2D2AgentOptions& o, std::int64_t burn_in) {
  return brute_force_priority(sequence_q(online, u), sequence_q(target, u), u, o, burn_in);
}

void perturb(nn::ParameterStore& store, std::uint64_t seed, double scale) {
  Rng rng(seed);
  float* v = store.values().data<float>();
  for (std::int64_t i = 0; i < store.values().numel(); ++i)
    v[i] += static_cast<float>(rng.uniform(-scale, scale));
  store.bump_version();
}

std::vector<float> values_of(nn::ParameterStore& store) {
  const float* v = store.values().data<float>();
  return {v, v + store.values().numel()};
}

std::vector<float> values_of_grads(R2D2Learner& learner) {
  const Tensor& g = learner.network().parameters().grads();
  return {g.data<float>(), g.data<float>() + g.numel()};
}

}  // namespace

TEST_CASE("R2D2Agent: per-slot exploration rates and greedy evaluation") {
  R2D2AgentOptions o = tiny_options();
  o.exploration_slots = 8;
  const R2D2Agent agent(o);
  CHECK(agent.epsilon(0, false) == doctest::Approx(0.4));
  CHECK(agent.epsilon(7, false) == doctest::Approx(std::pow(0.4, 8.0)));
  CHECK(agent.epsilon(8, false) == doctest::Approx(0.4));  // slot mod N
  CHECK(agent.epsilon(3, true) == doctest::Approx(0.001));

  // Slot 0 explores 40% of the time (2/3 of which pick a non-greedy action); slot 7 almost never.
  nn::NetworkOutputs out;
  const int frames = 20000;
  out.q = Tensor::zeros({1, frames, kActions});
  for (int i = 0; i < frames; ++i) out.q.data<float>()[i * kActions + 2] = 1.0f;  // greedy: 2
  std::vector<std::int32_t> slots(frames), actions(frames);
  std::vector<std::uint8_t> evaluation(frames, 0);
  for (int i = 0; i < frames; ++i) slots[static_cast<std::size_t>(i)] = i % 2 == 0 ? 0 : 7;
  Rng rng(1);
  agent.select_actions(out, slots, evaluation, actions, rng);
  int non_greedy[2] = {0, 0};
  for (int i = 0; i < frames; ++i) non_greedy[i % 2] += actions[static_cast<std::size_t>(i)] != 2;
  CHECK(non_greedy[0] / (frames / 2.0) == doctest::Approx(0.4 * 2 / 3).epsilon(0.08));
  CHECK(non_greedy[1] < 10);

  o.exploration_slots = 0;
  CHECK_THROWS_WITH_AS(R2D2Agent{o}, doctest::Contains("exploration_slots"), Error);
  o = tiny_options();
  o.min_replay_size = o.replay_capacity + 1;
  CHECK_THROWS_WITH_AS(R2D2Agent{o}, doctest::Contains("min_replay_size"), Error);
  o = tiny_options();
  o.network.q_head = false;
  o.network.dueling = false;
  o.network.policy_value_heads = true;
  CHECK_THROWS_WITH_AS(R2D2Agent{o}, doctest::Contains("q_head"), Error);
}

TEST_CASE("R2D2 learner: priorities at insertion match a brute-force n-step computation") {
  const R2D2AgentOptions o = tiny_options();
  const R2D2Agent agent(o);
  const UnrollSpec spec = spec_for(agent, 2, 7);
  UnrollQueue queue(8);
  R2D2Learner learner(agent, spec, queue);
  perturb(learner.target_network().parameters(), 9, 0.3);  // online and target differ

  Sequences sequences = random_sequences(spec, 12, 21);
  int boundaries = 0;
  for (const auto& u : sequences)
    for (std::int64_t t = 2; t < spec.length - 1; ++t)
      boundaries += is_last(u->flags.data<std::uint8_t>()[t]);
  REQUIRE(boundaries >= 3);  // the data exercises terminations and truncations

  // Independent copies of the networks for the reference.
  nn::Network<Backend> online(o.network), target(o.network);
  online.parameters().copy_values_from(learner.network().parameters());
  target.parameters().copy_values_from(learner.target_network().parameters());
  std::vector<double> expected;
  for (const auto& u : sequences)
    expected.push_back(brute_force_priority(online, target, *u, o, 2));

  learner.insert(sequences);
  CHECK(sequences.empty());
  REQUIRE(learner.replay().size() == 12);
  CHECK(learner.inserted() == 12);
  for (std::uint64_t i = 0; i < 12; ++i) {
    CAPTURE(i);
    CHECK(learner.replay().priority(i) ==
          doctest::Approx(expected[static_cast<std::size_t>(i)]).epsilon(1e-4));
  }
}

TEST_CASE("R2D2 learner: with legal-action masks, double Q bootstraps from legal actions only") {
  const R2D2AgentOptions o = tiny_options();
  const R2D2Agent agent(o);
  UnrollSpec spec = spec_for(agent, 2, 7);
  spec.fields = {{kActionMaskField, {{kActions}, DType::u8}}};
  UnrollQueue queue(8);
  R2D2Learner learner(agent, spec, queue);
  perturb(learner.target_network().parameters(), 9, 0.3);

  Sequences sequences = random_sequences(spec, 12, 22);
  nn::Network<Backend> online(o.network), target(o.network);
  online.parameters().copy_values_from(learner.network().parameters());
  target.parameters().copy_values_from(learner.target_network().parameters());
  std::vector<double> expected;
  int differ = 0;  // sequences whose priority the masks change (so that the check can fail)
  for (const auto& u : sequences) {
    expected.push_back(brute_force_priority(online, target, *u, o, 2));
    Unroll unmasked = *u;
    unmasked.fields.clear();
    differ += std::abs(brute_force_priority(online, target, unmasked, o, 2) - expected.back()) >
              1e-3 * expected.back();
  }
  CHECK(differ >= 2);
  learner.insert(sequences);
  REQUIRE(learner.replay().size() == 12);
  for (std::uint64_t i = 0; i < 12; ++i) {
    CAPTURE(i);
    CHECK(learner.replay().priority(i) ==
          doctest::Approx(expected[static_cast<std::size_t>(i)]).epsilon(1e-4));
  }
}

TEST_CASE("R2D2 learner: actor priorities are the n-step computation on the recorded Q-values") {
  R2D2AgentOptions o = tiny_options();
  o.actor_priorities = true;
  const R2D2Agent agent(o);
  const UnrollSpec spec = spec_for(agent, 2, 7);
  REQUIRE(spec.store_behaviour);  // the sequences record the acting Q-values
  UnrollQueue queue(8);
  R2D2Learner learner(agent, spec, queue);
  Sequences sequences = random_sequences(spec, 12, 23);
  std::vector<double> expected;
  for (const auto& u : sequences) {
    // The recorded Q serves as both networks' Q: no network of the learner's is involved.
    const Eigen::ArrayXXf q = u->behaviour.reshape({spec.length, kActions}).matrix<float>().array();
    expected.push_back(brute_force_priority(q, q, *u, o, 2));
  }
  const std::vector<float> before = values_of(learner.network().parameters());
  learner.insert(sequences);
  REQUIRE(learner.replay().size() == 12);
  for (std::uint64_t i = 0; i < 12; ++i) {
    CAPTURE(i);
    CHECK(learner.replay().priority(i) ==
          doctest::Approx(std::max(expected[static_cast<std::size_t>(i)], 1e-6)).epsilon(1e-4));
  }
  CHECK(values_of(learner.network().parameters()) == before);

  // Sequences without recorded Q-values cannot be prioritised this way.
  const UnrollSpec without = spec_for(R2D2Agent(tiny_options()), 2, 7);
  CHECK_THROWS_WITH_AS(R2D2Learner(agent, without, queue),
                       doctest::Contains("actor_priorities needs sequences that record"), Error);
}

TEST_CASE("R2D2 learner: burn-in steps pass no gradient; only their final state is used") {
  const R2D2Agent agent(tiny_options());
  const std::int64_t burn = 3, unroll = 5;
  const UnrollSpec with_burn_in = spec_for(agent, burn, unroll);
  const UnrollSpec without = spec_for(agent, 0, unroll);
  UnrollQueue queue(8);
  R2D2Learner a(agent, with_burn_in, queue), b(agent, without, queue);
  Sequences long_sequences = random_sequences(with_burn_in, 4, 33);

  // The same sequences without their burn-in, starting from the state the online network has
  // after it (computed here with a separate copy of the network).
  nn::Network<Backend> net(agent.network_config());
  net.parameters().copy_values_from(a.network().parameters());
  Sequences short_sequences;
  for (const auto& u : long_sequences) {
    auto s = Unroll::allocate(without);
    for (std::int64_t t = 0; t < without.length; ++t) {
      s->observations[t].copy_from(u->observations[burn + t]);
      s->rewards[t].copy_from(u->rewards[burn + t]);
      s->flags[t].copy_from(u->flags[burn + t]);
      s->actions[t].copy_from(u->actions[burn + t]);
      s->policy_versions[t].copy_from(u->policy_versions[burn + t]);
    }
    Tensor resets = Tensor::empty({burn, 1}, DType::u8);
    for (std::int64_t t = 0; t < burn; ++t)
      resets.data<std::uint8_t>()[t] = is_first(u->flags.data<std::uint8_t>()[t]) ? 1 : 0;
    const auto& warm = net.forward(
        u->observations.slice(0, burn).reshape({burn, 1, 2}),
        {u->initial_state.h.reshape({1, kLstm}), u->initial_state.c.reshape({1, kLstm})}, resets);
    s->initial_state.h.copy_from(warm.final_state.h.reshape({kLstm}));
    s->initial_state.c.copy_from(warm.final_state.c.reshape({kLstm}));
    short_sequences.push_back(std::move(s));
  }

  const R2D2Loss la = a.loss_and_gradients(long_sequences);
  const std::vector<float> ga = values_of_grads(a);
  const R2D2Loss lb = b.loss_and_gradients(short_sequences);
  CHECK(la.loss == doctest::Approx(lb.loss).epsilon(1e-6));
  REQUIRE(la.loss > 0.0);
  const float* gb = b.network().parameters().grads().data<float>();
  double max_diff = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < ga.size(); ++i) {
    max_diff = std::max(max_diff, static_cast<double>(std::abs(ga[i] - gb[i])));
    norm = std::max(norm, static_cast<double>(std::abs(ga[i])));
  }
  CHECK(norm > 1e-3);
  CHECK(max_diff <= 1e-5 * norm);

  // What happens inside the burn-in (its rewards and actions) changes nothing at all.
  for (const auto& u : long_sequences)
    for (std::int64_t t = 0; t < burn; ++t) {
      u->rewards.data<float>()[t] += 5.0f;
      u->actions.data<std::int32_t>()[t] = (u->actions.data<std::int32_t>()[t] + 1) % kActions;
    }
  const R2D2Loss again = a.loss_and_gradients(long_sequences);
  CHECK(again.loss == la.loss);
  CHECK(values_of_grads(a) == ga);
}

TEST_CASE("R2D2 learner: the target network is a hard copy every target_update_period steps") {
  R2D2AgentOptions o = tiny_options();
  o.target_update_period = 3;
  const R2D2Agent agent(o);
  const UnrollSpec spec = spec_for(agent, 1, 4);
  UnrollQueue queue(8);
  R2D2Learner learner(agent, spec, queue);
  Sequences sequences = random_sequences(spec, 8, 41);
  learner.insert(sequences);

  auto& online = learner.network().parameters();
  auto& target = learner.target_network().parameters();
  const std::vector<float> initial = values_of(online);
  CHECK(values_of(target) == initial);
  for (int step = 1; step <= 7; ++step) {
    const LearnerStepStats stats = learner.train_on_sample();
    REQUIRE_FALSE(stats.skipped);
    CHECK(stats.step == step);
    CAPTURE(step);
    CHECK(values_of(online) != initial);
    if (step % 3 == 0) {
      CHECK(values_of(target) == values_of(online));
    } else {
      CHECK(values_of(target) != values_of(online));
      if (step < 3) CHECK(values_of(target) == initial);
    }
  }
}

TEST_CASE(
    "R2D2 learner: new priorities flow back to the replay; importance weights scale the loss") {
  const R2D2Agent agent(tiny_options());
  const UnrollSpec spec = spec_for(agent, 2, 5);
  UnrollQueue queue(8);
  R2D2Learner learner(agent, spec, queue);
  Sequences sequences = random_sequences(spec, 2, 51);
  // Keep copies: the replay takes the sequences.
  std::vector<std::shared_ptr<const Unroll>> copies;
  for (const auto& u : sequences) {
    auto c = std::make_shared<Unroll>(*Unroll::allocate(spec));
    c->observations.copy_from(u->observations);
    c->rewards.copy_from(u->rewards);
    c->flags.copy_from(u->flags);
    c->actions.copy_from(u->actions);
    c->policy_versions.copy_from(u->policy_versions);
    c->initial_state.h.copy_from(u->initial_state.h);
    c->initial_state.c.copy_from(u->initial_state.c);
    copies.push_back(c);
  }
  learner.insert(sequences);
  const double inserted[2] = {learner.replay().priority(0), learner.replay().priority(1)};

  // Change the network: the priorities a step writes back are those of the network it trained.
  perturb(learner.network().parameters(), 3, 0.2);
  const Eigen::ArrayXf now = learner.sequence_priorities_of(copies);
  CHECK(std::abs(now(0) - inserted[0]) > 1e-3);
  learner.train_on_sample();  // batch 4 from 2 sequences: both are sampled with this seed
  CHECK(learner.replay().priority(0) == doctest::Approx(now(0)).epsilon(1e-5));
  CHECK(learner.replay().priority(1) == doctest::Approx(now(1)).epsilon(1e-5));
  CHECK(learner.sampled() == 4);

  // Weighted batch gradient = (w0 g0 + w1 g1) / 2, with g_i the gradient of sequence i alone.
  std::vector<std::shared_ptr<const Unroll>> first{copies[0]}, second{copies[1]};
  learner.loss_and_gradients(first);
  const std::vector<float> g0 = values_of_grads(learner);
  learner.loss_and_gradients(second);
  const std::vector<float> g1 = values_of_grads(learner);
  const float weights[2] = {0.5f, 2.0f};
  const R2D2Loss both = learner.loss_and_gradients(copies, weights);
  const std::vector<float> g = values_of_grads(learner);
  double max_diff = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double expected = (0.5 * g0[i] + 2.0 * g1[i]) / 2.0;
    max_diff = std::max(max_diff, std::abs(g[i] - expected));
    norm = std::max(norm, std::abs(expected));
  }
  CHECK(norm > 1e-4);
  CHECK(max_diff <= 1e-5 * norm);
  CHECK(both.loss > 0.0);
}

TEST_CASE("R2D2 learner: step() honours the minimum replay size and the replay ratio") {
  R2D2AgentOptions o = tiny_options();
  o.min_replay_size = 8;
  o.replay_ratio = 2.0;  // each inserted sequence is sampled twice on average
  const R2D2Agent agent(o);
  const UnrollSpec spec = spec_for(agent, 1, 4);
  UnrollQueue queue(64);
  R2D2Learner learner(agent, spec, queue);
  Sequences sequences = random_sequences(spec, 24, 61);
  for (auto& u : sequences) queue.push(std::move(u));
  queue.close();
  std::int64_t steps = 0;
  while (auto stats = learner.step()) {
    ++steps;
    CHECK(learner.replay().size() >= 8);
    CHECK(static_cast<double>(learner.sampled()) <= 2.0 * static_cast<double>(learner.inserted()));
  }
  CHECK(learner.inserted() == 24);
  CHECK(steps == 24 * 2 / 4);  // replay_ratio * inserted / batch_size
  CHECK(learner.steps() == steps);
}

TEST_CASE("R2D2 learner: replay contents travel with the checkpoint when asked") {
  const auto dir = std::filesystem::temp_directory_path() / "seedrl_test_r2d2_checkpoint";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "checkpoint.safetensors").string();
  for (const bool keep : {false, true}) {
    CAPTURE(keep);
    R2D2AgentOptions o = tiny_options();
    o.checkpoint_replay = keep;
    const R2D2Agent agent(o);
    const UnrollSpec spec = spec_for(agent, 1, 4);
    UnrollQueue queue(8);
    R2D2Learner first(agent, spec, queue);
    Sequences sequences = random_sequences(spec, 6, 71);
    first.insert(sequences);
    first.train_on_sample();
    first.save_checkpoint(path, {1000, 0, 3, {}, {}});
    CHECK(io::read_replay_of(io::SafetensorsFile::read(path)).has_value() == keep);
    // The replay file the checkpoint names is the only one (the first run's was removed).
    int replays = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      replays += entry.path().filename().string().starts_with("checkpoint.replay.") ? 1 : 0;
    CHECK(replays == (keep ? 1 : 0));

    R2D2Learner second(agent, spec, queue);
    const io::CheckpointCounters counters = second.load_checkpoint(path);
    CHECK(counters.frames == 1000);
    CHECK(second.steps() == 1);
    CHECK(values_of(second.network().parameters()) == values_of(first.network().parameters()));
    // The target network is in the checkpoint: the one the run stopped with, not a fresh copy.
    CHECK(values_of(second.target_network().parameters()) ==
          values_of(first.target_network().parameters()));
    CHECK(values_of(second.target_network().parameters()) !=
          values_of(first.network().parameters()));
    CHECK(second.replay().size() == (keep ? 6u : 0u));
    if (keep) {
      for (std::uint64_t i = 0; i < 6; ++i)
        CHECK(second.replay().priority(i) == first.replay().priority(i));
      // A learner for other sequences refuses the saved replay by name.
      R2D2Learner other(agent, spec_for(agent, 2, 4), queue);
      CHECK_THROWS_WITH_AS(other.load_checkpoint(path),
                           doctest::Contains("its replay holds sequences of another layout"),
                           Error);
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace test_r2d2_learner
