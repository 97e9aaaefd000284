// The training programs' options (seedrl::cli: cli/agent_options.hpp, cli/sac_options.hpp): the
// SAC programs' --lr-decay decays all three rates over the run's learner steps; each program's
// command line, left at its defaults, makes its recipe's agent (seedrl/recipes/: the defaults live
// there and only there). The command line itself: test_cli.cpp.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "seedrl/cli/command_line.hpp"
#include "seedrl/cli/sac_options.hpp"
#include "seedrl/env/pendulum.hpp"
#include "seedrl/recipes/games.hpp"
#include "seedrl/recipes/minatar.hpp"

namespace {

// SacCli's agent for Pendulum after parsing `args` (the program's name first).
seedrl::SacAgentOptions sac_options(std::vector<std::string> args) {
  const auto recipe = seedrl::recipes::mujoco_sac();
  seedrl::cli::SacCli cli(recipe);
  seedrl::LocalTrainerOptions run = recipe.run;
  seedrl::cli::CommandLine app("test");
  cli.add_options(app, run);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  // A command line CLI11 refuses (it says why on stderr) is an error here, as for the programs.
  if (app.parse(static_cast<int>(argv.size()), argv.data()))
    throw seedrl::Error("the command line was refused");
  const seedrl::Pendulum env(1);
  return cli.make_agent(env.observation_spec(), env.action_spec(), run).options();
}

}  // namespace

TEST_CASE("SAC keeps its replay beside its checkpoints unless --no-checkpoint-replay") {
  CHECK(sac_options({"sac"}).checkpoint_replay);
  CHECK(sac_options({"sac", "--checkpoint-replay"}).checkpoint_replay);
  CHECK_FALSE(sac_options({"sac", "--no-checkpoint-replay"}).checkpoint_replay);
  CHECK_FALSE(sac_options({"sac", "--checkpoint-replay=false"}).checkpoint_replay);
}

