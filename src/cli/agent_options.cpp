// The training programs' options (cli/agent_options.hpp), declared once for all of them.
#include "seedrl/cli/agent_options.hpp"

namespace seedrl::cli {

void add_environment_option(CommandLine& app, std::string& name,
                            const std::vector<std::string>& names) {
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  app.option("--env", name, "environment: " + list).one_of(names);
}

void RunCli::add_run_options(CommandLine& app, TrainingSessionOptions& session) {
  // run_info.json and the "run:" line record the command, so that a run directory says how it
  // was made.
  app.on_parsed([&app, &session] { session.run_info.push_back({"command", app.given_command()}); });
  app.option("--frames", frames, "environment frames to train for").positive();
  app.option("--seed", seed, "seed of parameters, environments and sampling");
  app.option("--unroll", session.server.unroll_length, "transitions per unroll (T)")
      .range(1, 10000);
  app.option("--batch", batch, "unrolls per learner step (B)").range(1, 4096);
  app.option("--logdir", session.logdir,
             "directory for metrics, TensorBoard events and checkpoints");
  app.option("--export-onnx", session.export_onnx,
             "at the end, write the trained network here as an ONNX model");
  app.option("--backend", backend,
             "where the networks compute: cpu, or cuda (the GPU; where the examples were "
             "built with seedrl::cuda)")
      .one_of({"cpu", "cuda"});
  app.option("--threads", session.learner_threads, "learner compute threads").range(1, 256);
  app.option("--inference-threads", session.server.threads, "inference compute threads")
      .range(1, 256);
  app.flag("!--no-cuda-graphs", session.server.graphs,
           "with --backend cuda, run every inference forward directly rather than replaying "
           "it from a CUDA graph");
  learner_workers_option =
      app.option("--learner-workers", session.learner_workers,
                 "learner threads that each take whole micro-batches of a step")
          .range(1, 256);
  app.option("--micro-batches", session.micro_batches,
             "micro-batches per learner step (0: 2 per learner worker, 1 for one worker)")
      .range(0, 4096);
  app.option("--checkpoint-seconds", session.checkpoint_seconds,
             "checkpoint period (0: at the end only)")
      .non_negative();
  app.option("--keep-checkpoints", session.keep_checkpoints,
             "checkpoints kept in --logdir (a resume falls back to an older one that "
             "verifies)")
      .range(1, 1000);
  app.option("--max-checkpoint-failures", session.max_checkpoint_failures,
             "end the run once this many checkpoints in a row could not be written (a "
             "full disk: each failure is said, and the next period tries again)")
      .range(1, 1 << 30);
  app.option("--max-skipped-steps", session.max_skipped_steps,
             "end the run once this many learner steps in a row were not finite (0: never)")
      .non_negative();
  app.option("--report-seconds", session.report_seconds, "progress and metrics period").positive();
  app.option("--batch-timeout-us", batch_timeout_us,
             "serve a partial inference batch after this long")
      .non_negative();
  app.option("--lstm", lstm, "LSTM core size (0: none)").non_negative();
  app.option("--learning-rate", learning_rate, "initial learning rate").positive();
  app.option("--lr-decay", decay,
             "decay the learning rate linearly over --frames, to --lr-floor of itself");
  app.option("--lr-floor", lr_floor,
             "where a decaying learning rate ends, as a fraction of --learning-rate (0: "
             "at 0)")
      .range(0.0, 1.0);
  app.option("--adam-epsilon", adam_epsilon, "Adam epsilon").positive();
  app.option("--discount", discount, "discount factor gamma").range(0.0, 1.0);
  app.option("--max-grad-norm", max_grad_norm, "global gradient-norm clip (0: none)")
      .non_negative();
  app.option("--max-abs-reward", max_abs_reward, "reward clipping for the loss (0: none)")
      .non_negative();
}

void VTraceCli::add_options(CommandLine& app, TrainingSessionOptions& session) {
  add_environment_option(app, env_name, environments);
  add_run_options(app, session);
  app.option("--hidden", hidden, "MLP torso sizes").positive();
  app.option("--optimizer", optimizer, "adam or rmsprop").one_of({"adam", "rmsprop"});
  app.option("--rmsprop-epsilon", rmsprop_epsilon, "RMSProp epsilon (inside the square root)")
      .positive();
  app.option("--baseline-cost", baseline_cost, "weight of the value loss").non_negative();
  app.option("--entropy-cost", entropy_cost, "weight of the entropy bonus").non_negative();
  app.option("--entropy-ceiling", entropy_ceiling,
             "the entropy bonus counts a state's entropy up to this fraction of its maximum "
             "(1: all of it; discrete actions only)")
      .range(0.0, 1.0);
  app.option("--lambda", lambda, "V-trace lambda").range(0.0, 1.0);
  app.option("--clip-rho", clip_rho, "V-trace rho-bar").positive();
  app.option("--clip-pg-rho", clip_pg_rho, "V-trace policy-gradient rho-bar").positive();
  app.option("--target-policy-lag", target_policy_lag,
             "mean policy lag (learner steps) above which a step takes more unrolls, up to "
             "--max-batch-multiple times --batch (0: always --batch)")
      .non_negative();
  app.option("--max-batch-multiple", max_batch_multiple,
             "most unrolls a step takes, in multiples of --batch")
      .range(1, 4096);
}

void VTraceCli::use_pendulum_defaults(const CommandLine& app, TrainingSessionOptions& session) {
  const recipes::Recipe<VTraceAgentOptions> recipe = recipes::pendulum_vtrace();
  const VTraceCli pendulum(recipe);
  auto unset = [&](const char* flag) { return app.count(flag) == 0; };
  if (unset("--optimizer")) optimizer = pendulum.optimizer;
  if (unset("--learning-rate")) learning_rate = pendulum.learning_rate;
  if (unset("--adam-epsilon")) adam_epsilon = pendulum.adam_epsilon;
  if (unset("--discount")) discount = pendulum.discount;
  if (unset("--unroll")) session.server.unroll_length = recipe.run.server.unroll_length;
  if (unset("--batch")) batch = pendulum.batch;
  if (unset("--entropy-cost")) entropy_cost = pendulum.entropy_cost;
  if (unset("--max-grad-norm")) max_grad_norm = pendulum.max_grad_norm;
  if (unset("--lambda")) lambda = pendulum.lambda;
  normalize = pendulum.normalize;
}

void PpoCli::add_options(CommandLine& app, TrainingSessionOptions& session) {
  add_run_options(app, session);
  app.option("--hidden", hidden, "MLP torso sizes").positive();
  app.option("--activation", activation, "MLP hidden-layer activation").one_of({"relu", "tanh"});
  app.option("--value-torso", value_torso,
             "the value head gets an MLP of its own (false: it shares the policy's)");
  app.option("--lambda", lambda, "GAE lambda (PPO) or V-trace lambda").range(0.0, 1.0);
  app.option("--epochs", epochs, "PPO: passes over each batch").range(1, 1000);
  app.option("--minibatch", minibatch, "transitions per update").range(1, 1 << 20);
  app.option("--clip", clip, "PPO ratio clip epsilon").range(0.001, 0.999);
  app.option("--clip-value", clip_value, "clip the value update around the old values");
  app.option("--value-cost", value_cost, "weight of the value loss").non_negative();
  app.option("--entropy-cost", entropy_cost, "weight of the entropy bonus").non_negative();
  app.option("--initial-log-std", initial_log_std,
             "box actions: initial log standard deviation of the policy");
  app.option("--max-policy-lag", max_policy_lag,
             "drop unrolls acted by parameters this many updates old (0: keep all)")
      .non_negative();
  app.option("--proximal-policy", proximal_policy,
             "PPO: clip the ratio around the learner's policy at the start of each batch, "
             "weighting by the behaviour policy (decoupled PPO); false: around the "
             "behaviour policy");
  app.option("--synchronous", synchronous,
             "PPO: the actors wait while the learner trains on a batch (no policy lag beyond "
             "the batch's own updates, as synchronous PPO; the actors idle meanwhile)");
  app.option("--max-behaviour-weight", max_behaviour_weight,
             "PPO with --proximal-policy: cap of the weights pi_prox / mu")
      .positive();
  app.option("--normalize-observations", normalize_observations,
             "running mean/variance normalisation of the observations");
  app.option("--scale-rewards", scale_rewards,
             "scale rewards by the running std of the discounted return");
}

void PpoCli::use_vtrace_defaults(const CommandLine& app, LocalTrainerOptions& run,
                                 const recipes::Recipe<VTraceAgentOptions>& recipe) {
  if (app.count("--unroll") == 0) run.server.unroll_length = recipe.run.server.unroll_length;
  if (app.count("--batch") == 0) batch = recipe.agent.batch_size;
  if (app.count("--learning-rate") == 0) learning_rate = recipe.agent.learning_rate.initial;
}

void R2D2Cli::add_options(CommandLine& app, TrainingSessionOptions& session) {
  add_run_options(app, session);
  app.option("--burn-in", session.server.burn_in, "LSTM warm-up steps before each unroll")
      .range(0, 10000);
  app.option("--n-step", n_step, "n of the n-step double-Q targets").range(1, 1000);
  app.option("--target-period", target_period, "learner steps between target copies").positive();
  app.option("--replay-capacity", replay_capacity, "sequences the replay holds").positive();
  app.option("--min-replay", min_replay, "sequences in the replay before learning starts")
      .positive();
  app.option("--replay-ratio", replay_ratio, "sequences sampled per sequence inserted").positive();
  app.option("--priority-exponent", priority_exponent, "replay priority exponent alpha")
      .non_negative();
  app.option("--importance-exponent", importance_exponent, "importance-sampling exponent beta")
      .non_negative();
  app.option("--epsilon-base", epsilon_base, "exploration rate of actor 0").range(0.0, 1.0);
  app.option("--epsilon-alpha", epsilon_alpha, "exponent spread of the per-actor rates")
      .non_negative();
  app.option("--evaluation-epsilon", evaluation_epsilon, "exploration of evaluation actors")
      .range(0.0, 1.0);
  app.option("--value-rescaling", value_rescaling, "train on h(target) (R2D2)");
  app.option("--concurrent-insertion", concurrent_insertion,
             "compute new sequences' priorities on a thread of their own");
  app.option("--actor-priorities", actor_priorities,
             "new sequences' priorities from the Q-values inference acted on");
  app.flag("--checkpoint-replay", checkpoint_replay,
           "save the replay contents with every checkpoint (can be large)");
}

}  // namespace seedrl::cli
