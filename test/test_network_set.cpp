// Learners with several networks (learner/network_set.hpp, learner/learner_core.hpp): each trained
// network with its own optimizer, learning rate and clipping, targets by copy or by Polyak
// averaging (checked against a naive loop), resets (a fresh network, its optimizer zeroed and its
// target copied), and all of them in checkpoints, the group's gradient all-reduce and join_group.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "seedrl/learner/learner_core.hpp"
#include "seedrl/learner/network_set.hpp"
#include "support/temp_dir.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_network_set {

using namespace seedrl;
using Backend = cpu::Backend;

namespace {

std::vector<double> values_of(const Tensor& t) {
  const Tensor host = t.clone(Device::cpu);
  return {host.data<float>(), host.data<float>() + host.numel()};
}

// The parameters' values one after the other (a store's flat buffer also holds the padding
// between them, which checkpoints do not record).
std::vector<double> parameters_of(const nn::ParameterStore& store) {
  std::vector<double> out;
  for (const nn::Parameter& p : store.parameters()) {
    const std::vector<double> v = values_of(p.value);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}
std::vector<double> parameters_of(nn::Network<Backend>& network) {
  return parameters_of(network.parameters());
}
// An optimizer slot's values at the parameters of `store`.
std::vector<double> slot_of(const nn::ParameterStore& store, const Tensor& slot) {
  std::vector<double> out;
  for (const nn::Parameter& p : store.parameters()) {
    const std::vector<double> v = values_of(slot.slice(p.offset, p.offset + p.shape.numel()));
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

double norm_of(const std::vector<double>& v) {
  double sum = 0.0;
  for (double x : v) sum += x * x;
  return std::sqrt(sum);
}

nn::OptimizerOptions sgd() {
  nn::OptimizerOptions o;
  o.kind = nn::OptimizerKind::sgd;
  return o;
}

// An actor (2 observations, 3 actions) and a critic with its Polyak target: the shape of SAC's
// learner. `critic_optimizer` Adam or SGD.
NetworkSetOptions actor_critic(nn::OptimizerOptions critic_optimizer = sgd(),
                               std::uint64_t seed = 1) {
  TrainedNetworkOptions actor{
      "actor", nn::NetworkOptions::mlp(2, 3, {8}), sgd(), {0.1, 0, 0.0}, 0.0};
  TrainedNetworkOptions critic{
      "critic", nn::NetworkOptions::mlp(2, 3, {5, 4}), critic_optimizer, {0.01, 0, 0.0}, 1e-3};
  actor.network.seed = seed;
  critic.network.seed = seed + 100;
  critic.network.policy_value_heads = false;
  critic.network.q_head = true;
  return {{actor, critic}, {{.name = "critic_target", .source = "critic", .polyak_tau = 0.1}}};
}

UnrollSpec spec_for_actor() {
  UnrollSpec spec;
  spec.observation = {{2}, DType::f32};
  spec.num_actions = 3;
  spec.length = 2;
  return spec;
}

constexpr MetricInfo kLoss[] = {{"loss"}};

// A learner whose "loss" is gradients the test writes: the core's step and nothing else.
class TwoNetworkLearner final : public LearnerCore<Backend> {
 public:
  explicit TwoNetworkLearner(const NetworkSetOptions& options)
      : LearnerCore<Backend>("two_networks", options, spec_for_actor(), kLoss) {}

  // Every gradient of network `name` set to `value` + i * `step` (element i), then a step.
  LearnerStepStats step_with(float actor_value, float critic_value) {
    fill(networks().trained("actor").network.parameters().grads(), actor_value);
    fill(networks().trained("critic").network.parameters().grads(), critic_value);
    const double loss[] = {1.0};
    return finish_step(loss, 1, 0.0, true, [] {});
  }

  static void fill(const Tensor& grads, float value) {
    for (std::int64_t i = 0; i < grads.numel(); ++i)
      grads.data<float>()[i] = value * static_cast<float>(1 + i % 7);
  }
};

// A stand-in for a group of two, without threads: as the root (recording) it keeps what it
// broadcasts and sums; as member 1 (replaying) it hands the root's values out in the same order.
struct ReplayGroup final : TrainingGroup {
  bool root = true;
  std::vector<std::vector<double>> broadcasts;
  std::vector<std::vector<double>> sums;
  std::size_t next_broadcast = 0, next_sum = 0;
  std::vector<std::size_t> reduced_sizes;

  int rank() const override { return root ? 0 : 1; }
  int size() const override { return 2; }
  void all_reduce(const Tensor& gradients, bool) override {
    reduced_sizes.push_back(static_cast<std::size_t>(gradients.numel()));
  }
  void sum(std::span<double> values) override {
    if (root) {
      sums.emplace_back(values.begin(), values.end());
      return;
    }
    const std::vector<double>& root_values = sums.at(next_sum++);
    std::copy(root_values.begin(), root_values.end(), values.begin());
  }
  void broadcast(const Tensor& values) override {
    if (root) {
      broadcasts.push_back(values_of(values));
      return;
    }
    const std::vector<double>& v = broadcasts.at(next_broadcast++);
    REQUIRE(static_cast<std::int64_t>(v.size()) == values.numel());
    for (std::size_t i = 0; i < v.size(); ++i) values.data<float>()[i] = static_cast<float>(v[i]);
  }
  void broadcast(std::string&) override {}
  void check_identical(const Tensor&, const std::string&) override {}
  [[noreturn]] void abort(const std::string& why) override { fail(why); }
};

}  // namespace

TEST_CASE("NetworkSet: a Polyak target moves by tau toward its source, as a naive loop says") {
  NetworkSet<Backend> set(actor_critic());
  nn::ParameterStore& critic = set.trained("critic").network.parameters();
  nn::ParameterStore& target = set.network("critic_target").parameters();
  // Targets start as copies of their sources.
  CHECK(values_of(target.values()) == values_of(critic.values()));
  // The source moves; the target follows by 10% per update.
  TwoNetworkLearner::fill(critic.values(), 0.25f);
  critic.bump_version();
  for (int update = 1; update <= 3; ++update) {
    const std::vector<double> t = values_of(target.values()), s = values_of(critic.values());
    const std::uint64_t version = target.version();
    set.update_targets(update);
    const std::vector<double> after = values_of(target.values());
    for (std::size_t i = 0; i < t.size(); ++i)
      REQUIRE(after[i] == doctest::Approx(0.9 * t[i] + 0.1 * s[i]).epsilon(1e-6));
    CHECK(target.version() > version);  // inference-side copies see a change
  }
}

TEST_CASE("NetworkSet: a copied target becomes its source every copy_period updates only") {
  TrainedNetworkOptions online{"online", nn::NetworkOptions::mlp(2, 3, {4}), sgd()};
  NetworkSet<Backend> set({{online}, {{.name = "target", .source = "online", .copy_period = 3}}});
  nn::ParameterStore& source = set.trained(0).network.parameters();
  const std::vector<double> start = values_of(source.values());
  TwoNetworkLearner::fill(source.values(), 0.5f);
  for (int update = 1; update <= 2; ++update) {
    set.update_targets(update);
    CHECK(values_of(set.network("target").parameters().values()) == start);
  }
  set.update_targets(3);
  CHECK(values_of(set.network("target").parameters().values()) == values_of(source.values()));
}

TEST_CASE("NetworkSet: a reset network starts afresh, its optimizer and target with it") {
  nn::OptimizerOptions adam;  // state worth zeroing
  NetworkSet<Backend> set(actor_critic(adam, 1));
  nn::ParameterStore& critic = set.trained("critic").network.parameters();
  nn::Optimizer& optimizer = *set.trained("critic").optimizer;
  const std::vector<double> initial = parameters_of(critic);
  const std::vector<double> actor = parameters_of(set.network("actor"));
  TwoNetworkLearner::fill(critic.grads(), 0.5f);
  for (int i = 0; i < 3; ++i) optimizer.step(0.01f);
  set.update_targets(3);
  REQUIRE(parameters_of(critic) != initial);
  REQUIRE(norm_of(slot_of(critic, optimizer.slots()[0].value)) > 0.0);

  const std::uint64_t version = critic.version();
  set.reinitialize("critic", 2);
  // The values a new network draws from the options' seed mixed with the generation: the same on
  // every member of a group, and not the values it started with.
  nn::NetworkOptions fresh_options = set.trained("critic").options.network;
  fresh_options.seed = NetworkSet<Backend>::mix_seed(fresh_options.seed, 2);
  CHECK(fresh_options.seed != set.trained("critic").options.network.seed);
  nn::Network<Backend> fresh(fresh_options);
  CHECK(parameters_of(critic) == parameters_of(fresh));
  CHECK(parameters_of(critic) != initial);
  CHECK(critic.version() > version);  // inference-side copies see a change
  for (const nn::OptimizerSlot& slot : optimizer.slots()) {
    CAPTURE(slot.name);
    CHECK(norm_of(slot_of(critic, slot.value)) == 0.0);
  }
  CHECK(optimizer.steps() == 0);
  CHECK(parameters_of(set.network("critic_target")) == parameters_of(critic));
  CHECK(parameters_of(set.network("actor")) == actor);  // the others keep theirs
  // Generation 0 is the network's own seed; an unknown network is refused by name.
  CHECK(NetworkSet<Backend>::mix_seed(101, 0) == 101);
  CHECK_THROWS_WITH_AS(set.reinitialize("critic2", 1),
                       doctest::Contains("no trained network named 'critic2'"), Error);
}

TEST_CASE("NetworkSet: bad settings are refused by name") {
  NetworkSetOptions o = actor_critic();
  o.targets[0].source = "nobody";
  CHECK_THROWS_WITH_AS(NetworkSet<Backend>{o},
                       doctest::Contains("critic_target.source 'nobody' is not a trained network"),
                       Error);
  o = actor_critic();
  o.targets[0].copy_period = 10;  // and polyak_tau
  CHECK_THROWS_WITH_AS(NetworkSet<Backend>{o},
                       doctest::Contains("set exactly one of copy_period and polyak_tau"), Error);
  o = actor_critic();
  o.trained[1].name = "actor";
  CHECK_THROWS_WITH_AS(NetworkSet<Backend>{o}, doctest::Contains("two networks are named 'actor'"),
                       Error);
  o = actor_critic();
  o.trained[1].max_grad_norm = -1.0;
  CHECK_THROWS_WITH_AS(NetworkSet<Backend>{o},
                       doctest::Contains("critic.max_grad_norm must be finite and >= 0"), Error);
  NetworkSet<Backend> set(actor_critic());
  CHECK_THROWS_WITH_AS(
      set.network("policy"),
      doctest::Contains("no network named 'policy' (actor, critic, critic_target)"), Error);
}

TEST_CASE("LearnerCore with two networks: each its own learning rate and clipping, its metrics") {
  TwoNetworkLearner learner(actor_critic());
  NetworkSet<Backend>& nets = learner.networks();
  const std::vector<double> actor = values_of(nets.trained("actor").network.parameters().values());
  const std::vector<double> critic =
      values_of(nets.trained("critic").network.parameters().values());
  const std::vector<double> target = values_of(nets.network("critic_target").parameters().values());

  const LearnerStepStats stats = learner.step_with(0.01f, 0.02f);
  REQUIRE_FALSE(stats.skipped);
  CHECK(learner.steps() == 1);
  // The actor: no clipping, learning rate 0.1.
  std::vector<double> g_actor(actor.size()), g_critic(critic.size());
  for (std::size_t i = 0; i < g_actor.size(); ++i) g_actor[i] = 0.01 * (1 + i % 7);
  for (std::size_t i = 0; i < g_critic.size(); ++i) g_critic[i] = 0.02 * (1 + i % 7);
  const std::vector<double> actor_after =
      values_of(nets.trained("actor").network.parameters().values());
  for (std::size_t i = 0; i < actor.size(); ++i)
    REQUIRE(actor_after[i] == doctest::Approx(actor[i] - 0.1 * g_actor[i]).epsilon(1e-5));
  // The critic: its gradient clipped to norm 1e-3, learning rate 0.01.
  const double critic_norm = norm_of(g_critic);
  const std::vector<double> critic_after =
      values_of(nets.trained("critic").network.parameters().values());
  for (std::size_t i = 0; i < critic.size(); ++i)
    REQUIRE(critic_after[i] ==
            doctest::Approx(critic[i] - 0.01 * g_critic[i] * 1e-3 / critic_norm).epsilon(1e-5));
  // Its target followed by Polyak averaging after the update.
  const std::vector<double> target_after =
      values_of(nets.network("critic_target").parameters().values());
  for (std::size_t i = 0; i < target.size(); ++i)
    REQUIRE(target_after[i] == doctest::Approx(0.9 * target[i] + 0.1 * critic_after[i]));
  // The metrics: the first network's under the common names, the others' by name.
  CHECK(stats.metrics["grad_norm"] == doctest::Approx(norm_of(g_actor)).epsilon(1e-5));
  CHECK(stats.metrics["learning_rate"] == doctest::Approx(0.1));
  CHECK(stats.metrics["grad_norm/critic"] == doctest::Approx(critic_norm).epsilon(1e-5));
  CHECK(stats.metrics["learning_rate/critic"] == doctest::Approx(0.01));
  std::vector<std::string> names;
  for (const MetricInfo& m : learner.metric_schema()) names.emplace_back(m.name);
  CHECK(names == std::vector<std::string>{"loss", "grad_norm", "learning_rate", "policy_lag",
                                          "transitions", "skipped_steps", "grad_norm/critic",
                                          "learning_rate/critic"});

  // A paused network (a delayed actor update) keeps its values; the others go on.
  nets.trained("actor").updating = false;
  learner.step_with(0.01f, 0.02f);
  CHECK(values_of(nets.trained("actor").network.parameters().values()) == actor_after);
  CHECK(values_of(nets.trained("critic").network.parameters().values()) != critic_after);
  CHECK(nets.trained("actor").optimizer->steps() == 1);
  CHECK(nets.trained("critic").optimizer->steps() == 2);

  // A non-finite gradient in any network skips the step for all, naming the network's values.
  nets.trained("actor").updating = true;
  const std::vector<double> actor_kept =
      values_of(nets.trained("actor").network.parameters().values());
  const LearnerStepStats bad = learner.step_with(0.01f, std::numeric_limits<float>::infinity());
  CHECK(bad.skipped);
  CHECK(learner.steps() == 2);
  CHECK(values_of(nets.trained("actor").network.parameters().values()) == actor_kept);
}

TEST_CASE("LearnerCore with two networks: checkpoints hold every network, optimizer and target") {
  test::TempDir dir("network_set");
  const std::string path = dir / "checkpoint.safetensors";
  nn::OptimizerOptions adam;  // optimizer state worth restoring
  TwoNetworkLearner a(actor_critic(adam, 1));
  a.step_with(0.01f, 0.02f);
  a.step_with(-0.02f, 0.01f);
  a.save_checkpoint(path, {});

  TwoNetworkLearner b(actor_critic(adam, 7));  // other initial values
  CHECK(b.load_checkpoint(path).learner_steps == 2);
  for (const char* name : {"actor", "critic", "critic_target"})
    CHECK(parameters_of(b.networks().network(name)) == parameters_of(a.networks().network(name)));
  const auto& slots_a = a.networks().trained("critic").optimizer->slots();
  const auto& slots_b = b.networks().trained("critic").optimizer->slots();
  REQUIRE(slots_a.size() == slots_b.size());
  for (std::size_t i = 0; i < slots_a.size(); ++i)
    CHECK(slot_of(b.networks().trained("critic").network.parameters(), slots_b[i].value) ==
          slot_of(a.networks().trained("critic").network.parameters(), slots_a[i].value));
  CHECK(b.networks().trained("critic").optimizer->steps() == 2);
  // Resumed, both take the same next step.
  a.step_with(0.03f, 0.01f);
  b.step_with(0.03f, 0.01f);
  CHECK(parameters_of(b.networks().network("critic_target")) ==
        parameters_of(a.networks().network("critic_target")));

  // The first network's tensors keep their own names (Policy reads them), the others are
  // prefixed; a file written before targets were saved re-derives them from their sources.
  const io::SafetensorsFile file = io::SafetensorsFile::read(path);
  CHECK(file.find("torso.fc1.weight") != nullptr);
  CHECK(file.find("critic/q.weight") != nullptr);
  CHECK(file.find("critic_target/q.weight") != nullptr);
  CHECK(file.find("optimizer/adam.m/critic/q.weight") != nullptr);
  std::vector<io::CheckpointPart> parts = a.networks().checkpoint_parts();
  parts.pop_back();  // no target
  const std::string old_style = dir / "old.safetensors";
  io::save_checkpoint(old_style, parts, {0, 3, 0, {}, {}}, a.checkpoint_metadata());
  TwoNetworkLearner c(actor_critic(adam, 9));
  c.load_checkpoint(old_style);
  CHECK(parameters_of(c.networks().network("critic_target")) ==
        parameters_of(a.networks().network("critic")));

  // A file without a trained network is refused by name, and nothing changes.
  parts.pop_back();  // no critic
  const std::string partial = dir / "partial.safetensors";
  io::Metadata metadata = a.checkpoint_metadata();
  io::save_checkpoint(partial, parts, {0, 3, 0, {}, {}}, metadata);
  const std::vector<double> before = values_of(c.network().parameters().values());
  CHECK_THROWS_WITH_AS(c.load_checkpoint(partial),
                       doctest::Contains("missing tensor 'critic/torso.fc1.weight'"), Error);
  CHECK(values_of(c.network().parameters().values()) == before);
}

TEST_CASE("LearnerCore with two networks: join_group shares all, the all-reduce gets each") {
  TwoNetworkLearner root(actor_critic(nn::OptimizerOptions{}, 1));
  root.step_with(0.01f, 0.02f);
  TwoNetworkLearner member(actor_critic(nn::OptimizerOptions{}, 5));
  ReplayGroup group;
  root.join_group(group);
  group.root = false;
  member.join_group(group);
  for (const char* name : {"actor", "critic", "critic_target"})
    CHECK(parameters_of(member.networks().network(name)) ==
          parameters_of(root.networks().network(name)));
  CHECK(values_of(member.networks().trained("critic").optimizer->slots()[0].value) ==
        values_of(root.networks().trained("critic").optimizer->slots()[0].value));
  CHECK(member.steps() == 1);
  CHECK(member.networks().trained("actor").optimizer->steps() == 1);

  // Every step hands each updating network's gradients to the group, in order.
  const auto actor_size = static_cast<std::size_t>(
      member.networks().trained("actor").network.parameters().grads().numel());
  const auto critic_size = static_cast<std::size_t>(
      member.networks().trained("critic").network.parameters().grads().numel());
  member.step_with(0.01f, 0.02f);
  CHECK(group.reduced_sizes == std::vector<std::size_t>{actor_size, critic_size});
  member.networks().trained("actor").updating = false;
  member.step_with(0.01f, 0.02f);
  CHECK(group.reduced_sizes == std::vector<std::size_t>{actor_size, critic_size, critic_size});
}

}  // namespace test_network_set
