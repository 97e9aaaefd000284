// The bodies of training programs: an agent from its command-line options (agent_options.hpp,
// sac_options.hpp: RunCli, VTraceCli, R2D2Cli, PpoCli, SacCli, their defaults a recipe's) trained
// in one process on built-in or the program's own environments, ending with the JSON line
// (result_line.hpp); program.hpp stops them on signals and ends them with an error.
//
// Started by an MPI launcher (mpirun -np N program ...), a program that links seedrl::mpi trains
// as a learner group of N members (program.hpp's learner_group()): each rank runs its own actors
// on environments of its own seeds, the gradients are averaged, rank 0 reports and writes the
// files, and the JSON line (rank 0's) says "ranks": N. One that links seedrl::cuda may compute on
// the GPU (--backend cuda).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "seedrl/agents/ppo.hpp"
#include "seedrl/agents/r2d2.hpp"
#include "seedrl/agents/sac.hpp"
#include "seedrl/agents/vtrace.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/cli/agent_options.hpp"
#include "seedrl/cli/program.hpp"
#include "seedrl/cli/result_line.hpp"
#include "seedrl/cli/sac_options.hpp"
#include "seedrl/env/by_name.hpp"
#include "seedrl/env/float_pixels.hpp"
#ifdef SEEDRL_CUDA_SESSIONS
#include "seedrl/backend/cuda/backend.hpp"
#endif
#include "seedrl/io/messages.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"
#include "seedrl/session/training_session.hpp"

