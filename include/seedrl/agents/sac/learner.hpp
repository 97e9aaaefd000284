// Learner<SacAgent, Backend>: the SAC learner of SEED RL, on LearnerCore (the update, checkpoints,
// metrics, groups) with a NetworkSet of five networks:
//
//   actor         the agent's network (inference reads it): mean and raw log std [D]
//   critic1/2     Q(s, a) critics (nn/heads/critic.hpp), each with a Polyak target critic1/2_target
//   temperature   log alpha, one learned value (nn/heads/scalars.hpp)
//
//   unroll queue ──TableFeeder "seedrl-insert"──▶ ReplayTable<Unroll> (uniform by default; its
//   rate limiter: learning_starts transitions first, then replay_ratio samples per insert)
//   step(): sample B windows of n + 1 steps ──▶ one update of every network (algo/sac_loss.hpp):
//     actor on s: a~, log pi ──▶ critics on (s, a~) ──▶ d loss / d a~ ──▶ actor gradients
//     actor on s_k, target critics on (s_k, a'): y ──▶ critics on (s, a) ──▶ critic gradients
//     the temperature's gradient; then LearnerCore::finish_step applies each network's optimizer
//     (the actor and the temperature every actor_update_period updates) and moves the targets.
//
// A window is the n-step transition from its first step: G = sum_i gamma^i r_{i+1} up to n steps,
// cut at a termination (no bootstrap) or at the episode's last observation (a truncation:
// bootstrap from it), s_k the observation it bootstraps from. A window that starts at an episode's
// last step holds no transition (masked). With a prioritized replay the critics' loss is weighted
// by the importance weights and the priorities become the windows' largest |TD error|.
//
// Resets (SacAgentOptions::resets): before the update after every reset_period updates, the actor
// and the critics start afresh (LearnerCore::reinitialize_networks; the replay and the temperature
// are kept), then reset_updates updates draw from the replay without the rate limiter.
//
// Thread-safety: one thread calls step(); inference reads the actor concurrently.
#pragma once

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/agents/sac/agent.hpp"
#include "seedrl/agents/sac/batch_tensors.hpp"
#include "seedrl/algo/sac_loss.hpp"
#include "seedrl/core/binary_io.hpp"
#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/experience/unroll_codec.hpp"
#include "seedrl/learner/learner_core.hpp"
#include "seedrl/replay/replay_table.hpp"
#include "seedrl/replay/table_feeder.hpp"
#include "seedrl/shared/staging.hpp"

namespace seedrl {

template <nn::Backend B>
class Learner<SacAgent, B> final : public LearnerCore<B> {
  using Core = LearnerCore<B>;

 public:
  using Replay = ReplayTable<Unroll>;

  Learner(const SacAgent& agent, const UnrollSpec& spec, UnrollQueue& unrolls)
      : Core(SacAgent::kName, network_set(agent), spec, kMetrics, agent.evaluation_acting()),
        agent_(agent),
        unrolls_(unrolls),
        replay_(table_options(agent.options(), agent.network_config().seed)) {
    const std::int64_t n = agent.options().n_step;
    SEEDRL_REQUIRE(spec.box_actions() && spec.length == n + 1 && spec.overlap == n,
                   "Learner<SacAgent>: SAC trains on windows of n_step + 1 = ", n + 1,
                   " steps of box actions, one starting at every step (InferenceServerOptions "
                   "unroll_length 1 and burn_in n_step - 1 = ",
                   n - 1, "); got unrolls of ", spec.length, " steps with overlap ", spec.overlap,
                   spec.box_actions() ? "" : " and discrete actions");
    this->networks().trained("temperature").updating = agent.options().learn_temperature;
  }

  ~Learner() override {
    if (feeder_) feeder_->stop();
  }

  const SacAgent& agent() const { return agent_; }
  Replay& replay() { return replay_; }
  /// The temperature after the last update (exp of the learned log alpha); any thread.
  double alpha() const { return alpha_.load(); }

