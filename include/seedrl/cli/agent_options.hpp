// The training programs' command-line options (seedrl::cli): what every run takes (RunCli: the
// frame budget, the seed, the session's options, the options every agent shares) and each agent's
// own (VTraceCli, PpoCli, R2D2Cli; SAC's: cli/sac_options.hpp). Their defaults are a recipe's
// (seedrl/recipes/: each program passes its family's), so that a program run without flags trains
// with the settings docs/results.md measured; no default is written here. The options are declared
// in src/cli/agent_options.cpp, compiled once in libseedrl_cli.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "seedrl/agents/ppo.hpp"
#include "seedrl/agents/r2d2.hpp"
#include "seedrl/agents/vtrace.hpp"
#include "seedrl/cli/command_line.hpp"
#include "seedrl/io/messages.hpp"
#include "seedrl/learner/training_group.hpp"
#include "seedrl/recipes/control.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"
#include "seedrl/session/training_session.hpp"

namespace seedrl::cli {

/// --env, one of `names` (cartpole and catch; the distributed examples add pendulum).
void add_environment_option(CommandLine& app, std::string& name,
                            const std::vector<std::string>& names = {"cartpole", "catch"});

/// What every training program takes: the frame budget, the seed, the session's options and the
/// options every agent shares. Agents' CLIs derive from it, their defaults taken from a recipe.
struct RunCli {
  std::string env_name = "cartpole";
  std::int64_t frames = 0;
  std::uint64_t seed = 1;
  std::int64_t batch = 0;
  std::int64_t lstm = 0;
  float discount = 0.0f, max_abs_reward = 0.0f;
  double learning_rate = 0.0, max_grad_norm = 0.0, adam_epsilon = 0.0;
  bool decay = false;
  double lr_floor = 0.0;  ///< where a decaying rate ends, a fraction of learning_rate
  int batch_timeout_us = 0;
  std::string backend = "cpu";
  Option learner_workers_option;  ///< --learner-workers, to tell whether it was given

  /// The members of the learner group this process trains in: the processes an MPI launcher
  /// started (1 alone). A group's steps take frames from every member.
  static std::int64_t group_members() { return std::max(1, launched_processes()); }

  /// The defaults of the options above from `recipe`: its frames, the options every agent has,
  /// the learning rate's schedule, the inference batch timeout.
  template <class Options, class Run>
  void take_defaults(const recipes::Recipe<Options, Run>& recipe) {
    const AgentOptions& a = recipe.agent;
    frames = recipe.frames;
    batch = a.batch_size;
    lstm = a.network.lstm_size;
    discount = a.discount;
    max_abs_reward = a.max_abs_reward;
    learning_rate = a.learning_rate.initial;
    max_grad_norm = a.max_grad_norm;
    adam_epsilon = a.optimizer.adam.epsilon;
    decay = recipe.lr_decay;
    lr_floor = recipe.lr_floor;
    batch_timeout_us = static_cast<int>(recipe.run.server.batch_timeout.count());
  }

  /// --frames, --seed, the session's options into `session`, and the shared agent options.
  void add_run_options(CommandLine& app, TrainingSessionOptions& session);

  /// Completes `session` from the parsed options (frame budget, seed, batch timeout) and joins it
  /// to `group` (the learner group when an MPI launcher started the program, else null); the
  /// run's progress shows on the console.
  void finish(TrainingSessionOptions& session, TrainingGroup* group) const {
    // One device computes a batch as a whole: on the GPU an example's default of several learner
    // workers becomes one (asked for on the command line, the learner refuses it by name).
    if (backend == "cuda" && session.learner_workers > 1 && learner_workers_option.count() == 0) {
      session.learner_workers = 1;
      session.micro_batches = 0;
    }
    session.group = group;
    session.total_frames = frames;
    session.server.seed = seed;
    session.server.batch_timeout = std::chrono::microseconds(batch_timeout_us);
    session.messages = io::console_sink();
  }

  /// What every agent takes from the run's options: `network` (its LSTM size and seed set from
  /// them), the batch, the discount, the reward and gradient clips, Adam's epsilon.
  void set_agent_options(AgentOptions& o, nn::NetworkOptions network) const {
    o.network = std::move(network);
    o.network.lstm_size = lstm;
    o.network.seed = seed;
    o.batch_size = batch;
    o.discount = discount;
    o.max_abs_reward = max_abs_reward;
    o.max_grad_norm = max_grad_norm;
    o.optimizer.adam.epsilon = static_cast<float>(adam_epsilon);
  }

