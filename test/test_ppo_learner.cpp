// The PPO learner: its targets against a brute-force GAE and behaviour log-probabilities, its
// policy gradients against finite differences, minibatch updates, the policy-lag bound,
// checkpoints with the normalisation statistics, and learning Pendulum end to end.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <thread>

#include "seedrl/agents/ppo.hpp"
#include "seedrl/core/binary_io.hpp"
#include "seedrl/env/pendulum.hpp"
#include "seedrl/experience/unroll_store.hpp"
#include "seedrl/io/safetensors.hpp"
#include "seedrl/policy/policy.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_ppo_learner {

using namespace seedrl;
using Backend = cpu::Backend;

namespace {

constexpr std::uint8_t F = step_flags::kFirst, T = step_flags::kTerminated,
                       U = step_flags::kTruncated;

PpoAgentOptions box_options(std::int64_t dims = 2) {
  PpoAgentOptions o;
  o.network = nn::NetworkOptions::mlp(3, 0, {16}).gaussian(dims);
  o.network.seed = 4;
  o.batch_size = 2;
  o.epochs = 3;
  o.minibatch_size = 4;
  o.normalization = {};
  return o;
}

// Unrolls of `spec` from a seeded stream: random observations, rewards, actions, behaviour.
std::vector<std::unique_ptr<Unroll>> random_unrolls(const UnrollSpec& spec, int count,
                                                    std::uint64_t seed,
                                                    const std::vector<std::uint8_t>& flags) {
  Rng rng(seed);
  UnrollStore store(count, spec);
  std::vector<std::unique_ptr<Unroll>> out;
  Tensor obs = Tensor::empty(spec.observation.shape);
  std::vector<float> behaviour(static_cast<std::size_t>(spec.behaviour_size()));
  std::vector<float> action(static_cast<std::size_t>(std::max<std::int64_t>(spec.action_dims, 1)));
  for (std::int64_t t = 0; t < spec.length; ++t) {
    for (int slot = 0; slot < count; ++slot) {
      for (std::int64_t i = 0; i < obs.numel(); ++i)
        obs.data<float>()[i] = static_cast<float>(rng.uniform(-1, 1));
      for (float& b : behaviour) b = static_cast<float>(rng.uniform(-0.5, 0.5));
      for (float& a : action) a = static_cast<float>(rng.normal());
      UnrollStep s;
      s.observation = obs;
      s.reward = static_cast<float>(rng.uniform(-1, 1));
      s.flags = flags[static_cast<std::size_t>(t)];
      const auto discrete = static_cast<std::int32_t>(
          rng.below(static_cast<std::uint64_t>(std::max<std::int32_t>(spec.num_actions, 1))));
      if (spec.box_actions()) {
        s.set_action(action.data(), action.size());
      } else {
        s.set_action(&discrete);
      }
      s.behaviour = behaviour.data();
      if (auto u = store.append(slot, s)) out.push_back(std::move(u));
    }
  }
  return out;
}

UnrollSpec box_spec(std::int64_t length, std::int64_t dims = 2) {
  UnrollSpec s;
  s.observation = {{3}, DType::f32};
  s.action_dims = dims;
  s.length = length;
  s.store_behaviour = true;
  return s;
}

}  // namespace