  /// Waits until the replay allows a batch (its feeder moves the queue's transitions in), then
  /// trains once. Nothing once the queue is closed and drained.
  /// With resets (SacAgentOptions::resets): the actor and the critics start afresh before the
  /// update that is due, and the catch-up updates after it train without waiting.
  std::optional<LearnerStepStats> step() {
    start_feeder();
    const std::int64_t done = this->steps();
    if (agent_.reset_due(done) && reset_before_ != done) {
      static constexpr std::string_view kReset[] = {"actor", "critic1", "critic2"};
      this->reinitialize_networks(kReset,
                                  static_cast<std::uint64_t>(done / agent_.options().reset_period));
      reset_before_ = done;
    }
    if (agent_.catch_up_update(done)) {
      feeder_->rethrow_error();
      return train_on_sample(false);
    }
    const bool due = replay_.wait_to_sample(agent_.options().batch_size);
    feeder_->rethrow_error();
    if (!due) return std::nullopt;
    return train_on_sample();
  }

  /// One update of every network from a sample of the replay (which must allow one); `counted`
  /// false: drawn outside the rate limiter (ReplayTable::draw).
  LearnerStepStats train_on_sample(bool counted = true) {
    const std::int64_t batch_size = agent_.options().batch_size;
    const Replay::Sample sample = counted ? replay_.sample(batch_size) : replay_.draw(batch_size);
    const std::int64_t step = this->steps() + 1;
    const bool actor_due = step % agent_.options().actor_update_period == 0;
    this->networks().trained("actor").updating = actor_due;
    this->networks().trained("temperature").updating =
        actor_due && agent_.options().learn_temperature;
    const Update u = update(sample.items, sample.weights, actor_due);
    const LearnerStepStats stats = this->finish_step(std::span<const double>(u.values), u.count,
                                                     u.policy_lag, u.finite, [] {});
    if (!stats.skipped && agent_.options().replay.sampler == SamplerKind::prioritized) {
      std::vector<double> priorities(sample.indices.size());
      for (std::size_t j = 0; j < priorities.size(); ++j)
        priorities[j] = std::max<double>(u.priorities(static_cast<Eigen::Index>(j)), 1e-6);
      replay_.update_priorities(sample.indices, priorities);
    }
    alpha_ = std::exp(log_alpha());
    return stats;
  }

  /// The replay and the temperature, read at every report (thread-safe).
  std::vector<Metric> gauges() const {
    const Replay::Counters c = replay_.counters();
    return {
        {{"replay_size", Reduce::last, "replay"}, static_cast<double>(c.size)},
        {{"replay_inserted", Reduce::last}, static_cast<double>(c.inserted)},
        {{"replay_sampled", Reduce::last}, static_cast<double>(c.sampled)},
        {{"alpha", Reduce::last, "alpha"}, alpha()},
        {{"resets", Reduce::last}, static_cast<double>(agent_.reset_generation(this->steps()))}};
  }

  /// Policy acts with the squashed Gaussian (policy/policy.hpp).
  io::Metadata policy_metadata() const override {
    const SacLogStdBounds& b = agent_.options().log_std_bounds;
    return {{"policy", str_cat("squashed_gaussian ", b.min, " ", b.max)}};
  }

 protected:
  std::string save_state() override {
    return agent_.options().checkpoint_replay ? replay_.save(true) : std::string();
  }
  void load_state(std::string_view state, const std::string& path) override {
    if (!agent_.options().checkpoint_replay) return;
    load_replay_state(
        replay_, state, path, [&](const Unroll& u) { return matches(u, this->spec()); }, "windows");
  }

 private:
  static constexpr MetricInfo kMetrics[] = {
      {"critic_loss", Reduce::mean, "critic"},
      {"actor_loss", Reduce::mean, "actor"},
      {"mean_q", Reduce::mean, "q"},
      {"entropy", Reduce::mean, "entropy"},
      {"temperature_loss"},
  };