namespace seedrl::cli {

/// --actors and --envs-per-actor of the in-process programs.
inline void add_actor_options(CommandLine& app, LocalTrainerOptions& run, int max_envs_per_actor) {
  app.option("--actors", run.num_actors, "actor threads").range(1, 256);
  app.option("--envs-per-actor", run.envs_per_actor, "environments each actor steps")
      .range(1, max_envs_per_actor);
  app.option("--evaluation-actors", run.evaluation_actors,
             "extra actors that act greedily (R2D2: epsilon 0.001) and store nothing")
      .range(0, 256);
}

/// Trains `agent` in one process on environments from `make_env(seed)` (or `make_env(seed,
/// evaluation)`, told whether the environment is an evaluation actor's), after a line on stderr
/// saying what runs; stops cleanly on SIGINT/SIGTERM.
template <class Cli, class AgentT, class MakeEnv>
TrainingResult train_agent_in_process(const char* program, const std::string& env_name,
                                      const Cli& cli, LocalTrainerOptions run, const AgentT& agent,
                                      MakeEnv make_env) {
  cli.finish(run, learner_group());
  run.interrupt = stop_on_signals();
  const int rank = group_rank(), ranks = group_size();
  if (rank == 0) {
    std::fprintf(stderr,
                 "%s: %s, agent %s, %d actors x %d envs, unroll %lld, batch %lld, seed %llu%s\n",
                 program, env_name.c_str(), std::string(AgentT::kName).c_str(), run.num_actors,
                 run.envs_per_actor, static_cast<long long>(run.server.unroll_length),
                 static_cast<long long>(cli.batch), static_cast<unsigned long long>(cli.seed),
                 ranks > 1 ? str_cat(", on each of ", ranks, " ranks").c_str() : "");
  }
  // Every rank's actors have environments of their own seeds (actors are fewer than 1024).
  auto envs = [&](std::int32_t a, std::int32_t e) {
    const std::uint64_t seed = environment_seed(cli.seed, std::int64_t{rank} * 1024 + a, e);
    if constexpr (std::is_invocable_v<MakeEnv&, std::uint64_t, bool>) {
      return make_env(seed, a >= run.num_actors);
    } else {
      return make_env(seed);
    }
  };
  if (cli.backend == "cuda") {
#ifdef SEEDRL_CUDA_SESSIONS
    if (!cuda::available()) {
      seedrl::fail("--backend cuda: no usable GPU (", cuda::unavailable_reason(), ")");
    }
    if (rank == 0)
      std::fprintf(stderr, "%s: on %s\n", program, cuda::device_info().describe().c_str());
    return train_locally<AgentT, cuda::Backend>(agent, envs, run);
#else
    seedrl::fail(
        "--backend cuda: this program was built without the CUDA backend (link seedrl::cuda; "
        "seedrl builds it with SEEDRL_WITH_CUDA=ON where nvcc and cuDNN are installed)");
#endif
  }
  return train_locally<AgentT, cpu::Backend>(agent, envs, run);
}

/// Trains the agent `cli` (cli::VTraceCli, cli::R2D2Cli or PpoCli) describes, with `network`,
/// in one process on environments from `make_env(seed)` (train_agent_in_process).
template <class Cli, class MakeEnv>
TrainingResult train_in_process(const char* program, const std::string& env_name, const Cli& cli,
                                LocalTrainerOptions run, nn::NetworkOptions network,
                                MakeEnv make_env) {
  const auto agent = cli.make_agent(std::move(network), run);
  return train_agent_in_process(program, env_name, cli, std::move(run), agent, make_env);
}

/// --game, and --minimal-actions (the game's own actions rather than all six).
inline void add_game_option(CommandLine& app, std::string& game, minatar::Options& options) {
  app.option("--game", game, "MinAtar game").one_of(minatar_games());
  app.option("--minimal-actions", options.minimal_action_set,
             "the game's minimal action set (Breakout 3: no-op, left, right), as MinAtar's "
             "baselines; false: all six actions");
}

/// The MLP Gaussian policy of the continuous-control programs for environments of these specs:
/// `cli`'s hidden sizes, activation and value torso.
inline nn::NetworkOptions box_network(const PpoCli& cli, const TensorSpec& observations,
                                      const ActionSpec& actions) {
  nn::NetworkOptions network = nn::NetworkOptions::mlp(observations.shape.numel(), 0, cli.hidden);
  network.gaussian(actions.dims());
  network.mlp_activation = cli.activation == "tanh" ? nn::Activation::tanh : nn::Activation::relu;
  network.separate_value_torso = cli.value_torso;
  return network;
}

/// The continuous-control programs (pendulum_ppo, mujoco_ppo): trains `--agent` ppo or vtrace on
/// box-action environments from `make_env(seed)` with an MLP Gaussian policy; prints the JSON line
/// and returns the exit status (errors on stderr).
template <class MakeEnv>
int train_box_agent(const char* program, const std::string& env_name, const std::string& agent,
                    const PpoCli& cli, const LocalTrainerOptions& run, MakeEnv make_env) {
  try {
    const auto probe = make_env(0);
    const nn::NetworkOptions network =
        box_network(cli, probe.observation_spec(), probe.action_spec());
    LocalTrainerOptions r = run;
    r.run_info.push_back({"env", env_name});
    const TrainingResult result =
        agent == "vtrace" ? train_agent_in_process(program, env_name, cli, r,
                                                   cli.make_vtrace_agent(network, r), make_env)
                          : train_in_process(program, env_name, cli, r, network, make_env);
    print_result(env_name, cli.seed, result);
    return 0;
  } catch (const std::exception& e) {
    return end_with_error(program, e);
  }
}

/// The body of minatar_vtrace, minatar_ppo and minatar_r2d2: trains the agent `cli` describes on
/// `game` with the MinAtar network, prints the JSON line; returns the exit status (errors on
/// stderr).
template <class Cli>
int train_on_minatar(const char* program, const std::string& game, const Cli& cli,
                     const LocalTrainerOptions& run, const minatar::Options& options = {},
                     const std::vector<std::int64_t>& mlp_hidden = {}) {
  try {
    const TrainingResult result = with_minatar_game(
        game,
        [&](auto make_env) {
          const auto probe = make_env(0);
          if (mlp_hidden.empty())
            return train_in_process(program, game, cli, run,
                                    nn::NetworkOptions::minatar(probe.observation_spec().shape[2],
                                                                probe.action_spec().num_actions),
                                    make_env);
          const auto flat = [make_env](std::uint64_t seed) { return FloatPixels(make_env(seed)); };
          return train_in_process(
              program, game, cli, run,
              nn::NetworkOptions::mlp(probe.observation_spec().shape.numel(),
                                      probe.action_spec().num_actions, mlp_hidden),
              flat);
        },
        options);
    print_result(game, cli.seed, result);
    return 0;
  } catch (const std::exception& e) {
    return end_with_error(program, e);
  }
}

/// The body of the SAC programs (pendulum_sac, mujoco_sac): SAC on box-action environments from
/// `make_env(seed)`; prints the JSON line and returns the exit status (errors on stderr).
template <class MakeEnv>
int train_sac(const char* program, const std::string& env_name, const SacCli& cli,
              LocalTrainerOptions run, MakeEnv make_env) {
  try {
    const auto probe = make_env(0);
    run.run_info.push_back({"env", env_name});
    const SacAgent agent = cli.make_agent(probe.observation_spec(), probe.action_spec(), run);
    const TrainingResult result =
        train_agent_in_process(program, env_name, cli, run, agent, make_env);
    print_result(env_name, cli.seed, result);
    return 0;
  } catch (const std::exception& e) {
    return end_with_error(program, e);
  }
}

}  // namespace seedrl::cli