TEST_CASE("ppo_targets: GAE over transitions, nothing across a boundary, behaviour log-probs") {
  // Column 0: an episode terminates at step 2 (x_2 is last), x_3 starts the next one.
  // Column 1: truncated at step 3 (bootstraps from V(x_3)).
  UnrollSpec spec = box_spec(5);
  auto a = random_unrolls(spec, 1, 1, {F, 0, T, F, 0});
  auto b = random_unrolls(spec, 1, 2, {F, 0, 0, U, F});
  std::vector<std::unique_ptr<Unroll>> both;
  both.push_back(std::move(a[0]));
  both.push_back(std::move(b[0]));
  UnrollBatch batch;
  batch.stack(both, spec);
  const Transitions tr = make_transitions(batch, 0, 4, 0.0f, 0);
  std::vector<float> values(10);
  for (int i = 0; i < 10; ++i)
    values[static_cast<std::size_t>(i)] = 0.1f * static_cast<float>(i) - 0.3f;
  const float gamma = 0.9f, lambda = 0.8f;
  const PpoTargets targets = ppo_targets(batch, tr, values.data(), gamma, lambda);

  // Brute force: per column, A_t = sum_k (gamma lambda)^k delta_{t+k} within the episode.
  auto v = [&](int t, int col) {
    return static_cast<double>(values[static_cast<std::size_t>(t * 2 + col)]);
  };
  auto r = [&](int t, int col) {
    return static_cast<double>(batch.rewards.data<float>()[t * 2 + col]);
  };
  auto flag = [&](int t, int col) { return batch.flags.data<std::uint8_t>()[t * 2 + col]; };
  for (int col = 0; col < 2; ++col) {
    for (int t = 0; t < 4; ++t) {
      const std::int64_t row = t * 2 + col;
      const bool boundary = is_last(flag(t, col));
      const bool listed =
          std::find(targets.rows.begin(), targets.rows.end(), row) != targets.rows.end();
      CHECK(listed == !boundary);
      if (boundary) continue;
      double advantage = 0.0, weight = 1.0;
      for (int k = t; k < 4; ++k) {
        if (is_last(flag(k, col))) break;  // nothing crosses a boundary
        const bool terminal = (flag(k + 1, col) & step_flags::kTerminated) != 0;
        const double delta = r(k + 1, col) + (terminal ? 0.0 : gamma * v(k + 1, col)) - v(k, col);
        advantage += weight * delta;
        if (terminal) break;
        weight *= gamma * lambda;
      }
      CAPTURE(row);
      CHECK(targets.advantages(row) == doctest::Approx(advantage).epsilon(1e-5));
      CHECK(targets.returns(row) == doctest::Approx(advantage + v(t, col)).epsilon(1e-5));
      CHECK(targets.old_values(row) == doctest::Approx(v(t, col)));
      // The Gaussian's log density of the stored action under the stored mean and log std.
      double log_prob = 0.0;
      for (int d = 0; d < 2; ++d) {
        const double mean = batch.behaviour[t][col].data<float>()[d];
        const double log_std = batch.behaviour[t][col].data<float>()[2 + d];
        const double x = batch.actions[t][col].data<float>()[d];
        const double z = (x - mean) / std::exp(log_std);
        log_prob += -0.5 * z * z - log_std - 0.5 * std::log(2.0 * M_PI);
      }
      CHECK(targets.old_log_probs(row) == doctest::Approx(log_prob).epsilon(1e-5));
    }
  }
  CHECK(targets.rows.size() == 6);  // 8 steps, two of them boundaries
}

TEST_CASE("Learner<PpoAgent>: epochs x minibatches of updates; stale unrolls are dropped") {
  PpoAgentOptions o = box_options();
  o.max_policy_lag = 50;
  const PpoAgent agent(o);
  const UnrollSpec spec = box_spec(6);  // T = 5
  UnrollQueue queue(8);
  Learner<PpoAgent, Backend> learner(agent, spec, queue);
  auto unrolls = random_unrolls(spec, 3, 9, {F, 0, 0, 0, 0, 0});
  // One unroll was acted 60 updates before the learner's version: more than the bound.
  unrolls[2]->policy_versions.data<std::int32_t>()[0] = -60;
  const std::vector<float> before(learner.network().parameters().values().flat<float>().begin(),
                                  learner.network().parameters().values().flat<float>().end());
  const std::optional<LearnerStepStats> last = learner.train_on(unrolls);
  REQUIRE(last.has_value());
  CHECK(learner.dropped_unrolls() == 1);
  // 2 unrolls x 5 transitions = 10, minibatches of 4: 3 per epoch, 3 epochs.
  CHECK(learner.steps() == 9);
  CHECK(last->step == 9);
  const std::vector<float> after(learner.network().parameters().values().flat<float>().begin(),
                                 learner.network().parameters().values().flat<float>().end());
  CHECK(before != after);
  CHECK(last->metrics["dropped_unrolls"] == 1.0);
  CHECK(last->metrics["transitions"] == 2.0);  // the last minibatch: 10 - 2 * 4
  for (const Metric& m : last->metrics.items()) CHECK(std::isfinite(m.value));

  // step() takes a batch from the queue and gives one update per call.
  for (auto& u : random_unrolls(spec, 2, 10, {F, 0, 0, 0, 0, 0})) queue.push(std::move(u));
  queue.close();
  int updates = 0;
  while (learner.step()) ++updates;
  CHECK(updates == 9);
  CHECK(learner.steps() == 18);
}

