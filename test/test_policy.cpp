// Policy: a checkpoint written by a learner acts, through Policy alone, as the learner's network
// does (checked against that network's own forward pass, step by step and over sequences with
// resets); the acting modes; its compute threads; the checkpoint description; clear errors. (The
// metadata's text forms: test_descriptions.cpp.)
#include <doctest/doctest.h>

#include <filesystem>

#include "seedrl/agents/r2d2.hpp"
#include "seedrl/agents/vtrace.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/core/atomic_file.hpp"
#include "seedrl/core/binary_io.hpp"
#include "seedrl/env/catch.hpp"
#include "seedrl/env/flatten_observation.hpp"
#include "seedrl/experience/normalization.hpp"
#include "seedrl/inference/inference_server.hpp"
#include "seedrl/io/safetensors.hpp"
#include "seedrl/policy/policy.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"
#include "support/example_defaults.hpp"
#include "support/temp_dir.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_policy {

using namespace seedrl;
using Backend = cpu::Backend;

namespace {

using test::TempDir;

Tensor random_observations(const Shape& shape, Rng& rng) {
  Tensor t = Tensor::zeros(shape);
  for (float& x : std::span(t.data<float>(), static_cast<std::size_t>(t.numel())))
    x = static_cast<float>(rng.uniform(-2, 2));
  return t;
}

std::int32_t argmax_row(const Tensor& rows, std::int64_t i) {
  const auto m = rows.matrix<float>();
  Eigen::Index best = 0;
  m.row(i).maxCoeff(&best);
  return static_cast<std::int32_t>(best);
}

// A V-trace learner (MLP, 4 actions) that trained a few steps' worth of random parameters, saved.
struct VTraceCheckpoint {
  VTraceAgentOptions options;
  std::unique_ptr<VTraceAgent> agent;
  UnrollQueue queue{1};
  std::unique_ptr<Learner<VTraceAgent, Backend>> learner;
  explicit VTraceCheckpoint(const std::string& path) {
    options.network = nn::NetworkOptions::mlp(3, 4, {16, 8});
    options.network.seed = 11;
    options.batch_size = 2;
    agent = std::make_unique<VTraceAgent>(options);
    InferenceServerOptions server;
    server.unroll_length = 4;
    const UnrollSpec spec = make_unroll_spec(*agent, {{3}, DType::f32}, {4}, server);
    learner = std::make_unique<Learner<VTraceAgent, Backend>>(*agent, spec, queue);
    learner->save_checkpoint(path, {12345, 0, 67, {}, {}});
  }
};

R2D2AgentOptions recurrent_options() {
  R2D2AgentOptions o;
  o.network = nn::NetworkOptions::minatar(2, 5);
  o.network.lstm_size = 6;
  o.network.q_head = true;
  o.network.policy_value_heads = false;
  o.network.dueling = true;
  o.network.seed = 3;
  o.batch_size = 2;
  o.replay_capacity = 16;
  o.min_replay_size = 2;
  o.evaluation_epsilon = 0.25;
  return o;
}

void save_r2d2(const R2D2AgentOptions& o, const std::string& path) {
  const R2D2Agent agent(o);
  InferenceServerOptions server;
  server.unroll_length = 4;
  server.burn_in = 2;
  const UnrollSpec spec =
      make_unroll_spec(agent, {o.network.observation_shape, DType::f32},
                       {static_cast<std::int32_t>(o.network.num_actions)}, server);
  UnrollQueue queue(1);
  Learner<R2D2Agent, Backend> learner(agent, spec, queue);
  learner.save_checkpoint(path, {1, 0, 0, {}, {}});
}

}  // namespace