  struct Update {
    std::vector<double> values;  // kMetrics' order
    std::int64_t count = 0;
    double policy_lag = 0.0;
    bool finite = true;
    Eigen::ArrayXf priorities;  // per window: max |TD error| of the two critics
  };

  static NetworkSetOptions network_set(const SacAgent& agent) {
    const SacAgentOptions& o = agent.options();
    nn::NetworkOptions critic = agent.critic_config();
    nn::NetworkOptions critic2 = critic;
    critic2.seed = critic.seed + 1;
    const nn::NetworkOptions temperature = agent.temperature_config();
    return {{{"actor", o.network, o.optimizer, o.learning_rate, o.max_grad_norm},
             {"critic1", critic, o.optimizer, o.critic_learning_rate, o.max_grad_norm},
             {"critic2", critic2, o.optimizer, o.critic_learning_rate, o.max_grad_norm},
             {"temperature", temperature, o.optimizer, o.temperature_learning_rate, 0.0}},
            {{.name = "critic1_target", .source = "critic1", .polyak_tau = o.tau},
             {.name = "critic2_target", .source = "critic2", .polyak_tau = o.tau}}};
  }

  static ReplayTableOptions table_options(const SacAgentOptions& o, std::uint64_t seed) {
    ReplayTableOptions t;
    t.capacity = static_cast<std::size_t>(o.replay_capacity);
    t.replay = o.replay;
    // Sample once learning_starts transitions are in, replay_ratio samples per insert after them
    // (they pay for none: CleanRL's first update comes at step learning_starts + 1); the feeder
    // stays at most two batches' worth of transitions ahead.
    t.limiter = {
        o.replay_ratio, static_cast<std::size_t>(o.learning_starts), o.batch_size,
        std::max<std::int64_t>(
            1, static_cast<std::int64_t>(2.0 * static_cast<double>(o.batch_size) / o.replay_ratio) +
                   1),
        o.learning_starts};
    t.seed = seed ^ 0x5ac5ac5ac5ac5acULL;
    return t;
  }

  void start_feeder() {
    if (feeder_) return;
    feeder_ = std::make_unique<TableFeeder<Replay>>(
        replay_, [this] { return feed(); }, [this] { unrolls_.close(); }, "seedrl-insert");
    feeder_->start();
  }

  // The feeder's batch: new windows from the queue into the replay.
  bool feed() {
    if (!unrolls_.pop_available(64, feeding_)) return false;  // closed and drained
    for (std::unique_ptr<Unroll>& u : feeding_) {
      SEEDRL_REQUIRE(u != nullptr && matches(*u, this->spec()),
                     "Learner<SacAgent>: a window does not have the learner's layout");
      // A window that starts at an episode's last step holds no transition: not kept.
      if (is_last(u->flags.data<std::uint8_t>()[0])) continue;
      replay_.insert(std::move(*u), 1.0);
    }
    feeding_.clear();
    return true;
  }

