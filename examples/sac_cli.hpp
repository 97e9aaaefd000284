// The body of the SAC programs (pendulum_sac, mujoco_sac), on SAC's command-line options
// (seedrl/cli/sac_options.hpp: CleanRL's sac_continuous_action settings by default) and cli.hpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "seedrl/agents/sac.hpp"
#include "seedrl/cli/sac_options.hpp"

namespace seedrl::examples {

/// The body of the SAC programs: SAC on box-action environments from `make_env(seed)`; prints the
/// JSON line and returns the exit status (errors on stderr).
template <class MakeEnv>
int train_sac(const char* program, const std::string& env_name, const cli::SacCli& cli,
              LocalTrainerOptions run, MakeEnv make_env) {
  try {
    const auto probe = make_env(0);
    run.run_info.push_back({"env", env_name});
    const SacAgent agent = cli.make_agent(probe.observation_spec(), probe.action_spec(), run);
    const TrainingResult result =
        train_agent_in_process(program, env_name, cli, run, agent, make_env);
    cli::print_result(env_name, cli.seed, result);
    return 0;
  } catch (const std::exception& e) {
    return fail(program, e);
  }
}

}  // namespace seedrl::examples