TEST_CASE("Policy: a V-trace checkpoint acts greedily, as the learner's network ranks actions") {
  TempDir dir("policy_vtrace");
  const std::string path = dir / "checkpoint.safetensors";
  VTraceCheckpoint saved(path);

  Policy<> policy(path);
  CHECK(policy.agent() == "vtrace");
  CHECK(policy.acting().mode == ActionMode::greedy);
  CHECK(policy.counters().frames == 12345);
  CHECK(policy.counters().episodes == 67);
  CHECK(policy.num_actions() == 4);
  CHECK_FALSE(policy.recurrent());
  CHECK(nn::describe(policy.network_config()) == nn::describe(saved.options.network));

  Rng rng(1);
  nn::Network<Backend>& reference = saved.learner->network();
  for (int round = 0; round < 3; ++round) {
    const Tensor obs = random_observations({7, 3}, rng);
    const std::vector<std::int32_t> actions = policy.act(obs);
    const Tensor policy_logits = policy.outputs().logits.reshape({7, 4}).clone();
    const nn::NetworkOutputs& out = reference.forward(obs.reshape({1, 7, 3}));
    const Tensor logits = out.logits.reshape({7, 4});
    CHECK((policy_logits.matrix<float>() - logits.matrix<float>()).cwiseAbs().maxCoeff() <= 1e-6f);
    for (std::int64_t i = 0; i < 7; ++i)
      CHECK(actions[static_cast<std::size_t>(i)] == argmax_row(logits, i));
  }
}

TEST_CASE(
    "Policy: a recurrent R2D2 checkpoint keeps each stream's state and restarts it on reset") {
  TempDir dir("policy_r2d2");
  const std::string path = dir / "checkpoint.safetensors";
  const R2D2AgentOptions o = recurrent_options();
  save_r2d2(o, path);

  Policy<> policy(path);
  CHECK(policy.agent() == "r2d2");
  CHECK(policy.recurrent());
  CHECK(policy.network_config().dueling);
  CHECK_FALSE(policy.network_config().policy_value_heads);
  CHECK(policy.acting().mode == ActionMode::epsilon_greedy);
  CHECK(policy.acting().epsilon == doctest::Approx(0.25));

  // The reference: the same parameters, the whole [T, B] sequence in one forward with resets.
  nn::Network<Backend> reference(o.network);
  io::load_checkpoint(path, reference.parameters(), nullptr);
  constexpr std::int64_t kSteps = 5, kStreams = 3;
  Rng rng(2);
  const Tensor obs = random_observations({kSteps, kStreams, 10, 10, 2}, rng);
  Tensor resets = Tensor::zeros({kSteps, kStreams}, DType::u8);
  resets.data<std::uint8_t>()[2 * kStreams + 1] = 1;  // stream 1 starts an episode at step 2
  resets.data<std::uint8_t>()[4 * kStreams + 0] = 1;  // stream 0 at step 4
  const Tensor q = reference.forward(obs, {}, resets).q.clone();

  for (std::int64_t t = 0; t < kSteps; ++t) {
    for (std::int64_t s = 0; s < kStreams; ++s)
      if (t > 0 && resets.data<std::uint8_t>()[t * kStreams + s]) policy.reset(s);
    const std::vector<std::int32_t> actions = policy.act(obs[t]);
    CHECK(actions.size() == kStreams);
    const Tensor got = policy.outputs().q.reshape({kStreams, 5});
    const Tensor want = q[t].reshape({kStreams, 5});
    CHECK((got.matrix<float>() - want.matrix<float>()).cwiseAbs().maxCoeff() <= 1e-5f);
  }
  // Without the resets the states would differ: the check above can fail.
  Policy<> no_resets(path);
  for (std::int64_t t = 0; t < kSteps; ++t) no_resets.act(obs[t]);
  const Tensor last = no_resets.outputs().q.reshape({kStreams, 5});
  const Tensor want = q[kSteps - 1].reshape({kStreams, 5});
  CHECK((last.matrix<float>().row(0) - want.matrix<float>().row(0)).cwiseAbs().maxCoeff() > 1e-4f);
}