TEST_CASE(
    "Learner<PpoAgent>: synchronous, the batch's last unroll holds the actors until the next") {
  PpoAgentOptions o = box_options();
  o.synchronous = true;
  const PpoAgent agent(o);
  const UnrollSpec spec = box_spec(6);
  UnrollQueue queue(8);
  Learner<PpoAgent, Backend> learner(agent, spec, queue);
  std::vector<std::unique_ptr<Unroll>> batch = random_unrolls(spec, 2, 11, {F, 0, 0, 0, 0, 0});
  queue.push(std::move(batch[0]));
  CHECK_FALSE(queue.acting().held());
  queue.push(std::move(batch[1]));  // a batch (2 unrolls): the pusher is held at once
  CHECK(queue.acting().held());
  // 2 unrolls x 5 transitions, minibatches of 4: 3 updates an epoch, 3 epochs, all held.
  for (int i = 0; i < 9; ++i) {
    REQUIRE(learner.step());
    CHECK(queue.acting().held());
  }
  // The next update waits for a batch, and the actors act meanwhile.
  std::atomic<bool> stepped{false};
  std::thread next([&] { stepped = learner.step().has_value(); });
  while (queue.acting().held()) std::this_thread::yield();
  for (auto& u : random_unrolls(spec, 2, 12, {F, 0, 0, 0, 0, 0})) queue.push(std::move(u));
  next.join();
  CHECK(stepped.load());
  CHECK(queue.acting().held());
  queue.close();  // the run ends: inference must not wait for a learner that has stopped
  CHECK_FALSE(queue.acting().held());

  // Not synchronous (the default): nothing is ever held.
  UnrollQueue free_queue(8);
  Learner<PpoAgent, Backend> free_learner(PpoAgent(box_options()), spec, free_queue);
  for (auto& u : random_unrolls(spec, 2, 13, {F, 0, 0, 0, 0, 0})) free_queue.push(std::move(u));
  CHECK_FALSE(free_queue.acting().held());
  REQUIRE(free_learner.step());
  CHECK_FALSE(free_queue.acting().held());
}

TEST_CASE("Learner<PpoAgent>: decoupled PPO clips around the learner's policy, weighted by mu") {
  // The recorded behaviour (means and log stds in [-0.5, 0.5]) is far from the learner's initial
  // policy (mean about 0, log std 0), as after a batch of updates made while the actors acted.
  const UnrollSpec spec = box_spec(6);  // T = 5
  for (const bool proximal : {true, false}) {
    CAPTURE(proximal);
    PpoAgentOptions o = box_options();
    o.epochs = 1;
    o.minibatch_size = 10;  // one update on all 2 x 5 transitions
    o.proximal_policy = proximal;
    o.max_behaviour_weight = 1.5f;
    const PpoAgent agent(o);
    UnrollQueue queue(8);
    Learner<PpoAgent, Backend> learner(agent, spec, queue);
    const auto unrolls = random_unrolls(spec, 2, 9, {F, 0, 0, 0, 0, 0});

    // The weights min(pi / mu, 1.5) from a float64 Gaussian density of the initial network's
    // policy and of the recorded behaviour.
    double weight_sum = 0.0;
    int capped = 0, below = 0;
    for (const auto& u : unrolls) {
      const nn::NetworkOutputs& out = learner.network().forward(u->observations.reshape({6, 1, 3}));
      for (int t = 0; t < 5; ++t) {
        double log_ratio = 0.0;
        for (int d = 0; d < 2; ++d) {
          const double a = u->actions.data<float>()[t * 2 + d];
          auto log_density = [&](double mean, double log_std) {
            const double z = (a - mean) / std::exp(log_std);
            return -0.5 * z * z - log_std;  // the 2 pi terms cancel in the ratio
          };
          log_ratio +=
              log_density(out.mean.data<float>()[t * 2 + d], out.log_std.data<float>()[t * 2 + d]) -
              log_density(u->behaviour.data<float>()[t * 4 + d],
                          u->behaviour.data<float>()[t * 4 + 2 + d]);
        }
        weight_sum += std::min(std::exp(log_ratio), 1.5);
        capped += std::exp(log_ratio) > 1.5 ? 1 : 0;
        below += std::exp(log_ratio) < 0.9 ? 1 : 0;
      }
    }
    const std::optional<LearnerStepStats> stats = learner.train_on(unrolls);
    REQUIRE(stats.has_value());
    CHECK(learner.steps() == 1);
    if (proximal) {
      // The ratio starts at 1: nothing clipped, no divergence; the behaviour enters as weights.
      CHECK(stats->metrics["clip_fraction"] == 0.0);
      CHECK(stats->metrics["approx_kl"] == doctest::Approx(0.0).scale(1e-6));
      CHECK(stats->metrics["behaviour_weight"] == doctest::Approx(weight_sum / 10).epsilon(1e-4));
      CHECK(capped > 0);  // the batch exercises the cap and weights below 1
      CHECK(below > 0);
    } else {
      // Clipped around mu: much of the batch starts outside the trust region.
      CHECK(stats->metrics["clip_fraction"] > 0.3);
      CHECK(stats->metrics["approx_kl"] > 0.01);
      CHECK(stats->metrics["behaviour_weight"] == 1.0);
    }
  }
}