  /// The learning-rate schedule: constant, or linear to --lr-floor of itself over the learner
  /// steps that `frames` take at `frames_per_step` new frames each (per member of a learner
  /// group: the group's steps take that many from every member).
  nn::LinearDecay learning_rate_schedule(std::int64_t frames_per_step) const {
    const std::int64_t group_frames_per_step = frames_per_step * group_members();
    return {learning_rate, decay ? (frames + group_frames_per_step - 1) / group_frames_per_step : 0,
            learning_rate * lr_floor};
  }
};

/// The V-trace agent's command-line options, with a recipe's defaults (examples/cartpole_vtrace's
/// unless given one).
struct VTraceCli : RunCli {
  std::vector<std::int64_t> hidden;
  float baseline_cost = 0.0f, entropy_cost = 0.0f, entropy_ceiling = 0.0f, lambda = 0.0f,
        clip_rho = 0.0f, clip_pg_rho = 0.0f;
  double rmsprop_epsilon = 0.0, target_policy_lag = 0.0;
  std::int64_t max_batch_multiple = 1;
  std::string optimizer;
  std::vector<std::string> environments{"cartpole", "catch"};  ///< what --env accepts
  bool normalize = false;  ///< observation and reward normalisation (set for box actions)

  VTraceCli() : VTraceCli(recipes::cartpole_vtrace()) {}
  template <class Run>
  explicit VTraceCli(const recipes::Recipe<VTraceAgentOptions, Run>& recipe) : base_(recipe.agent) {
    take_defaults(recipe);
    const VTraceAgentOptions& a = recipe.agent;
    hidden = a.network.mlp_hidden;
    baseline_cost = a.loss.baseline_cost;
    entropy_cost = a.loss.entropy_cost;
    entropy_ceiling = a.loss.entropy_ceiling;
    lambda = a.vtrace.lambda;
    clip_rho = a.vtrace.clip_rho_threshold;
    clip_pg_rho = a.vtrace.clip_pg_rho_threshold;
    rmsprop_epsilon = a.optimizer.rmsprop.epsilon;
    target_policy_lag = a.target_policy_lag;
    max_batch_multiple = a.max_batch_multiple;
    optimizer = a.optimizer.kind == nn::OptimizerKind::adam ? "adam" : "rmsprop";
    normalize = a.normalization.observations;
  }

  /// --env, the run's options and the V-trace agent's.
  void add_options(CommandLine& app, TrainingSessionOptions& session);

  /// The agent the parsed options describe, with an MLP for observations of `observation_size`
  /// floats.
  VTraceAgent make_agent(std::int64_t observation_size, std::int64_t num_actions,
                         std::int64_t unroll_length) const {
    return make_agent(nn::NetworkOptions::mlp(observation_size, num_actions, hidden),
                      unroll_length);
  }

  /// The agent the parsed options describe, with `network` (its LSTM size and seed set from the
  /// options).
  VTraceAgent make_agent(nn::NetworkOptions network, std::int64_t unroll_length) const {
    VTraceAgentOptions o = base_;
    set_agent_options(o, std::move(network));
    o.vtrace = {clip_rho, clip_pg_rho, lambda};
    o.loss.baseline_cost = baseline_cost;
    o.loss.entropy_cost = entropy_cost;
    o.loss.entropy_ceiling = entropy_ceiling;
    o.optimizer.kind = optimizer == "adam" ? nn::OptimizerKind::adam : nn::OptimizerKind::rmsprop;
    o.optimizer.rmsprop.epsilon = static_cast<float>(rmsprop_epsilon);
    o.target_policy_lag = target_policy_lag;
    o.max_batch_multiple = max_batch_multiple;
    o.normalization.observations = normalize;
    o.normalization.rewards = normalize;
    o.learning_rate = learning_rate_schedule(batch * unroll_length);
    return VTraceAgent(o);
  }

  /// Pendulum (box actions) with V-trace: recipes::pendulum_vtrace()'s settings (those of
  /// `pendulum_ppo --agent vtrace`: Adam 1e-3, gamma 0.9, unrolls of 16 in batches of 8, no
  /// entropy bonus, gradient norm 0.5, observations and rewards normalised) for every option the
  /// command line did not set.
  void use_pendulum_defaults(const CommandLine& app, TrainingSessionOptions& session);