TEST_CASE("Policy: an agent trained on Catch plays from its checkpoint as its evaluation did") {
  TempDir dir("policy_catch");
  const std::int64_t frames = 250000;
  LocalTrainerOptions run = test::example_run_options(frames, dir.path.string());
  run.evaluation_actors = 1;
  const TrainingResult trained = train_locally<VTraceAgent, Backend>(
      VTraceAgent(test::example_vtrace_options(nn::NetworkOptions::mlp(50, 3), frames)),
      test::make_catch, run);
  REQUIRE(trained.evaluation_mean_return.has_value());

  Policy<> policy(dir / "checkpoint.safetensors");
  constexpr int kEnvs = 10, kEpisodes = 20;  // each env plays kEpisodes episodes
  std::vector<FlattenObservation<Catch>> envs;
  for (int e = 0; e < kEnvs; ++e) envs.emplace_back(Catch(static_cast<std::uint64_t>(777 + e)));
  const Tensor obs = Tensor::zeros({kEnvs, 50});
  for (int e = 0; e < kEnvs; ++e) envs[static_cast<std::size_t>(e)].reset(obs[e]);
  double total = 0.0;
  int episodes = 0;
  while (episodes < kEnvs * kEpisodes) {
    const std::vector<std::int32_t> actions = policy.act(obs);
    for (int e = 0; e < kEnvs; ++e) {
      auto& env = envs[static_cast<std::size_t>(e)];
      const StepResult step = env.step(actions[static_cast<std::size_t>(e)], obs[e]);
      total += step.reward;
      if (step.episode_over()) {
        ++episodes;
        env.reset(obs[e]);
      }
    }
  }
  const double played = total / episodes;
  MESSAGE("Catch: evaluation during training ", *trained.evaluation_mean_return,
          ", played from the checkpoint ", played);
  CHECK(played > 0.8);  // random play averages about -0.6
  CHECK(std::abs(played - *trained.evaluation_mean_return) < 0.3);
}

TEST_CASE("Policy: acting modes and streams") {
  TempDir dir("policy_modes");
  const std::string path = dir / "checkpoint.safetensors";
  VTraceCheckpoint saved(path);
  Rng rng(3);
  const Tensor obs = random_observations({1, 3}, rng);

  SUBCASE("epsilon 1 acts uniformly, epsilon 0 greedily") {
    Policy<> greedy(path);
    const std::int32_t best = greedy.act(obs)[0];
    Policy<> never(path, {.acting = ActingOptions{ActionMode::epsilon_greedy, 0.0}, .seed = 1});
    Policy<> always(path, {.acting = ActingOptions{ActionMode::epsilon_greedy, 1.0}, .seed = 1});
    std::array<int, 4> counts{};
    for (int i = 0; i < 4000; ++i) {
      CHECK(never.act(obs)[0] == best);
      ++counts[static_cast<std::size_t>(always.act(obs)[0])];
    }
    for (int c : counts) CHECK(std::abs(c - 1000) < 150);
  }
  SUBCASE("sample draws from softmax(logits)") {
    Policy<> sampler(path, {.acting = ActingOptions{ActionMode::sample}, .seed = 7});
    std::array<int, 4> counts{};
    constexpr int kDraws = 20000;
    for (int i = 0; i < kDraws; ++i) ++counts[static_cast<std::size_t>(sampler.act(obs)[0])];
    const Eigen::VectorXf logits = sampler.outputs().logits.reshape({1, 4}).matrix<float>().row(0);
    const Eigen::ArrayXd p = (logits.cast<double>().array() - logits.maxCoeff()).exp();
    for (int a = 0; a < 4; ++a) {
      const double expected = kDraws * p[a] / p.sum();
      CHECK(std::abs(counts[static_cast<std::size_t>(a)] - expected) <
            5.0 * std::sqrt(expected) + 5.0);
    }
  }
  SUBCASE("the number of streams is fixed until reset()") {
    Policy<> policy(path);
    CHECK(policy.streams() == 0);
    policy.act(random_observations({4, 3}, rng));
    CHECK(policy.streams() == 4);
    CHECK_THROWS_WITH_AS(policy.act(random_observations({2, 3}, rng)),
                         doctest::Contains("2 observations for 4 streams"), Error);
    CHECK_THROWS_WITH_AS(policy.reset(4), doctest::Contains("stream 4 out of range"), Error);
    policy.reset();
    policy.act(random_observations({2, 3}, rng));
    CHECK(policy.streams() == 2);
    CHECK_THROWS_WITH_AS(policy.act(random_observations({2, 5}, rng)),
                         doctest::Contains("observations must be [N, 3]"), Error);
    std::vector<std::int32_t> too_few(1);
    CHECK_THROWS_WITH_AS(policy.act(random_observations({2, 3}, rng), too_few),
                         doctest::Contains("need room for 2 action values, got 1"), Error);
  }
}