TEST_CASE("SAC's rates are constant unless --lr-decay, which decays all three over the updates") {
  const seedrl::SacAgentOptions constant = sac_options({"sac"});
  CHECK(constant.learning_rate.decay_steps == 0);
  CHECK(constant.critic_learning_rate.decay_steps == 0);
  CHECK(constant.temperature_learning_rate.decay_steps == 0);
  CHECK(constant.critic_learning_rate.at(1'000'000) == doctest::Approx(1e-3));

  // 105,000 steps, 5,000 of them random: 100,000 updates of one batch each.
  const seedrl::SacAgentOptions decayed =
      sac_options({"sac", "--frames", "105000", "--lr-decay", "true", "--lr-floor", "0.25"});
  for (const seedrl::nn::LinearDecay* rate : {&decayed.learning_rate, &decayed.critic_learning_rate,
                                              &decayed.temperature_learning_rate}) {
    CHECK(rate->decay_steps == 100'000);
    CHECK(rate->final_value == doctest::Approx(0.25 * rate->initial));
  }
  CHECK(decayed.learning_rate.initial == doctest::Approx(3e-4));
  CHECK(decayed.critic_learning_rate.at(50'000) == doctest::Approx(0.625e-3));

  // Two batches per transition decay over twice the steps; a budget inside the random steps
  // still gets one.
  CHECK(sac_options({"sac", "--frames", "105000", "--lr-decay", "true", "--replay-ratio", "512"})
            .critic_learning_rate.decay_steps == 200'000);
  CHECK(sac_options({"sac", "--frames", "100", "--lr-decay", "true"}).learning_rate.decay_steps ==
        1);
}

TEST_CASE("SAC's target entropy anneals over fractions of the updates (--final-target-entropy)") {
  const seedrl::SacAgentOptions constant = sac_options({"sac"});
  CHECK_FALSE(constant.final_target_entropy.has_value());
  CHECK(seedrl::SacAgent(constant).target_entropy(1'000'000) == -1.0);  // Pendulum: 1 dim

  // 105,000 steps, 5,000 of them random: 100,000 updates; 0.5 - 0.8 of them is 50,000 - 80,000.
  const seedrl::SacAgentOptions annealed =
      sac_options({"sac", "--frames", "105000", "--final-target-entropy", "-3",
                   "--target-entropy-anneal", "0.5", "0.8"});
  REQUIRE(annealed.final_target_entropy.has_value());
  CHECK(*annealed.final_target_entropy == -3.0);
  CHECK(annealed.target_entropy_anneal_begin == 50'000);
  CHECK(annealed.target_entropy_anneal_end == 80'000);
  CHECK(seedrl::SacAgent(annealed).target_entropy(65'000) == doctest::Approx(-2.0));
  // By default the anneal runs from half the updates to the end.
  const seedrl::SacAgentOptions defaults =
      sac_options({"sac", "--frames", "105000", "--final-target-entropy", "-2"});
  CHECK(defaults.target_entropy_anneal_begin == 50'000);
  CHECK(defaults.target_entropy_anneal_end == 100'000);
  // A begin after the end, or a fraction outside [0, 1], is refused by name.
  CHECK_THROWS_WITH(
      sac_options({"sac", "--final-target-entropy", "-2", "--target-entropy-anneal", "0.8", "0.5"}),
      doctest::Contains("--target-entropy-anneal: the begin (0.8)"));
  CHECK_THROWS(sac_options({"sac", "--target-entropy-anneal", "0.5", "1.5"}));
}

namespace test_example_recipes {

using seedrl::recipes::Recipe;

// A command line of no flags: the recipe's defaults as the program sees them.
template <class Cli, class Run>
void parse_nothing(Cli& cli, Run& run) {
  seedrl::cli::CommandLine app("test");
  cli.add_options(app, run);
  char name[] = "program";
  char* argv[] = {name};
  REQUIRE_FALSE(app.parse(1, argv).has_value());
}

// What every agent has, as the recipe has it and as the program's agent has it.
void check_common(const seedrl::AgentOptions& made, const seedrl::AgentOptions& recipe) {
  CHECK(made.batch_size == recipe.batch_size);
  CHECK(made.discount == recipe.discount);
  CHECK(made.max_abs_reward == recipe.max_abs_reward);
  CHECK(made.learning_rate.initial == recipe.learning_rate.initial);
  CHECK(made.max_grad_norm == recipe.max_grad_norm);
  CHECK(made.optimizer.kind == recipe.optimizer.kind);
  CHECK(made.optimizer.adam.epsilon == recipe.optimizer.adam.epsilon);
  CHECK(made.optimizer.rmsprop.epsilon == recipe.optimizer.rmsprop.epsilon);
  CHECK(made.normalization.observations == recipe.normalization.observations);
  CHECK(made.normalization.rewards == recipe.normalization.rewards);
  CHECK(made.network.lstm_size == recipe.network.lstm_size);
}

// The decay of a rate over `frames` at `frames_per_step` new frames a learner step, to `floor`.
template <class R>
void check_schedule(const seedrl::nn::LinearDecay& rate, const R& recipe,
                    std::int64_t frames_per_step) {
  const std::int64_t steps = (recipe.frames + frames_per_step - 1) / frames_per_step;
  CHECK(rate.decay_steps == (recipe.lr_decay ? steps : 0));
  CHECK(rate.final_value ==
        doctest::Approx(rate.initial * (recipe.lr_decay ? recipe.lr_floor : 0)));
}

template <class Run>
void check_vtrace(const Recipe<seedrl::VTraceAgentOptions, Run>& recipe) {
  seedrl::cli::VTraceCli cli(recipe);
  Run run = recipe.run;
  parse_nothing(cli, run);
  CHECK(cli.frames == recipe.frames);
  CHECK(cli.hidden == recipe.agent.network.mlp_hidden);
  const seedrl::VTraceAgentOptions made =
      cli.make_agent(seedrl::nn::NetworkOptions::mlp(4, 2, cli.hidden), run.server.unroll_length)
          .options();
  const seedrl::VTraceAgentOptions& r = recipe.agent;
  check_common(made, r);
  CHECK(made.loss.baseline_cost == r.loss.baseline_cost);
  CHECK(made.loss.entropy_cost == r.loss.entropy_cost);
  CHECK(made.loss.entropy_ceiling == r.loss.entropy_ceiling);
  CHECK(made.vtrace.lambda == r.vtrace.lambda);
  CHECK(made.vtrace.clip_rho_threshold == r.vtrace.clip_rho_threshold);
  CHECK(made.vtrace.clip_pg_rho_threshold == r.vtrace.clip_pg_rho_threshold);
  check_schedule(made.learning_rate, recipe, r.batch_size * run.server.unroll_length);
}

void check_ppo(const Recipe<seedrl::PpoAgentOptions>& recipe) {
  seedrl::cli::PpoCli cli(recipe);
  seedrl::LocalTrainerOptions run = recipe.run;
  parse_nothing(cli, run);
  CHECK(cli.frames == recipe.frames);
  const seedrl::PpoAgentOptions& r = recipe.agent;
  seedrl::nn::NetworkOptions network = seedrl::nn::NetworkOptions::mlp(4, 2, cli.hidden);
  CHECK(cli.hidden == r.network.mlp_hidden);
  CHECK((cli.activation == "tanh") == (r.network.mlp_activation == seedrl::nn::Activation::tanh));
  CHECK(cli.value_torso == r.network.separate_value_torso);
  const seedrl::PpoAgentOptions made = cli.make_agent(network, run).options();
  check_common(made, r);
  CHECK(made.lambda == r.lambda);
  CHECK(made.epochs == r.epochs);
  CHECK(made.minibatch_size == r.minibatch_size);
  CHECK(made.max_policy_lag == r.max_policy_lag);
  CHECK(made.proximal_policy == r.proximal_policy);
  CHECK(made.max_behaviour_weight == r.max_behaviour_weight);
  CHECK(made.loss.clip == r.loss.clip);
  CHECK(made.loss.clip_value == r.loss.clip_value);
  CHECK(made.loss.value_cost == r.loss.value_cost);
  CHECK(made.loss.entropy_cost == r.loss.entropy_cost);
  CHECK(made.network.initial_log_std == r.network.initial_log_std);
  const std::int64_t transitions = r.batch_size * run.server.unroll_length;
  CHECK(made.learning_rate.decay_steps ==
        (recipe.frames + transitions - 1) / transitions * cli.updates_per_batch(transitions));
}

void check_r2d2(const Recipe<seedrl::R2D2AgentOptions>& recipe) {
  seedrl::cli::R2D2Cli cli(recipe);
  seedrl::LocalTrainerOptions run = recipe.run;
  parse_nothing(cli, run);
  CHECK(cli.frames == recipe.frames);
  const seedrl::R2D2AgentOptions& r = recipe.agent;
  const seedrl::R2D2AgentOptions made =
      cli.make_agent(seedrl::nn::NetworkOptions::mlp(4, 2, r.network.mlp_hidden), run).options();
  check_common(made, r);
  CHECK(made.n_step == r.n_step);
  CHECK(made.value_rescaling == r.value_rescaling);
  CHECK(made.target_update_period == r.target_update_period);
  CHECK(made.replay_capacity == r.replay_capacity);
  CHECK(made.min_replay_size == r.min_replay_size);
  CHECK(made.replay_ratio == r.replay_ratio);
  CHECK(made.replay.priority_exponent == r.replay.priority_exponent);
  CHECK(made.replay.importance_sampling_exponent == r.replay.importance_sampling_exponent);
  CHECK(made.epsilon_base == r.epsilon_base);
  CHECK(made.epsilon_alpha == r.epsilon_alpha);
  CHECK(made.evaluation_epsilon == r.evaluation_epsilon);
  CHECK(made.checkpoint_replay == r.checkpoint_replay);
  CHECK(made.concurrent_insertion == r.concurrent_insertion);
  CHECK(made.actor_priorities == r.actor_priorities);
  CHECK(made.network.dueling);
  CHECK(made.learning_rate.decay_steps == 0);
}

void check_sac(const Recipe<seedrl::SacAgentOptions>& recipe) {
  seedrl::cli::SacCli cli(recipe);
  seedrl::LocalTrainerOptions run = recipe.run;
  parse_nothing(cli, run);
  CHECK(cli.frames == recipe.frames);
  const seedrl::Pendulum env(1);
  const seedrl::SacAgentOptions made =
      cli.make_agent(env.observation_spec(), env.action_spec(), run).options();
  const seedrl::SacAgentOptions& r = recipe.agent;
  check_common(made, r);
  CHECK(made.network.mlp_hidden == r.network.mlp_hidden);
  CHECK(made.critic_hidden == r.critic_hidden);
  CHECK(made.critic_layer_norm == r.critic_layer_norm);
  CHECK(made.critic_learning_rate.initial == r.critic_learning_rate.initial);
  CHECK(made.temperature_learning_rate.initial == r.temperature_learning_rate.initial);
  CHECK(made.tau == r.tau);
  CHECK(made.initial_alpha == r.initial_alpha);
  CHECK(made.learn_temperature == r.learn_temperature);
  CHECK(made.learning_starts == r.learning_starts);
  CHECK(made.replay_capacity == r.replay_capacity);
  CHECK(made.replay_ratio == r.replay_ratio);
  CHECK(made.replay.sampler == r.replay.sampler);
  CHECK(made.n_step == r.n_step);
  CHECK(made.actor_update_period == r.actor_update_period);
  CHECK(made.resets == r.resets);
  CHECK(made.checkpoint_replay == r.checkpoint_replay);
  CHECK(made.learning_rate.decay_steps == 0);
}

}  // namespace test_example_recipes

TEST_CASE("each program's command line, left alone, makes its recipe's agent") {
  namespace recipes = seedrl::recipes;
  using namespace test_example_recipes;
  SUBCASE("V-trace") {
    check_vtrace(recipes::cartpole_vtrace());
    check_vtrace(recipes::minatar_vtrace());
    check_vtrace(recipes::card_pick_vtrace());
    check_vtrace(recipes::gunner_vtrace());
    check_vtrace(recipes::selfplay("tictactoe"));
    check_vtrace(recipes::selfplay("connect4"));
    check_vtrace(recipes::selfplay("standoff"));
  }
  SUBCASE("PPO") {
    check_ppo(recipes::mujoco_ppo());
    check_ppo(recipes::pendulum_ppo());
    check_ppo(recipes::minatar_ppo());
    check_ppo(recipes::card_pick_ppo());
    check_ppo(recipes::gunner_ppo());
  }
  SUBCASE("R2D2") {
    check_r2d2(recipes::minatar_r2d2());
    check_r2d2(recipes::card_pick_r2d2());
    check_r2d2(recipes::gunner_r2d2());
  }
  SUBCASE("SAC") {
    check_sac(recipes::mujoco_sac());
    check_sac(recipes::pendulum_sac());
  }
}

TEST_CASE("--agent vtrace on a PPO program takes the V-trace recipe's unroll, batch and rate") {
  const auto ppo = seedrl::recipes::pendulum_ppo();
  const auto vtrace = seedrl::recipes::pendulum_vtrace();
  seedrl::cli::PpoCli cli(ppo);
  seedrl::LocalTrainerOptions run = ppo.run;
  seedrl::cli::CommandLine app("test");
  cli.add_options(app, run);
  char name[] = "pendulum_ppo", flag[] = "--batch", value[] = "5";
  char* argv[] = {name, flag, value};
  REQUIRE_FALSE(app.parse(3, argv).has_value());
  cli.use_vtrace_defaults(app, run, vtrace);
  CHECK(run.server.unroll_length == vtrace.run.server.unroll_length);
  CHECK(cli.batch == 5);  // given: kept
  const seedrl::VTraceAgentOptions made =
      cli.make_vtrace_agent(seedrl::nn::NetworkOptions::mlp(3, 0, cli.hidden).gaussian(1), run)
          .options();
  CHECK(made.learning_rate.initial == vtrace.agent.learning_rate.initial);
  CHECK(made.discount == vtrace.agent.discount);
  CHECK(made.vtrace.lambda == vtrace.agent.vtrace.lambda);
  CHECK(made.normalization.observations == vtrace.agent.normalization.observations);
}