  /// The agent for an in-process run.
  VTraceAgent make_agent(nn::NetworkOptions network, const LocalTrainerOptions& run) const {
    return make_agent(std::move(network), run.server.unroll_length);
  }

 private:
  VTraceAgentOptions base_;  ///< the recipe's agent: what no option sets
};

/// The PPO agent's command-line options, with a recipe's defaults (recipes::ppo_base()'s, CleanRL's
/// MuJoCo settings, unless given one).
struct PpoCli : RunCli {
  std::vector<std::int64_t> hidden;
  float lambda = 0.0f, clip = 0.0f, value_cost = 0.0f, entropy_cost = 0.0f;
  float initial_log_std = 0.0f;
  std::int64_t epochs = 0, minibatch = 0, max_policy_lag = 0;
  float max_behaviour_weight = 0.0f;
  bool clip_value = false, normalize_observations = false, scale_rewards = false,
       proximal_policy = false, value_torso = false, synchronous = false;
  std::string activation;

  PpoCli() : PpoCli(recipes::ppo_base()) {}
  explicit PpoCli(const recipes::Recipe<PpoAgentOptions>& recipe) : base_(recipe.agent) {
    take_defaults(recipe);
    const PpoAgentOptions& a = recipe.agent;
    hidden = a.network.mlp_hidden;
    lambda = a.lambda;
    clip = a.loss.clip;
    value_cost = a.loss.value_cost;
    entropy_cost = a.loss.entropy_cost;
    initial_log_std = a.network.initial_log_std;
    epochs = a.epochs;
    minibatch = a.minibatch_size;
    max_policy_lag = a.max_policy_lag;
    max_behaviour_weight = a.max_behaviour_weight;
    clip_value = a.loss.clip_value;
    normalize_observations = a.normalization.observations;
    scale_rewards = a.normalization.rewards;
    proximal_policy = a.proximal_policy;
    synchronous = a.synchronous;
    value_torso = a.network.separate_value_torso;
    activation = a.network.mlp_activation == nn::Activation::tanh ? "tanh" : "relu";
  }

  /// The run's options and PPO's (the caller adds --env).
  void add_options(CommandLine& app, TrainingSessionOptions& session);

  /// Updates per batch of `transitions`.
  std::int64_t updates_per_batch(std::int64_t transitions) const {
    return epochs * ((transitions + minibatch - 1) / minibatch);
  }

  /// The agent the parsed options describe, with `network` (its seed and, for box actions, the
  /// initial log std set from the options).
  PpoAgent make_agent(nn::NetworkOptions network, const LocalTrainerOptions& run) const {
    PpoAgentOptions o = base_;
    set_agent_options(o, std::move(network));
    o.network.initial_log_std = initial_log_std;
    o.lambda = lambda;
    o.epochs = epochs;
    o.minibatch_size = minibatch;
    o.max_policy_lag = max_policy_lag;
    o.proximal_policy = proximal_policy;
    o.synchronous = synchronous;
    o.max_behaviour_weight = max_behaviour_weight;
    o.loss.clip = clip;
    o.loss.clip_value = clip_value;
    o.loss.value_cost = value_cost;
    o.loss.entropy_cost = entropy_cost;
    o.normalization.observations = normalize_observations;
    o.normalization.rewards = scale_rewards;
    const std::int64_t transitions = batch * run.server.unroll_length;
    o.learning_rate = {
        learning_rate,
        decay ? (frames + transitions - 1) / transitions * updates_per_batch(transitions) : 0,
        learning_rate * lr_floor};
    return PpoAgent(o);
  }

  /// --agent vtrace learns from each transition once, so it takes more, smaller updates than
  /// PPO: `recipe`'s unroll, batch and rate (recipes::vtrace_from: 16, 8 and PPO's rate) unless
  /// the command line set them.
  void use_vtrace_defaults(const CommandLine& app, LocalTrainerOptions& run,
                           const recipes::Recipe<VTraceAgentOptions>& recipe);