TEST_CASE("Policy: act() computes on PolicyOptions::threads and gives the caller's count back") {
  TempDir dir("policy_threads");
  const std::string path = dir / "checkpoint.safetensors";
  VTraceCheckpoint saved(path);
  const struct Restore {
    int threads;
    ~Restore() { cpu::set_num_threads(threads); }
  } restore{cpu::num_threads()};
  cpu::set_num_threads(3);  // the host's own setting for this thread
  Rng rng(2);
  const Tensor obs = random_observations({5, 3}, rng);
  std::vector<Tensor> logits;
  for (const int threads : {1, 2, 0}) {  // the default; two; the caller's three
    PolicyOptions options;
    options.threads = threads;
    Policy<> policy(path, options);
    const std::vector<std::int32_t> actions = policy.act(obs);
    CHECK(cpu::num_threads() == 3);
    logits.push_back(policy.outputs().logits.reshape({5, 4}).clone());
    for (std::int64_t i = 0; i < 5; ++i)
      CHECK(actions[static_cast<std::size_t>(i)] == argmax_row(logits.back(), i));
  }
  for (const Tensor& l : logits)
    CHECK((l.matrix<float>() - logits[0].matrix<float>()).cwiseAbs().maxCoeff() <= 1e-5f);
  PolicyOptions negative;
  negative.threads = -1;
  CHECK_THROWS_WITH_AS(Policy<>(path, negative),
                       doctest::Contains("PolicyOptions::threads must be >= 0"), Error);
}

TEST_CASE("Policy: checkpoints it cannot serve are refused by name") {
  TempDir dir("policy_errors");
  CHECK_THROWS_WITH_AS(Policy<>(dir / "missing.safetensors"),
                       doctest::Contains("missing.safetensors"), Error);

  // A corrupt checkpoint: Policy and describe_checkpoint (so play and its ONNX export) refuse it.
  const std::string corrupt = dir / "corrupt.safetensors";
  VTraceCheckpoint saved(corrupt);
  std::string bytes = read_file(corrupt);
  bytes[bytes.size() - 2] ^= 0x40;  // the last tensor's data
  write_file_atomically(corrupt, bytes);
  CHECK_THROWS_WITH_AS(Policy<>{corrupt}, doctest::Contains("fails its checksum"), Error);
  CHECK_THROWS_WITH_AS(describe_checkpoint(corrupt), doctest::Contains("fails its checksum"),
                       Error);

  // A safetensors file that is no checkpoint.
  const std::string plain = dir / "plain.safetensors";
  const Tensor w = Tensor::zeros({2});
  io::write_safetensors(plain, std::vector<io::NamedTensor>{{"w", w}}, {});
  CHECK_THROWS_WITH_AS(Policy<>{plain}, doctest::Contains("not a seedrl checkpoint"), Error);

  // A checkpoint without the network's name (e.g. written by io::save_checkpoint directly).
  const std::string unnamed = dir / "unnamed.safetensors";
  nn::Network<Backend> net(nn::NetworkOptions::mlp(3, 2, {4}));
  io::save_checkpoint(unnamed, net.parameters(), nullptr, {});
  CHECK_THROWS_WITH_AS(Policy<>{unnamed}, doctest::Contains("does not name its network"), Error);

  // A network description this build does not know.
  const std::string unknown = dir / "unknown.safetensors";
  io::save_checkpoint(unknown, net.parameters(), nullptr, {}, {{"network", "transformer 12"}});
  CHECK_THROWS_WITH_AS(Policy<>{unknown}, doctest::Contains("unknown torso 'transformer'"), Error);

  // A description that asks for far more values than the file holds is refused before anything
  // is allocated (a billion-wide layer would take the machine's memory).
  const std::string huge = dir / "huge.safetensors";
  io::save_checkpoint(huge, net.parameters(), nullptr, {},
                      {{"network", "mlp observation [3] actions 2 lstm 0 hidden [1000000000]"}});
  CHECK_THROWS_WITH_AS(Policy<>{huge}, doctest::Contains("(NetworkOptions::max_parameters)"),
                       Error);
  io::save_checkpoint(huge, net.parameters(), nullptr, {},
                      {{"network",
                        "mlp observation [1073741824, 1073741824, 1073741824] "
                        "actions 2 lstm 0 hidden [4]"}});
  CHECK_THROWS_WITH_AS(Policy<>{huge}, doctest::Contains("overflow"), Error);

  // The description and the parameters disagree: the missing tensor is named.
  const std::string mismatch = dir / "mismatch.safetensors";
  io::save_checkpoint(mismatch, net.parameters(), nullptr, {},
                      {{"network", "mlp observation [3] actions 2 lstm 0 hidden [4,4]"}});
  CHECK_THROWS_WITH_AS(Policy<>{mismatch}, doctest::Contains("missing tensor 'torso.fc2.weight'"),
                       Error);

  // A Gaussian policy over a box without recorded bounds, or with bounds of another size.
  const nn::Network<Backend> gaussian(nn::NetworkOptions::mlp(3, 0).gaussian(2));
  const std::string box = dir / "box.safetensors";
  io::save_checkpoint(box, gaussian.parameters(), nullptr, {},
                      {{"network", nn::describe(gaussian.config())}});
  CHECK_THROWS_WITH_AS(Policy<>{box},
                       doctest::Contains("records no bounds (metadata 'action_spec'"), Error);
  io::save_checkpoint(
      box, gaussian.parameters(), nullptr, {},
      {{"network", nn::describe(gaussian.config())}, {"action_spec", "box 1 low -1 high 1"}});
  CHECK_THROWS_WITH_AS(Policy<>{box}, doctest::Contains("checkpoint records box of 1 in [-1, 1]"),
                       Error);
  io::save_checkpoint(
      box, gaussian.parameters(), nullptr, {},
      {{"network", nn::describe(gaussian.config())}, {"action_spec", "box 2 low -1 1 high 1 -1"}});
  CHECK_THROWS_WITH_AS(Policy<>{box}, doctest::Contains("box dimension 1 has bounds [1, -1]"),
                       Error);
  // Observation statistics of another size than the network's observations.
  io::save_checkpoint(box, gaussian.parameters(), nullptr, {},
                      {{"network", nn::describe(gaussian.config())},
                       {"action_spec", "box 2 low -1 -1 high 1 1"},
                       {"normalization", "normalization-v1 observations 5 2 0 0 1 1 10"}});
  CHECK_THROWS_WITH_AS(Policy<>{box}, doctest::Contains("observation statistics of 2 values"),
                       Error);

  // Sampling needs a policy head; an unreadable acting record is named.
  const std::string r2d2 = dir / "r2d2.safetensors";
  save_r2d2(recurrent_options(), r2d2);
  CHECK_THROWS_WITH_AS(Policy<>(r2d2, {.acting = ActingOptions{ActionMode::sample}}),
                       doctest::Contains("needs a policy head"), Error);
  const std::string bad_acting = dir / "bad_acting.safetensors";
  io::save_checkpoint(bad_acting, net.parameters(), nullptr, {},
                      {{"network", nn::describe(net.config())}, {"acting", "epsilon_greedy 2"}});
  CHECK_THROWS_WITH_AS(Policy<>{bad_acting},
                       doctest::Contains("epsilon must be a number in [0, 1]"), Error);
}

