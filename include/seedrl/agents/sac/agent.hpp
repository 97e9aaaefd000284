// SacAgent: soft actor-critic (Haarnoja et al. 2018) in SEED's shape: actors only step
// environments; inference draws each action from the actor centrally, a tanh-squashed Gaussian
// scaled to the box's bounds (uniformly random actions until the learner's first update, which
// comes once learning_starts transitions are in the replay); every transition goes into a replay
// table, and the learner samples batches from it concurrently, as many as the table's rate limiter
// allows per inserted transition. The learner trains twin critics Q(s, a) (nn/heads/critic.hpp)
// with Polyak-averaged targets, the actor through the reparameterised sample, and the temperature
// (algo/sac_loss.hpp has the equations).
//
// Episodes cut by a time limit (truncated) bootstrap from their final observation; terminated ones
// do not. seed_rl's own SAC refuses truncations, samples uniformly only through a priority
// exponent of 0 and fixes the temperature unless told: here the replay is uniform by default
// (prioritized as an option) and the temperature learned by default (fixed as an option).
//
// The learning side is Learner<SacAgent, Backend> (agents/sac/learner.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "seedrl/agent/acting.hpp"
#include "seedrl/agent/agent.hpp"
#include "seedrl/algo/sac_loss.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/nn/network.hpp"
#include "seedrl/replay/replay_buffer.hpp"

namespace seedrl {

/// Defaults are CleanRL's sac_continuous_action: actor and critics MLPs of 256 x 256, batches of
/// 256, Adam at 3e-4 for the actor and 1e-3 for the critics and the temperature, tau 0.005, 5,000
/// random steps first, a replay of 1 M transitions, one update per transition (a replay ratio of
/// 256 samples per inserted transition), no gradient clipping, the temperature learned towards an
/// entropy of -dims starting at alpha 1.
struct SacAgentOptions : AgentOptions {
  std::vector<std::int64_t> critic_hidden{256, 256};  ///< each critic's layers after the action
  bool critic_layer_norm = false;  ///< normalise each critic hidden layer (NetworkOptions)
  nn::LinearDecay critic_learning_rate{1e-3, 0, 0.0};
  nn::LinearDecay temperature_learning_rate{1e-3, 0, 0.0};
  double tau = 0.005;  ///< Polyak factor of the target critics
  bool learn_temperature = true;
  float initial_alpha = 1.0f;  ///< the temperature at the start (learned) or always (fixed)
  /// The entropy the temperature aims at; empty: -dims (the usual choice).
  std::optional<double> target_entropy;
  /// Where the target entropy ends: annealed linearly from target_entropy (or -dims) to this over
  /// the learner steps [target_entropy_anneal_begin, target_entropy_anneal_end] and held there;
  /// empty: constant. A lower end narrows the acting policy once it has been learned.
  std::optional<double> final_target_entropy;
  std::int64_t target_entropy_anneal_begin = 0, target_entropy_anneal_end = 0;
  /// The actor and the temperature take a step every this many critic updates (TD3's delayed
  /// policy update); 1: every update.
  std::int64_t actor_update_period = 1;
  /// n-step returns (InferenceServerOptions: unroll_length 1 and burn_in n_step - 1, so that each
  /// transition starts one window of n_step + 1 steps).
  std::int64_t n_step = 1;
  /// Transitions in the replay before the first update; until then the actors act uniformly at
  /// random.
  std::int64_t learning_starts = 5'000;
  std::int64_t replay_capacity = 1'000'000;  ///< transitions
  ReplayOptions replay;                      ///< uniform by default
  double replay_ratio = 256.0;               ///< samples per inserted transition
  SacLogStdBounds log_std_bounds;
  bool checkpoint_replay = false;  ///< save the replay beside every checkpoint
  /// Resets (Nikishin et al. 2022, against the primacy bias): after every reset_period learner
  /// updates, `resets` times, the actor and both critics start afresh (their targets copies, their
  /// optimizers' state zeroed) while the replay and the temperature are kept; the reset_updates
  /// updates after each draw from the replay without waiting for new transitions (the rate limiter
  /// does not count them), so the fresh networks catch up before the actors act much with them.
  /// Learner steps count every update, the catch-up ones too. 0 resets: none.
  std::int64_t resets = 0;
  std::int64_t reset_period = 0;
  std::int64_t reset_updates = 0;

  SacAgentOptions() {
    network = nn::NetworkOptions::mlp(1, 0, {256, 256});
    network.gaussian(1);
    network.state_dependent_log_std = true;
    batch_size = 256;
    learning_rate = {3e-4, 0, 0.0};
    max_grad_norm = 0.0;
    replay.sampler = SamplerKind::uniform;
  }

