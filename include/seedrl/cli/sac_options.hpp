// SAC's command-line options (seedrl::cli): CleanRL's sac_continuous_action settings by default
// (recipes::mujoco_sac()), on RunCli (cli/agent_options.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "seedrl/agents/sac.hpp"
#include "seedrl/cli/agent_options.hpp"
#include "seedrl/recipes/control.hpp"

namespace seedrl::cli {

/// The SAC agent's command-line options, with a recipe's defaults.
struct SacCli : RunCli {
  std::vector<std::int64_t> hidden, critic_hidden;
  bool critic_layer_norm = false;
  double critic_learning_rate = 0.0, temperature_learning_rate = 0.0, tau = 0.0;
  double replay_ratio = 0.0;
  float alpha = 0.0f;
  std::optional<double> target_entropy;        ///< unset: -dims
  std::optional<double> final_target_entropy;  ///< unset: constant
  /// Where an anneal of the target entropy begins and ends, as fractions of the learner steps
  /// (the command line's form of SacAgentOptions' target_entropy_anneal_begin and _end).
  std::vector<double> target_entropy_anneal{0.5, 1.0};
  bool learn_temperature = false, prioritized = false, checkpoint_replay = false;
  std::int64_t learning_starts = 0, replay_capacity = 0, n_step = 0;
  std::int64_t actor_update_period = 0;
  std::int64_t resets = 0, reset_period = 0, reset_updates = 0;

  /// The defaults of `recipe` (recipes::mujoco_sac() unless given one).
  SacCli() : SacCli(recipes::mujoco_sac()) {}
  explicit SacCli(const recipes::Recipe<SacAgentOptions>& recipe) : base_(recipe.agent) {
    take_defaults(recipe);
    const SacAgentOptions& a = recipe.agent;
    hidden = a.network.mlp_hidden;
    critic_hidden = a.critic_hidden;
    critic_layer_norm = a.critic_layer_norm;
    critic_learning_rate = a.critic_learning_rate.initial;
    temperature_learning_rate = a.temperature_learning_rate.initial;
    tau = a.tau;
    replay_ratio = a.replay_ratio;
    alpha = a.initial_alpha;
    target_entropy = a.target_entropy;
    final_target_entropy = a.final_target_entropy;
    learn_temperature = a.learn_temperature;
    prioritized = a.replay.sampler == SamplerKind::prioritized;
    checkpoint_replay = a.checkpoint_replay;
    learning_starts = a.learning_starts;
    replay_capacity = a.replay_capacity;
    n_step = a.n_step;
    actor_update_period = a.actor_update_period;
    resets = a.resets;
    reset_period = a.reset_period;
    reset_updates = a.reset_updates;
  }

  void add_options(CommandLine& app, TrainingSessionOptions& session) {
    add_run_options(app, session);
    app.option("--hidden", hidden, "the actor's MLP sizes").positive();
    app.option("--critic-hidden", critic_hidden, "each critic's MLP sizes").positive();
    app.flag("--critic-layer-norm", critic_layer_norm,
             "normalise each critic hidden layer before its ReLU (learned scale and shift)");
    app.option("--critic-learning-rate", critic_learning_rate, "the critics' Adam rate").positive();
    app.option("--temperature-learning-rate", temperature_learning_rate,
               "the temperature's Adam rate")
        .positive();
    app.option("--tau", tau, "Polyak factor of the target critics").range(1e-6, 1.0);
    app.option("--alpha", alpha, "the temperature: its start, or its value when fixed").positive();
    app.option("--learn-temperature", learn_temperature,
               "learn the temperature towards --target-entropy (false: fixed --alpha)");
    app.option("--target-entropy", target_entropy,
               "the entropy the learned temperature aims for (unset: -dims, the action's "
               "dimensions; lower: a narrower policy)");
    app.option("--final-target-entropy", final_target_entropy,
               "anneal the target entropy linearly to this over --target-entropy-anneal "
               "(unset: constant)");
    app.option("--target-entropy-anneal", target_entropy_anneal,
               "where the anneal begins and ends, as fractions of the run's learner steps")
        .values(2)
        .range(0.0, 1.0);
    app.option("--learning-starts", learning_starts,
               "transitions of uniformly random actions before the first update")
        .positive();
    app.option("--replay-capacity", replay_capacity, "transitions the replay keeps").positive();
    app.option("--replay-ratio", replay_ratio,
               "samples per inserted transition (batch 256, one update per step: 256)")
        .positive();
    app.option("--prioritized", prioritized, "prioritized replay (false: uniform)");
    app.flag("--checkpoint-replay,!--no-checkpoint-replay", checkpoint_replay,
             "save the replay beside every checkpoint (a resumed run continues with it)");
    app.option("--n-step", n_step, "n-step returns").range(1, 100);
    app.option("--actor-update-period", actor_update_period,
               "the actor and the temperature step every this many critic updates")
        .range(1, 1000);
    app.option("--resets", resets,
               "times the actor and the critics start afresh, keeping the replay and the "
               "temperature (0: never)")
        .non_negative();
    app.option("--reset-period", reset_period,
               "learner updates between resets (every update counts, catch-up ones too)")
        .non_negative();
    app.option("--reset-updates", reset_updates,
               "updates after each reset that train on the replay without new transitions")
        .non_negative();
  }

