// The Agent contract and the learner core from outside the library: examples/a2c_agent.hpp adds
// an agent (A2C) in one header, as docs/runtime.md shows, and it trains like the built-in ones.
#include <doctest/doctest.h>

#include <filesystem>

#include "a2c_agent.hpp"
#include "corridor_env.hpp"
#include "seedrl/io/safetensors.hpp"
#include "support/printing.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_agent_contract {

using namespace seedrl;

namespace {

a2c::A2CAgent corridor_agent() {
  a2c::A2CAgentOptions o;
  o.network = nn::NetworkOptions::mlp(8, 2, {32});
  o.network.seed = 1;
  o.batch_size = 8;
  o.optimizer.kind = nn::OptimizerKind::rmsprop;
  o.learning_rate = {3e-3, 0, 0.0};
  return a2c::A2CAgent(o);
}

}  // namespace

// What satisfies the contract, and what does not.
static_assert(Agent<VTraceAgent> && Agent<R2D2Agent> && Agent<a2c::A2CAgent>);
static_assert(!Agent<int> && !Agent<VTraceAgentOptions>);
static_assert(LearnerOf<Learner<a2c::A2CAgent, cpu::Backend>, a2c::A2CAgent>);
static_assert(LearnerOf<Learner<VTraceAgent, cpu::Backend>, VTraceAgent>);
static_assert(LearnerOf<Learner<R2D2Agent, cpu::Backend>, R2D2Agent>);

TEST_CASE("A2C, an agent defined outside the library, learns the corridor with train_locally") {
  const auto dir = std::filesystem::temp_directory_path() / "seedrl_test_a2c";
  std::filesystem::remove_all(dir);
  LocalTrainerOptions run;
  run.total_frames = 60'000;
  run.num_actors = 2;
  run.envs_per_actor = 8;
  run.server.unroll_length = 20;
  run.server.seed = 1;
  run.logdir = dir.string();
  const TrainingResult result = train_locally<a2c::A2CAgent, cpu::Backend>(
      corridor_agent(),
      [](std::int32_t actor, std::int32_t env) {
        return corridor::CorridorEnv(static_cast<std::uint64_t>(100 * actor + env), {8, false});
      },
      run);
  MESSAGE("A2C corridor mean return ", result.mean_return, " after ", result.frames, " frames");
  // Walking right takes 7 steps: 1 - 6 x 0.01 = 0.94. A random walk is mostly cut off at 32 steps.
  CHECK(result.mean_return > 0.85);
  CHECK(result.learner_steps > 100);

  // The core wrote its checkpoint under the agent's name, and the metrics file has the A2C
  // learner's own columns next to the common ones.
  const io::SafetensorsFile checkpoint = io::SafetensorsFile::read(checkpoint_path(dir.string()));
  CHECK(checkpoint.metadata().at("agent") == "a2c");
  const std::string csv = read_file((dir / "metrics.csv").string());
  const std::string header = csv.substr(0, csv.find('\n'));
  CHECK(header.find(",total_loss,entropy,grad_norm,learning_rate,policy_lag,transitions,"
                    "skipped_steps,") != std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace test_agent_contract