  /// The actor for observations of `observation_size` and actions of `action_dims` values.
  SacAgentOptions& sizes(std::int64_t observation_size, std::int64_t action_dims) {
    network.observation_shape = {observation_size};
    network.gaussian(action_dims);
    network.state_dependent_log_std = true;
    return *this;
  }

  void validate(std::string_view owner = "SacAgentOptions") const {
    AgentOptions::validate(owner);
    SEEDRL_REQUIRE(network.box_actions() && network.policy_value_heads &&
                       network.state_dependent_log_std && network.lstm_size == 0,
                   owner,
                   ".network: SAC's actor is a feed-forward Gaussian policy with a log std head "
                   "(gaussian(D), state_dependent_log_std, lstm_size 0)");
    for (std::int64_t h : critic_hidden)
      SEEDRL_REQUIRE(h > 0, owner, ".critic_hidden sizes must be positive, got ", h);
    critic_learning_rate.validate(str_cat(owner, ".critic_learning_rate"));
    temperature_learning_rate.validate(str_cat(owner, ".temperature_learning_rate"));
    SEEDRL_REQUIRE(tau > 0.0 && tau <= 1.0, owner, ".tau must be in (0, 1], got ", tau);
    SEEDRL_REQUIRE(initial_alpha > 0.0f && std::isfinite(initial_alpha), owner,
                   ".initial_alpha must be positive and finite, got ", initial_alpha);
    SEEDRL_REQUIRE(!target_entropy || std::isfinite(*target_entropy), owner,
                   ".target_entropy must be finite");
    SEEDRL_REQUIRE(!final_target_entropy || std::isfinite(*final_target_entropy), owner,
                   ".final_target_entropy must be finite");
    SEEDRL_REQUIRE(0 <= target_entropy_anneal_begin &&
                       target_entropy_anneal_begin <= target_entropy_anneal_end,
                   owner, ".target_entropy_anneal_begin (", target_entropy_anneal_begin,
                   ") and _end (", target_entropy_anneal_end, ") must satisfy 0 <= begin <= end");
    SEEDRL_REQUIRE(actor_update_period >= 1, owner, ".actor_update_period must be >= 1, got ",
                   actor_update_period);
    SEEDRL_REQUIRE(n_step >= 1, owner, ".n_step must be >= 1, got ", n_step);
    SEEDRL_REQUIRE(learning_starts >= batch_size, owner, ".learning_starts (", learning_starts,
                   ") must be at least batch_size (", batch_size, ")");
    SEEDRL_REQUIRE(replay_capacity >= learning_starts, owner, ".replay_capacity (", replay_capacity,
                   ") must hold learning_starts (", learning_starts, ")");
    replay.validate(str_cat(owner, ".replay"));
    SEEDRL_REQUIRE(replay_ratio > 0.0 && std::isfinite(replay_ratio), owner,
                   ".replay_ratio must be positive and finite, got ", replay_ratio);
    log_std_bounds.validate(owner);
    SEEDRL_REQUIRE(resets >= 0 && reset_updates >= 0, owner, ".resets (", resets,
                   ") and .reset_updates (", reset_updates, ") must be >= 0");
    SEEDRL_REQUIRE(resets == 0 || reset_period > reset_updates, owner, ".reset_period (",
                   reset_period, ") must exceed .reset_updates (", reset_updates,
                   ") when there are resets");
    SEEDRL_REQUIRE(normalization.rewards == false, owner,
                   ".normalization.rewards: SAC learns from raw rewards (the entropy term is "
                   "on their scale)");
  }
};

class SacAgent {
 public:
  static constexpr std::string_view kName = "sac";
  /// The learner samples from the replay: unrolls keep no behaviour policy.
  static constexpr bool kStoresLogits = false;

  explicit SacAgent(SacAgentOptions options) : options_(std::move(options)) { options_.validate(); }