  /// V-trace on the same options (--agent vtrace): network, batch, discount, learning rate
  /// (decayed over the run's learner steps), gradient clip, normalisation, value and entropy
  /// costs; lambda is V-trace's (the rho clips stay 1).
  VTraceAgent make_vtrace_agent(nn::NetworkOptions network, const LocalTrainerOptions& run) const {
    VTraceAgentOptions o;
    static_cast<AgentOptions&>(o) = base_;
    set_agent_options(o, std::move(network));
    o.network.initial_log_std = initial_log_std;
    o.vtrace.lambda = lambda;
    o.loss.baseline_cost = value_cost;
    o.loss.entropy_cost = entropy_cost;
    o.normalization.observations = normalize_observations;
    o.normalization.rewards = scale_rewards;
    o.learning_rate = learning_rate_schedule(batch * run.server.unroll_length);
    return VTraceAgent(o);
  }

 private:
  PpoAgentOptions base_;  ///< the recipe's agent: what no option sets
};

/// The R2D2 agent's command-line options (a dueling LSTM Q-network), with a recipe's defaults
/// (recipes::r2d2_base()'s unless given one).
struct R2D2Cli : RunCli {
  std::int64_t n_step = 0, target_period = 0;
  std::size_t replay_capacity = 0, min_replay = 0;
  double replay_ratio = 0.0, priority_exponent = 0.0, importance_exponent = 0.0;
  double epsilon_base = 0.0, epsilon_alpha = 0.0, evaluation_epsilon = 0.0;
  bool value_rescaling = false, checkpoint_replay = false, concurrent_insertion = false,
       actor_priorities = false;

  R2D2Cli() : R2D2Cli(recipes::r2d2_base()) {}
  explicit R2D2Cli(const recipes::Recipe<R2D2AgentOptions>& recipe) : base_(recipe.agent) {
    take_defaults(recipe);
    const R2D2AgentOptions& a = recipe.agent;
    n_step = a.n_step;
    target_period = a.target_update_period;
    replay_capacity = a.replay_capacity;
    min_replay = a.min_replay_size;
    replay_ratio = a.replay_ratio;
    priority_exponent = a.replay.priority_exponent;
    importance_exponent = a.replay.importance_sampling_exponent;
    epsilon_base = a.epsilon_base;
    epsilon_alpha = a.epsilon_alpha;
    evaluation_epsilon = a.evaluation_epsilon;
    value_rescaling = a.value_rescaling;
    checkpoint_replay = a.checkpoint_replay;
    concurrent_insertion = a.concurrent_insertion;
    actor_priorities = a.actor_priorities;
  }

  /// The run's options and the R2D2 agent's (--burn-in sets the server's burn-in steps).
  void add_options(CommandLine& app, TrainingSessionOptions& session);

  /// The agent the parsed options describe, with `network` made a dueling LSTM Q-network (size
  /// and seed from the options) and `exploration_slots` environments sharing the epsilon schedule.
  R2D2Agent make_agent(nn::NetworkOptions network, std::int64_t unroll_length,
                       std::int64_t exploration_slots) const {
    R2D2AgentOptions o = base_;
    set_agent_options(o, std::move(network));
    o.network.policy_value_heads = false;
    o.network.q_head = true;
    o.network.dueling = true;
    o.n_step = n_step;
    o.value_rescaling = value_rescaling;
    o.target_update_period = target_period;
    o.replay_capacity = replay_capacity;
    o.replay = {priority_exponent, importance_exponent};
    o.replay_ratio = replay_ratio;
    o.min_replay_size = std::min(min_replay, replay_capacity);
    o.checkpoint_replay = checkpoint_replay;
    o.concurrent_insertion = concurrent_insertion;
    o.actor_priorities = actor_priorities;
    o.exploration_slots = exploration_slots;
    o.epsilon_base = epsilon_base;
    o.epsilon_alpha = epsilon_alpha;
    o.evaluation_epsilon = evaluation_epsilon;
    // A learner step samples `batch` sequences; at replay_ratio that is batch / ratio new ones.
    const auto frames_per_step = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(static_cast<double>(batch * unroll_length) / replay_ratio));
    o.learning_rate = learning_rate_schedule(frames_per_step);
    return R2D2Agent(o);
  }

  /// The agent for an in-process run: every training environment gets its own exploration rate.
  R2D2Agent make_agent(nn::NetworkOptions network, const LocalTrainerOptions& run) const {
    return make_agent(std::move(network), run.server.unroll_length,
                      static_cast<std::int64_t>(run.num_actors) * run.envs_per_actor);
  }

 private:
  R2D2AgentOptions base_;  ///< the recipe's agent: what no option sets
};

}  // namespace seedrl::cli
