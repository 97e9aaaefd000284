// R2D2 end to end, in one process: the agent learns Catch and MinAtar Breakout through the whole
// runtime (actors, batched inference with per-slot exploration, prioritized sequence replay,
// learner); evaluation actors store nothing; the run records what it is in run_info.json; the
// actor priorities and learner workers learn too.
#include <doctest/doctest.h>

#include <filesystem>

#include "seedrl/agents/r2d2.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/core/binary_io.hpp"
#include "seedrl/env/catch.hpp"
#include "seedrl/env/flatten_observation.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"
#include "support/minatar_learning.hpp"
#include "support/printing.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_r2d2_training {

using namespace seedrl;
using Backend = cpu::Backend;

TEST_CASE("R2D2 learns Catch; greedy evaluation actors store nothing") {
  const std::int64_t frames = 200000;
  LocalTrainerOptions run = test::r2d2_test_run(frames, 10, 2);
  run.evaluation_actors = 1;
  const auto dir = std::filesystem::temp_directory_path() / "seedrl_test_r2d2_catch";
  std::filesystem::remove_all(dir);
  run.logdir = dir.string();
  run.run_info = {{"environment", "catch"}};
  const R2D2Agent agent(test::r2d2_test_options(nn::NetworkOptions::mlp(50, 3, {64}), 32));
  const TrainingResult result = train_locally<R2D2Agent, Backend>(
      agent,
      [](std::int32_t a, std::int32_t e) {
        return FlattenObservation(Catch(static_cast<std::uint64_t>(100 * a + e)));
      },
      run);
  MESSAGE("Catch after ", result.frames, " frames: training ", result.mean_return, ", evaluation ",
          result.evaluation_mean_return, ", learner steps ", result.learner_steps);
  CHECK(result.mean_return > 0.6);  // training actors explore (epsilon up to 0.4)
  CHECK(result.evaluation_mean_return > 0.8);
  CHECK(result.frames >= frames);
  const std::string info = read_file((dir / "run_info.json").string());
  CHECK(info.find("\"agent\": \"r2d2\"") != std::string::npos);
  CHECK(info.find("\"environment\": \"catch\"") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("R2D2 learns Catch with actor priorities on two learner workers" *
          doctest::test_suite("learning")) {
  const std::int64_t frames = 200000;
  LocalTrainerOptions run = test::r2d2_test_run(frames, 10, 2);
  run.learner_workers = 2;  // micro-batches of 8 sequences
  R2D2AgentOptions o = test::r2d2_test_options(nn::NetworkOptions::mlp(50, 3, {64}), 32);
  o.actor_priorities = true;
  const TrainingResult result = train_locally<R2D2Agent, Backend>(
      R2D2Agent(o),
      [](std::int32_t a, std::int32_t e) {
        return FlattenObservation(Catch(static_cast<std::uint64_t>(100 * a + e)));
      },
      run);
  MESSAGE("Catch with actor priorities after ", result.frames, " frames: ", result.mean_return);
  CHECK(result.mean_return > 0.6);
  CHECK(result.frames >= frames);
}

TEST_CASE("R2D2 learns MinAtar Breakout from its pixels" * doctest::test_suite("learning")) {
  const TrainingResult result = test::r2d2_learns_breakout<Backend>();
  MESSAGE("Breakout after ", result.frames, " frames: ", result.mean_return, ", learner steps ",
          result.learner_steps);
  CHECK(result.mean_return > test::kR2D2BreakoutReturn);
}

}  // namespace test_r2d2_training