TEST_CASE("Learner<PpoAgent>: the agent's options are checked by name") {
  PpoAgentOptions o = box_options();
  o.network.lstm_size = 8;
  CHECK_THROWS_WITH_AS(PpoAgent{o}, doctest::Contains("lstm_size"), Error);
  o = box_options();
  o.epochs = 0;
  CHECK_THROWS_WITH_AS(PpoAgent{o}, doctest::Contains("PpoAgentOptions.epochs"), Error);
  o = box_options();
  o.lambda = 1.5f;
  CHECK_THROWS_WITH_AS(PpoAgent{o}, doctest::Contains("PpoAgentOptions.lambda"), Error);
  o = box_options();
  o.normalization.reward_clip = 0.0f;
  CHECK_THROWS_WITH_AS(PpoAgent{o}, doctest::Contains("reward_clip"), Error);
  o = box_options();
  o.max_behaviour_weight = 0.0f;
  CHECK_THROWS_WITH_AS(PpoAgent{o}, doctest::Contains("PpoAgentOptions.max_behaviour_weight"),
                       Error);
  // A nested struct's setting is named by its path from the agent's options.
  o = box_options();
  o.loss.clip = 1.5f;
  CHECK_THROWS_WITH_AS(PpoAgent{o},
                       doctest::Contains("PpoAgentOptions.loss.clip must be in (0, 1)"), Error);
  o = box_options();
  o.learning_rate.decay_steps = -1;
  CHECK_THROWS_WITH_AS(PpoAgent{o},
                       doctest::Contains("PpoAgentOptions.learning_rate.decay_steps must be >= 0"),
                       Error);
  o = box_options();
  o.network.mlp_hidden = {64, 0};
  CHECK_THROWS_WITH_AS(
      PpoAgent{o}, doctest::Contains("PpoAgentOptions.network.mlp_hidden sizes must be positive"),
      Error);
}

namespace {

LocalTrainerOptions pendulum_run(std::int64_t frames, std::string logdir = {}) {
  LocalTrainerOptions run;
  run.total_frames = frames;
  run.num_actors = 1;
  run.envs_per_actor = 16;
  run.server.unroll_length = 128;
  run.server.seed = 1;
  run.checkpoint_seconds = 0;
  run.logdir = std::move(logdir);
  return run;
}

PpoAgent pendulum_agent(std::int64_t frames) {
  PpoAgentOptions o;  // the defaults of examples/pendulum_ppo
  o.network = nn::NetworkOptions::mlp(3, 0).gaussian(1);
  o.network.seed = 1;
  o.discount = 0.9f;
  o.learning_rate = {1e-3, frames / 2048 * 320, 0.0};
  return PpoAgent(o);
}

// The cells of one CSV line.
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');) out.push_back(cell);
  return out;
}

// The policy_lag column of a run's metrics.csv, one value per report.
std::vector<double> policy_lags(const std::filesystem::path& dir) {
  std::istringstream csv(read_file((dir / "metrics.csv").string()));
  std::string line;
  std::getline(csv, line);
  const std::vector<std::string> header = cells(line);
  const auto column = std::find(header.begin(), header.end(), "policy_lag") - header.begin();
  REQUIRE(column < static_cast<std::ptrdiff_t>(header.size()));
  std::vector<double> lags;
  while (std::getline(csv, line)) {
    const std::vector<std::string> row = cells(line);
    const std::string& cell = row.at(static_cast<std::size_t>(column));
    if (!cell.empty() && cell != "nan") lags.push_back(std::stod(cell));
  }
  return lags;
}

}  // namespace

TEST_CASE("train_locally: PPO learns Pendulum's swing-up" * doctest::test_suite("learning")) {
  const std::int64_t frames = 100'000;
  const TrainingResult result = train_locally<PpoAgent, Backend>(
      pendulum_agent(frames),
      [](std::int32_t, std::int32_t e) { return Pendulum(static_cast<std::uint64_t>(100 + e)); },
      pendulum_run(frames));
  CAPTURE(result.mean_return);
  CHECK(result.episodes >= 400);
  // A random policy averages about -1200 and a PPO with a broken sign or ratio stays there; the
  // defaults reach about -190 at this budget (docs/results.md). Not always: with the cores shared
  // (ctest -j2 beside two busy processes) some runs stop between -540 and -690, a local optimum
  // that depends on how acting and learning interleave (2 of 14 runs of the build with AVX-512
  // element loops, 4 of 14 with them off, none of 18 before that build), so the bound sits between
  // that and a policy that learned nothing (-1176).
  CHECK(result.mean_return > -900.0);
}