  /// The run: 1 actor of 1 environment (CleanRL's), unrolls of 1 step (windows of n_step + 1).
  /// A rate's schedule: constant, or with --lr-decay linear to --lr-floor of itself over the run's
  /// learner steps, replay_ratio / batch of them per transition after the first learning_starts
  /// (each member of a learner group inserts its share of --frames).
  nn::LinearDecay rate_schedule(double rate) const {
    if (!decay) return {rate, 0, 0.0};
    return {rate, learner_steps(), rate * lr_floor};
  }

  /// The run's learner steps: replay_ratio / batch per transition after the first learning_starts
  /// (each member of a learner group inserts its share of --frames); at least 1.
  std::int64_t learner_steps() const {
    const double inserted = std::max(
        0.0, static_cast<double>(frames) / group_members() - static_cast<double>(learning_starts));
    const double steps = std::ceil(inserted * replay_ratio / static_cast<double>(batch));
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(steps));
  }

  SacAgent make_agent(const TensorSpec& observations, const ActionSpec& actions,
                      LocalTrainerOptions& run) const {
    SacAgentOptions o = base_;
    nn::NetworkOptions network = nn::NetworkOptions::mlp(observations.shape.numel(), 0, hidden);
    network.gaussian(actions.dims());
    network.state_dependent_log_std = true;
    set_agent_options(o, network);
    o.max_grad_norm = max_grad_norm;
    o.learning_rate = rate_schedule(learning_rate);
    o.critic_learning_rate = rate_schedule(critic_learning_rate);
    o.temperature_learning_rate = rate_schedule(temperature_learning_rate);
    o.critic_hidden = critic_hidden;
    o.critic_layer_norm = critic_layer_norm;
    o.tau = tau;
    o.initial_alpha = alpha;
    o.learn_temperature = learn_temperature;
    o.target_entropy = target_entropy;
    o.final_target_entropy = final_target_entropy;
    if (target_entropy_anneal[0] > target_entropy_anneal[1])
      throw Error(str_cat("--target-entropy-anneal: the begin (", target_entropy_anneal[0],
                          ") must not come after the end (", target_entropy_anneal[1], ")"));
    const auto at = [&](double fraction) {
      return static_cast<std::int64_t>(
          std::llround(fraction * static_cast<double>(learner_steps())));
    };
    o.target_entropy_anneal_begin = at(target_entropy_anneal[0]);
    o.target_entropy_anneal_end = at(target_entropy_anneal[1]);
    o.learning_starts = learning_starts;
    o.replay_capacity = std::max(replay_capacity, learning_starts);
    o.replay_ratio = replay_ratio;
    o.replay.sampler = prioritized ? SamplerKind::prioritized : SamplerKind::uniform;
    o.checkpoint_replay = checkpoint_replay;
    o.n_step = n_step;
    o.actor_update_period = actor_update_period;
    o.resets = resets;
    o.reset_period = reset_period;
    o.reset_updates = reset_updates;
    run.server.unroll_length = 1;
    run.server.burn_in = n_step - 1;
    return SacAgent(o);
  }

 private:
  SacAgentOptions base_;  ///< the recipe's agent: what no option sets
};

}  // namespace seedrl::cli