TEST_CASE("Policy: box actions are the Gaussian's mean (or a draw), clipped, on normalised input") {
  TempDir dir("policy_box_actions");
  const std::string path = dir / "checkpoint.safetensors";
  auto config = nn::NetworkOptions::mlp(3, 0, {8}).gaussian(2);
  config.mlp_activation = nn::Activation::tanh;
  config.separate_value_torso = true;
  config.initial_log_std = -0.5f;
  config.seed = 4;
  nn::Network<Backend> net(config);
  // Means spread well past the bounds of the second dimension: some actions are clipped.
  Rng rng(5);
  nn::Parameter& mean_weight = net.parameters().find("policy_mean.weight");
  for (float& w : std::span(mean_weight.value.data<float>(), 16))
    w = static_cast<float>(rng.uniform(-1, 1));
  net.parameters().bump_version();
  const ActionSpec spec = ActionSpec::box({-2.0f, -0.25f}, {2.0f, 0.25f});
  // Statistics as a PPO run's inference gathers them: observations around 3 with std 0.5.
  NormalizationOptions normalize;
  normalize.observations = true;
  ExperienceNormalizer stats(normalize, 3, 0.99f, 1);
  RowMatrixXf seen(64, 3);
  for (Eigen::Index i = 0; i < seen.size(); ++i)
    seen.data()[i] = static_cast<float>(3.0 + 0.5 * rng.normal());
  const std::vector<std::uint8_t> training(64, 0);
  stats.normalize_observations(seen, training);
  io::save_checkpoint(path, net.parameters(), nullptr, {},
                      {{"network", nn::describe(config)},
                       {"agent", "ppo"},
                       {"action_spec", spec.to_text()},
                       {"normalization", stats.to_text()}});

  Policy<> policy(path);
  CHECK(policy.action_spec() == spec);
  CHECK(policy.normalization().active());
  CHECK(policy.num_actions() == 0);
  const std::int64_t n = 6;
  Tensor obs = Tensor::zeros({n, 3});
  for (float& x : std::span(obs.data<float>(), 18)) x = static_cast<float>(3.0 + rng.normal());
  std::vector<float> actions(static_cast<std::size_t>(n * 2));
  policy.act(obs, std::span<float>(actions));

  // The reference: normalise in double as the definition says, the network's mean, clipped.
  const math::RunningMoments& m = stats.observation_moments();
  Tensor normalized = Tensor::zeros({1, n, 3});
  for (std::int64_t i = 0; i < n; ++i)
    for (int j = 0; j < 3; ++j) {
      const double z =
          (obs.data<float>()[i * 3 + j] - m.mean()(j)) / std::sqrt(m.variance()(j) + 1e-8);
      normalized.data<float>()[i * 3 + j] = static_cast<float>(std::clamp(z, -10.0, 10.0));
    }
  const nn::NetworkOutputs& out = net.forward(normalized);
  int clipped = 0;
  for (std::int64_t i = 0; i < n * 2; ++i) {
    const auto d = static_cast<std::size_t>(i % 2);
    const float mean = out.mean.data<float>()[i];
    const float expected = std::clamp(mean, spec.low[d], spec.high[d]);
    CAPTURE(i);
    CHECK(actions[static_cast<std::size_t>(i)] == doctest::Approx(expected).epsilon(1e-5));
    clipped += expected != mean ? 1 : 0;
  }
  CHECK(clipped > 0);
  CHECK(clipped < n * 2);

  // Sampling: draws around the mean with the recorded std, inside the bounds.
  Policy<> sampler(path, {.acting = ActingOptions{ActionMode::sample}, .seed = 3});
  double spread = 0.0;
  for (int k = 0; k < 200; ++k) {
    sampler.act(obs, std::span<float>(actions));
    for (std::size_t i = 0; i < actions.size(); ++i) {
      const std::size_t d = i % 2;
      CHECK(actions[i] >= spec.low[d]);
      CHECK(actions[i] <= spec.high[d]);
      if (d == 0)
        spread += std::abs(actions[i] - std::clamp(out.mean.data<float>()[i], -2.0f, 2.0f));
    }
  }
  // E|z| std = 0.8 exp(-0.5) = 0.48 for the unclipped first dimension.
  CHECK(spread / (200.0 * n) == doctest::Approx(0.8 * std::exp(-0.5)).epsilon(0.15));

  // The wrong kind of action buffer, epsilon-greedy, unnormalisable input: refused by name.
  std::vector<std::int32_t> discrete(static_cast<std::size_t>(n));
  CHECK_THROWS_WITH_AS(policy.act(obs, std::span<std::int32_t>(discrete)),
                       doctest::Contains("call act() with float actions"), Error);
  std::vector<float> short_buffer(3);
  CHECK_THROWS_WITH_AS(policy.act(obs, std::span<float>(short_buffer)),
                       doctest::Contains("need room for 12 action values, got 3"), Error);
  CHECK_THROWS_WITH_AS(Policy<>(path, {.acting = ActingOptions{ActionMode::epsilon_greedy, 0.1}}),
                       doctest::Contains("'epsilon_greedy' picks among discrete actions"), Error);
}

TEST_CASE("Policy: a discrete checkpoint refuses float actions") {
  TempDir dir("policy_discrete_box");
  const std::string path = dir / "checkpoint.safetensors";
  VTraceCheckpoint saved(path);
  Policy<> policy(path);
  CHECK(policy.action_spec() == ActionSpec::discrete(4));
  CHECK_FALSE(policy.normalization().active());
  Rng rng(1);
  std::vector<float> actions(2);
  CHECK_THROWS_WITH_AS(policy.act(random_observations({2, 3}, rng), std::span<float>(actions)),
                       doctest::Contains("call act() with int32 actions"), Error);
}

}  // namespace test_policy