TEST_CASE("TrainingSession<PpoAgent>: checkpoints carry the normalisation and the action bounds") {
  const std::string dir =
      (std::filesystem::temp_directory_path() / "seedrl_test_ppo_checkpoint").string();
  std::filesystem::remove_all(dir);
  auto make_env = [](std::int32_t, std::int32_t e) {
    return Pendulum(static_cast<std::uint64_t>(e));
  };
  train_locally<PpoAgent, Backend>(pendulum_agent(10'000), make_env, pendulum_run(5'000, dir));
  const std::string path = checkpoint_path(dir);
  const io::Metadata meta = io::SafetensorsFile::read(path).metadata();
  REQUIRE(meta.count("normalization") == 1);
  const std::string saved = meta.at("normalization");
  CHECK(saved.find("observations") != std::string::npos);
  CHECK(saved.find("returns") != std::string::npos);

  // A Policy made from it knows the box and applies the run's statistics to what it is given.
  Policy<> policy(path);
  CHECK(policy.agent() == "ppo");
  CHECK(policy.action_spec() == Pendulum().action_spec());
  REQUIRE(policy.normalization().active());
  Tensor obs = Tensor::zeros({2, 3});
  Pendulum(7).reset(obs[0]);
  Pendulum(8).reset(obs[1]);
  std::vector<float> torque(2);
  policy.act(obs, std::span<float>(torque));
  Tensor normalized = obs.clone();
  policy.normalization().apply(normalized.matrix<float>());
  nn::Network<Backend> reference(policy.network_config());
  reference.parameters().copy_values_from(policy.network().parameters());
  const nn::NetworkOutputs& out = reference.forward(normalized.reshape({1, 2, 3}));
  for (int i = 0; i < 2; ++i)
    CHECK(torque[static_cast<std::size_t>(i)] ==
          doctest::Approx(std::clamp(out.mean.data<float>()[i], -2.0f, 2.0f)));

  // A session resuming from it starts from those statistics.
  {
    TrainingSession<PpoAgent, Backend> resumed(
        pendulum_agent(10'000), Pendulum().observation_spec(), Pendulum().action_spec(),
        pendulum_run(10'000, dir).session());
    CHECK(resumed.resumed());
    CHECK(resumed.server().normalization_text() == saved);
  }  // its logdir is free again for the next

  // An agent that normalises nothing refuses it.
  PpoAgentOptions plain = pendulum_agent(10'000).options();
  plain.normalization = {};
  CHECK_THROWS_WITH_AS((TrainingSession<PpoAgent, Backend>(
                           PpoAgent(plain), Pendulum().observation_spec(), Pendulum().action_spec(),
                           pendulum_run(10'000, dir).session())),
                       doctest::Contains("normalises nothing"), Error);
  std::filesystem::remove_all(dir);
}

TEST_CASE("TrainingSession<PpoAgent>: synchronous acting bounds the policy lag by a batch") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "seedrl_test_ppo_synchronous";
  std::filesystem::remove_all(dir);
  const std::int64_t frames = 5 * 2048;  // five batches of 16 unrolls of 128 steps
  PpoAgentOptions o = pendulum_agent(frames).options();
  o.synchronous = true;
  LocalTrainerOptions run = pendulum_run(frames, dir.string());
  run.report_seconds = 0.02;
  const TrainingResult result = train_locally<PpoAgent, Backend>(
      PpoAgent(o),
      [](std::int32_t, std::int32_t e) { return Pendulum(static_cast<std::uint64_t>(e)); }, run);
  // 10 epochs of 32 minibatches: 320 updates a batch. Acted by the parameters the last batch left,
  // an update's transitions are as old as the updates made on them so far (0 - 319), and a report
  // averages some of those; a step or two of an unroll may run before the learner holds the
  // actors. Acting while the learner trains (the default) puts each batch a batch's updates
  // further back (320 - 639, as the actors outrun the learner on this machine).
  CHECK(result.learner_steps >= 4 * 320);
  const std::vector<double> lags = policy_lags(dir);
  REQUIRE(lags.size() >= 3);
  for (const double lag : lags) CHECK(lag < 330.0);
  std::filesystem::remove_all(dir);
}

}  // namespace test_ppo_learner
