// corridor_a2c: an agent of your own (A2C, examples/a2c_agent.hpp) trained like the built-in ones
// on the tutorial environment (examples/corridor_env.hpp). docs/runtime.md ("Adding an agent")
// walks through the agent; this is the program around it.
//
//   corridor_a2c [--frames 60000] [--length 8] [--seed 1] [--logdir DIR]
//
// The checkpoint (in --logdir) records the agent's name, "a2c", and metrics.csv has its learner's
// own columns beside the common ones; the last line of stdout is the JSON line of the examples.
#include <string>

#include "a2c_agent.hpp"
#include "corridor_env.hpp"
#include "seedrl/cli/command_line.hpp"
#include "seedrl/cli/program.hpp"
#include "seedrl/cli/result_line.hpp"
#include "seedrl/seedrl.hpp"

// What satisfies the contract: A2C is an Agent, and its Learner a learner of it, like V-trace's.
static_assert(seedrl::Agent<a2c::A2CAgent> && seedrl::Agent<seedrl::VTraceAgent>);
static_assert(!seedrl::Agent<int> && !seedrl::Agent<a2c::A2CAgentOptions>);
static_assert(
    seedrl::LearnerOf<seedrl::Learner<a2c::A2CAgent, seedrl::cpu::Backend>, a2c::A2CAgent>);

int main(int argc, char** argv) {
  seedrl::cli::CommandLine app("A2C, an agent defined outside the library, on the corridor");
  std::int64_t frames = 60'000;
  std::int32_t length = 8;
  std::uint64_t seed = 1;
  std::string logdir;
  app.option("--frames", frames, "environment frames to train for").positive();
  app.option("--length", length, "corridor length").range(2, 1000);
  app.option("--seed", seed, "seed");
  app.option("--logdir", logdir, "write the checkpoint and metrics.csv here");
  if (const auto exit = app.parse(argc, argv)) return *exit;

  try {
    a2c::A2CAgentOptions agent;
    agent.network = seedrl::nn::NetworkOptions::mlp(length, 2, {32});
    agent.network.seed = seed;
    agent.batch_size = 8;
    agent.optimizer.kind = seedrl::nn::OptimizerKind::rmsprop;
    agent.learning_rate = {3e-3, 0, 0.0};

    seedrl::LocalTrainerOptions run;
    run.total_frames = frames;
    run.num_actors = 2;
    run.envs_per_actor = 8;
    run.server.unroll_length = 20;
    run.server.seed = seed;
    run.logdir = logdir;
    run.messages = seedrl::io::console_sink();
    run.interrupt = seedrl::cli::stop_on_signals();
    const seedrl::TrainingResult result =
        seedrl::train_locally<a2c::A2CAgent, seedrl::cpu::Backend>(
            a2c::A2CAgent(agent),
            [&](std::int32_t actor, std::int32_t env) {
              return corridor::CorridorEnv(
                  seed * 1000 + static_cast<std::uint64_t>(100 * actor + env), {length, false});
            },
            run);
    seedrl::cli::print_result("corridor", seed, result);
    return 0;
  } catch (const std::exception& e) {
    return seedrl::cli::end_with_error("corridor_a2c", e);
  }
}