  double log_alpha() {
    nn::Network<B>& t = this->networks().trained("temperature").network;
    return static_cast<double>(sac_detail::host_scalar(t.forward(one_frame()).scalars));
  }
  Tensor one_frame() {
    if (!one_frame_.defined()) one_frame_ = Tensor::zeros({1, 1, 1}, DType::f32, B::device);
    return one_frame_;
  }
  // The losses of one sampled batch and every network's gradients.
  Update update(const std::vector<std::shared_ptr<const Unroll>>& items,
                const std::vector<float>& weights, bool actor_due) {
    const SacAgentOptions& o = agent_.options();
    NetworkSet<B>& nets = this->networks();
    nn::Network<B>& actor = nets.trained("actor").network;
    nn::Network<B>& critic1 = nets.trained("critic1").network;
    nn::Network<B>& critic2 = nets.trained("critic2").network;
    nn::Network<B>& target1 = nets.network("critic1_target");
    nn::Network<B>& target2 = nets.network("critic2_target");
    nn::Network<B>& temperature = nets.trained("temperature").network;

    LearnerPass<B>& pass = this->pass();
    pass.stack(items);
    const UnrollBatch& batch = pass.batch();
    check_actions(batch, 0, SacAgent::kName);
    const std::int64_t n = batch.flags.dim(1), d = this->spec().action_dims;
    const SacWindows w = sac_windows(batch, o.n_step, o.discount, o.max_abs_reward, this->steps());
    const Eigen::ArrayXf importance =
        weights.empty() ? Eigen::ArrayXf::Ones(n)
                        : Eigen::Map<const Eigen::ArrayXf>(weights.data(), n).eval();
    const ActionSpec& box = this->spec().action_spec;
    SEEDRL_REQUIRE(box.is_box() && box.dims() == d, "Learner<SacAgent>: the unrolls' spec has ",
                   box.to_string(), " for actions of ", d, " values");
    scale_.resize(d);
    bias_.resize(d);
    for (std::int64_t j = 0; j < d; ++j) {
      scale_(j) =
          0.5f * (box.high[static_cast<std::size_t>(j)] - box.low[static_cast<std::size_t>(j)]);
      bias_(j) =
          0.5f * (box.high[static_cast<std::size_t>(j)] + box.low[static_cast<std::size_t>(j)]);
    }
    const std::vector<std::int64_t> first(static_cast<std::size_t>(n), 0);
    const Tensor s = observations_(sac_detail::gather(s_buffer_, batch.observations, first));
    const Tensor s_next = next_observations_(
        sac_detail::gather(s_next_buffer_, batch.observations, w.bootstrap_step));
    const Tensor a = actions_(sac_detail::gather(a_buffer_, batch.actions, first));
    const double log_alpha_now = log_alpha();
    const auto alpha = static_cast<float>(std::exp(log_alpha_now));
    Update u;
    u.count = w.count;
    u.policy_lag = w.policy_lag;

    // The actor's step (its gradients are applied only when it is due): a~ on s through the
    // critics. The critics' parameter gradients of this pass are overwritten by theirs below.
    double actor_loss = 0.0, entropy = 0.0;
    Eigen::ArrayXf log_prob_now;
    {
      const nn::NetworkOutputs& out = actor.forward(s);
      const SacMatrix mean = sac_detail::host_matrix(out.mean, n, d),
                      raw = sac_detail::host_matrix(out.log_std, n, d);
      const SacSample sample =
          sac_sample(mean, raw, scale_, bias_, o.log_std_bounds, &rng_, nullptr);
      log_prob_now = sample.log_prob;
      entropy = -(sample.log_prob * w.mask).sum() / std::max(1.0f, w.mask.sum());
      if (actor_due) {
        const Tensor a_tilde =
            sac_detail::device_tensor(staged_a_tilde_, a_tilde_host_, sample.action);
        const nn::NetworkInput inputs[] = {{"action", a_tilde}};
        const Eigen::ArrayXf q1 = sac_detail::host_vector(critic1.forward(s, {}, {}, inputs).q, n);
        const Eigen::ArrayXf q2 = sac_detail::host_vector(critic2.forward(s, {}, {}, inputs).q, n);
        const SacActorLoss l = sac_actor_loss(sample.log_prob, q1, q2, alpha, w.mask);
        actor_loss = l.loss;
        critic1.backward({.q = sac_detail::device_vector(staged_q1_, q1_host_, l.grad_q1)});
        const SacMatrix g1 = sac_detail::host_matrix(critic1.input_gradient("action"), n, d);
        critic2.backward({.q = sac_detail::device_vector(staged_q2_, q2_host_, l.grad_q2)});
        const SacMatrix g2 = sac_detail::host_matrix(critic2.input_gradient("action"), n, d);
        const SacSampleGrads g =
            sac_sample_backward(sample, raw, scale_, o.log_std_bounds, g1 + g2, l.grad_log_prob);
        actor.backward(
            {.mean = sac_detail::device_tensor(staged_grad_mean_, grad_mean_host_, g.mean),
             .log_std =
                 sac_detail::device_tensor(staged_grad_raw_, grad_raw_host_, g.raw_log_std)});
      }
    }
    // The critics' targets, without gradient: a' ~ pi(s_k), the target critics at (s_k, a').
    Eigen::ArrayXf targets;
    {
      const nn::NetworkOutputs& out = actor.forward(s_next);
      const SacMatrix mean = sac_detail::host_matrix(out.mean, n, d),
                      raw = sac_detail::host_matrix(out.log_std, n, d);
      const SacSample next = sac_sample(mean, raw, scale_, bias_, o.log_std_bounds, &rng_);
      const Tensor a_next = sac_detail::device_tensor(staged_a_next_, a_next_host_, next.action);
      const nn::NetworkInput inputs[] = {{"action", a_next}};
      const Eigen::ArrayXf q1 =
          sac_detail::host_vector(target1.forward(s_next, {}, {}, inputs).q, n);
      const Eigen::ArrayXf q2 =
          sac_detail::host_vector(target2.forward(s_next, {}, {}, inputs).q, n);
      targets = sac_critic_targets(w.returns, w.discounts, q1, q2, next.log_prob, alpha);
    }
    // The critics' step on the replayed actions.
    double critic_loss = 0.0, mean_q = 0.0;
    u.priorities = Eigen::ArrayXf::Zero(n);
    for (int c = 0; c < 2; ++c) {
      nn::Network<B>& critic = c == 0 ? critic1 : critic2;
      const nn::NetworkInput inputs[] = {{"action", a}};
      const Eigen::ArrayXf q = sac_detail::host_vector(critic.forward(s, {}, {}, inputs).q, n);
      const SacCriticLoss l = sac_critic_loss(q, targets, w.mask * importance);
      critic_loss += l.loss;
      mean_q += 0.5 * (q * w.mask).sum() / std::max(1.0f, w.mask.sum());
      u.priorities = u.priorities.max((q - targets).abs());
      critic.backward({.q = sac_detail::device_vector(c == 0 ? staged_q1_ : staged_q2_,
                                                      c == 0 ? q1_host_ : q2_host_, l.grad_q)});
    }
    // The temperature's step.
    const SacTemperatureLoss t = sac_temperature_loss(log_alpha_now, log_prob_now,
                                                      agent_.target_entropy(this->steps()), w.mask);
    temperature.forward(one_frame());
    temperature.backward(
        {.scalars = sac_detail::device_vector(
                        staged_scalar_, scalar_host_,
                        Eigen::ArrayXf::Constant(1, static_cast<float>(t.grad_log_alpha)))
                        .reshape({1, 1, 1})});
    u.values = {critic_loss, actor_loss, mean_q, entropy, t.loss};
    u.finite = std::isfinite(critic_loss) && std::isfinite(actor_loss) && targets.allFinite();
    return u;
  }

 private:
  const SacAgent agent_;
  UnrollQueue& unrolls_;
  Replay replay_;
  std::unique_ptr<TableFeeder<Replay>> feeder_;
  std::vector<std::unique_ptr<Unroll>> feeding_;
  Rng rng_{agent_.network_config().seed ^ 0x5ac0ffeeULL};
  std::int64_t reset_before_ = -1;  // the update count at the last reset (once per reset)
  std::atomic<double> alpha_{static_cast<double>(agent_.options().initial_alpha)};
  Eigen::ArrayXf scale_, bias_;
  Tensor one_frame_;
  ScratchBuffer s_buffer_, s_next_buffer_, a_buffer_, a_tilde_host_, a_next_host_, q1_host_,
      q2_host_, grad_mean_host_, grad_raw_host_, scalar_host_;
  StagingBuffer observations_{B::device}, next_observations_{B::device}, actions_{B::device},
      staged_a_tilde_{B::device}, staged_a_next_{B::device}, staged_q1_{B::device},
      staged_q2_{B::device}, staged_grad_mean_{B::device}, staged_grad_raw_{B::device},
      staged_scalar_{B::device};
};

extern template class Learner<SacAgent, cpu::Backend>;

}  // namespace seedrl