  const SacAgentOptions& options() const { return options_; }
  /// The actor: the network inference runs.
  const nn::NetworkOptions& network_config() const { return options_.network; }
  /// A critic of the actor's observations and actions.
  nn::NetworkOptions critic_config() const {
    nn::NetworkOptions c = options_.network;
    c.mlp_hidden = {};  // the critic's layers take the observations and the action together
    c.state_dependent_log_std = false;
    c.action_critic(options_.network.action_dims, options_.critic_hidden);
    c.critic_layer_norm = options_.critic_layer_norm;
    return c;
  }
  /// The temperature: one learned value, log alpha.
  nn::NetworkOptions temperature_config() const {
    nn::NetworkOptions t = nn::NetworkOptions::mlp(1, 0, {});
    t.policy_value_heads = false;
    t.scalars = 1;
    t.initial_scalar = std::log(options_.initial_alpha);
    return t;
  }
  /// The temperature's target at learner update `step` (0-based): constant unless
  /// final_target_entropy is set, then linear between the anneal's begin and end steps.
  double target_entropy(std::int64_t step = 0) const {
    const double start =
        options_.target_entropy.value_or(-static_cast<double>(options_.network.action_dims));
    if (!options_.final_target_entropy) return start;
    const std::int64_t begin = options_.target_entropy_anneal_begin,
                       end = options_.target_entropy_anneal_end;
    if (step <= begin) return start;
    if (step >= end) return *options_.final_target_entropy;
    const double progress = static_cast<double>(step - begin) / static_cast<double>(end - begin);
    return start + (*options_.final_target_entropy - start) * progress;
  }
  /// Resets (SacAgentOptions::resets), by the updates `done` so far: whether a reset comes before
  /// the next update (after reset_period, 2 reset_period, ... updates, `resets` times), whether the
  /// next update is one of the reset_updates after a reset, and the resets made so far once the
  /// update after each is done (the networks' generation).
  bool reset_due(std::int64_t done) const {
    const SacAgentOptions& o = options_;
    return o.resets > 0 && done > 0 && done % o.reset_period == 0 &&
           done / o.reset_period <= o.resets;
  }
  bool catch_up_update(std::int64_t done) const {
    const SacAgentOptions& o = options_;
    return o.resets > 0 && done >= o.reset_period && done % o.reset_period < o.reset_updates &&
           done / o.reset_period <= o.resets;
  }
  std::int64_t reset_generation(std::int64_t done) const {
    const SacAgentOptions& o = options_;
    return o.resets == 0 || done <= 0 ? 0 : std::min(o.resets, (done - 1) / o.reset_period);
  }
  /// Evaluation actors take the squashed mean.
  static ActingOptions evaluation_acting() { return {ActionMode::greedy}; }

  /// SAC acts on boxes only.
  void select_actions(const nn::NetworkOutputs&, std::span<const std::int32_t>,
                      std::span<const std::uint8_t>, std::span<std::int32_t>, Rng&) const {
    fail("SacAgent acts on box actions only (ActionSpec::box)");
  }
  /// For each frame i (outputs.mean, outputs.log_std [1, N, D]): a draw of the squashed policy
  /// scaled to [low, high], its squashed mean in evaluation frames, or a uniformly random action
  /// in training frames while the learner has not updated yet (parameter version 0).
  void select_box_actions(const nn::NetworkOutputs& outputs,
                          std::span<const std::uint8_t> evaluation, math::MatrixRef actions,
                          Rng& rng, const BoxActingContext& context) const {
    const std::int64_t n = outputs.mean.dim(1), d = outputs.mean.dim(2);
    const auto mean = outputs.mean.reshape({n, d}).matrix<float>();
    const auto raw = outputs.log_std.reshape({n, d}).matrix<float>();
    Eigen::ArrayXf scale(d), bias(d);
    for (std::int64_t j = 0; j < d; ++j) {
      scale(j) = 0.5f * (context.high[static_cast<std::size_t>(j)] -
                         context.low[static_cast<std::size_t>(j)]);
      bias(j) = 0.5f * (context.high[static_cast<std::size_t>(j)] +
                        context.low[static_cast<std::size_t>(j)]);
    }
    const SacMatrix zeros = SacMatrix::Zero(1, d);
    for (std::int64_t i = 0; i < n; ++i) {
      const bool greedy = evaluation[static_cast<std::size_t>(i)] != 0;
      if (!greedy && context.parameter_version == 0) {  // random until the first update
        for (std::int64_t j = 0; j < d; ++j)
          actions(i, j) = bias(j) + scale(j) * static_cast<float>(rng.uniform(-1.0, 1.0));
        continue;
      }
      const SacMatrix row_mean = mean.row(i).array(), row_raw = raw.row(i).array();
      const SacSample s = sac_sample(row_mean, row_raw, scale, bias, options_.log_std_bounds, &rng,
                                     greedy ? &zeros : nullptr);
      actions.row(i) = s.action.matrix();
    }
  }

 private:
  SacAgentOptions options_;
};

static_assert(BoxAgent<SacAgent>);

}  // namespace seedrl
