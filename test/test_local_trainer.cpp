// The whole runtime in one process, learning for real: CartPole's return rises, Catch is solved,
// a run resumes from its checkpoint (and its figures) and exports its final network as ONNX, an
// error in an environment or an actor stops the run cleanly, and the run's lines go where the host
// says. (Also run under ThreadSanitizer in CI.)
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "seedrl/agents/vtrace.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/env/cartpole.hpp"
#include "seedrl/env/catch.hpp"
#include "seedrl/env/flatten_observation.hpp"
#include "seedrl/io/onnx.hpp"
#include "seedrl/policy/policy.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"
#include "support/example_defaults.hpp"
#include "support/minatar_learning.hpp"
#include "support/printing.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_local_trainer {

using namespace seedrl;
using Backend = cpu::Backend;

namespace {

VTraceAgent agent_for(nn::NetworkOptions network, std::int64_t frames) {
  return VTraceAgent(test::example_vtrace_options(std::move(network), frames));
}

LocalTrainerOptions run_options(std::int64_t frames, std::string logdir = {}) {
  return test::example_run_options(frames, std::move(logdir));
}

}  // namespace

TEST_CASE("train_locally: CartPole's mean return clearly rises" * doctest::test_suite("learning")) {
  const std::int64_t frames = 250000;
  const VTraceAgent agent = agent_for(nn::NetworkOptions::mlp(4, 2), frames);
  const TrainingResult result = train_locally<VTraceAgent, Backend>(
      agent,
      [](std::int32_t a, std::int32_t e) {
        return CartPole(static_cast<std::uint64_t>(1000 * a + e));
      },
      run_options(frames));
  CHECK(result.frames >= frames);
  CHECK(result.episodes > 100);
  CHECK(result.learner_steps > 1000);
  CAPTURE(result.mean_return);
  CHECK(result.mean_return > 150.0);  // a random policy averages about 22
}

TEST_CASE("train_locally: Catch is solved" * doctest::test_suite("learning")) {
  const std::int64_t frames = 250000;
  const VTraceAgent agent = agent_for(nn::NetworkOptions::mlp(50, 3), frames);
  const TrainingResult result =
      train_locally<VTraceAgent, Backend>(agent, test::make_catch, run_options(frames));
  CAPTURE(result.mean_return);
  CHECK(result.mean_return > 0.9);  // random play averages about -0.6
}

TEST_CASE("train_locally: Catch is solved by two learner workers in micro-batches") {
  const std::int64_t frames = 250000;
  const VTraceAgent agent = agent_for(nn::NetworkOptions::mlp(50, 3), frames);
  LocalTrainerOptions run = run_options(frames);
  run.learner_workers = 2;
  run.micro_batches = 4;
  const TrainingResult result = train_locally<VTraceAgent, Backend>(agent, test::make_catch, run);
  CAPTURE(result.mean_return);
  CHECK(result.mean_return > 0.9);
}

TEST_CASE("train_locally: V-trace learns MinAtar Breakout from its pixels" *
          doctest::test_suite("learning")) {
  const TrainingResult result = test::vtrace_learns_breakout<Backend>();
  MESSAGE("Breakout mean return after ", result.frames, " frames: ", result.mean_return);
  CHECK(result.mean_return > test::kVTraceBreakoutReturn);
}

TEST_CASE("train_locally: a run resumes from the checkpoint in its logdir") {
  const auto dir = std::filesystem::temp_directory_path() / "seedrl_test_resume";
  std::filesystem::remove_all(dir);
  const VTraceAgent agent = agent_for(nn::NetworkOptions::mlp(50, 3), 40000);
  const TrainingResult first = train_locally<VTraceAgent, Backend>(
      agent, test::make_catch, run_options(20000, dir.string()));
  CHECK_FALSE(first.resumed);
  CHECK(std::filesystem::exists(dir / "checkpoint.safetensors"));
  CHECK(std::filesystem::exists(dir / "metrics.csv"));
  LocalTrainerOptions resumed = run_options(40000, dir.string());
  resumed.export_onnx = (dir / "agent.onnx").string();
  const TrainingResult second =
      train_locally<VTraceAgent, Backend>(agent, test::make_catch, resumed);
  CHECK(second.resumed);
  {
    // The ONNX export holds the final parameters: those of the final checkpoint.
    std::ifstream in(resumed.export_onnx, std::ios::binary);
    const std::string exported((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    const Policy<> final_policy((dir / "checkpoint.safetensors").string());
    CHECK(exported ==
          io::encode_onnx(final_policy.network().config(), final_policy.network().parameters()));
  }
  CHECK(second.frames >= 40000);
  CHECK(second.frames_this_run < second.frames);  // the frame counter continued from the checkpoint
  CHECK(second.learner_steps > first.learner_steps);
  CHECK(second.episodes > first.episodes);

  // A run resumed at its frame budget ends at once, and still reports the last 100 episodes it
  // stopped with (the window travels in the checkpoint), not 0.
  const TrainingResult third = train_locally<VTraceAgent, Backend>(
      agent, test::make_catch, run_options(40000, dir.string()));
  CHECK(third.resumed);
  // Actors start stepping before the session sees the budget is met: the few steps already in
  // flight (how many depends on scheduling; 128 under ThreadSanitizer) count, a new run does not.
  CHECK(third.frames_this_run < 40000 / 20);
  REQUIRE(third.mean_return.has_value());
  REQUIRE(second.mean_return.has_value());
  CHECK(*third.mean_return == doctest::Approx(*second.mean_return).epsilon(0.05));
  CHECK_FALSE(third.evaluation_mean_return.has_value());  // no evaluation actors: nothing measured
  std::filesystem::remove_all(dir);
}

TEST_CASE("train_locally: the run's lines go to the host's sink; without one it prints nothing") {
  const VTraceAgent agent = agent_for(nn::NetworkOptions::mlp(50, 3), 20000);
  LocalTrainerOptions run = run_options(20000);
  run.report_seconds = 0.01;
  run.run_info = {{"purpose", "test"}};
  std::vector<std::pair<io::MessageKind, std::string>> lines;
  run.messages = [&](io::MessageKind kind, std::string_view line) {
    lines.emplace_back(kind, std::string(line));
  };
  const TrainingResult result = train_locally<VTraceAgent, Backend>(agent, test::make_catch, run);
  REQUIRE(lines.size() >= 2);
  CHECK(lines.front().first == io::MessageKind::info);
  CHECK(lines.front().second == "run: agent=vtrace purpose=test");
  CHECK(lines.back().first == io::MessageKind::done);
  CHECK(lines.back().second.find("frames ") == 0);
  CHECK(lines.back().second.find("| loss ") != std::string::npos);
  CHECK(result.frames >= 20000);

  // Silent by default: the host's stdout and stderr get nothing (both captured into a file).
  std::FILE* capture = std::tmpfile();
  REQUIRE(capture != nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  const int saved_out = ::dup(STDOUT_FILENO), saved_err = ::dup(STDERR_FILENO);
  ::dup2(::fileno(capture), STDOUT_FILENO);
  ::dup2(::fileno(capture), STDERR_FILENO);
  run.messages = nullptr;
  const TrainingResult quiet = train_locally<VTraceAgent, Backend>(agent, test::make_catch, run);
  std::fflush(stdout);
  std::fflush(stderr);
  ::dup2(saved_out, STDOUT_FILENO);
  ::dup2(saved_err, STDERR_FILENO);
  ::close(saved_out);
  ::close(saved_err);
  CHECK(std::ftell(capture) == 0);
  std::fclose(capture);
  CHECK(quiet.frames >= 20000);
}

TEST_CASE("train_locally: an actor that stops on its own ends the run with its reason") {
  // Actor 1's environments produce observations the server does not expect: the server refuses
  // its connection, the actor stops, and the run says why instead of waiting for frames forever.
  struct MaybeWide {  // CartPole, with a fifth (zero) observation entry when `wide`
    CartPole env{1};
    bool wide = false;
    TensorSpec observation_spec() const { return {{wide ? 5 : 4}, DType::f32}; }
    ActionSpec action_spec() const { return env.action_spec(); }
    void reset(const Tensor& obs) {
      obs.fill_zero();
      env.reset(obs.slice(0, 4));
    }
    StepResult step(std::int32_t action, const Tensor& obs) {
      return env.step(action, obs.slice(0, 4));
    }
  };
  const VTraceAgent agent = agent_for(nn::NetworkOptions::mlp(4, 2), 100000);
  auto run = [&] {
    return train_locally<VTraceAgent, Backend>(
        agent,
        [](std::int32_t actor, std::int32_t) {
          return MaybeWide{CartPole(1), actor == 1};
        },
        run_options(1000000));
  };
  CHECK_THROWS_WITH_AS(run(), doctest::Contains("actor 1 stopped: invalid argument"), Error);
}

TEST_CASE("train_locally: an exception in an environment ends the run and reaches the caller") {
  struct Exploding {
    CartPole env{1};
    int steps = 0;
    TensorSpec observation_spec() const { return env.observation_spec(); }
    ActionSpec action_spec() const { return env.action_spec(); }
    void reset(const Tensor& obs) { env.reset(obs); }
    StepResult step(std::int32_t action, const Tensor& obs) {
      if (++steps == 200) throw std::runtime_error("simulator crashed");
      StepResult r = env.step(action, obs);
      return r;
    }
  };
  const VTraceAgent agent = agent_for(nn::NetworkOptions::mlp(4, 2), 100000);
  auto run = [&] {
    return train_locally<VTraceAgent, Backend>(
        agent, [](std::int32_t, std::int32_t) { return Exploding{}; }, run_options(1000000));
  };
  CHECK_THROWS_WITH(run(), doctest::Contains("simulator crashed"));
}

TEST_CASE("train_locally: invalid options are refused naming the setting") {
  const VTraceAgent agent = agent_for(nn::NetworkOptions::mlp(4, 2), 1000);
  LocalTrainerOptions bad = run_options(1000);
  bad.num_actors = 0;
  auto run_bad = [&] {
    return train_locally<VTraceAgent, Backend>(
        agent, [](std::int32_t, std::int32_t) { return CartPole(); }, bad);
  };
  CHECK_THROWS_WITH_AS(run_bad(), doctest::Contains("LocalTrainerOptions.num_actors"), Error);
  bad = run_options(1000);
  bad.learner_workers = 0;
  // The session's fields are named as the struct the host program set them on.
  CHECK_THROWS_WITH_AS(run_bad(), doctest::Contains("LocalTrainerOptions.learner_workers"), Error);
  bad = run_options(1000);
  bad.export_onnx = "/nonexistent-seedrl-directory/agent.onnx";
  CHECK_THROWS_WITH_AS(run_bad(), doctest::Contains("LocalTrainerOptions.export_onnx"), Error);
  // An environment that does not match the network.
  auto run_mismatch = [&] {
    return train_locally<VTraceAgent, Backend>(agent, test::make_catch, run_options(1000));
  };
  CHECK_THROWS_WITH_AS(run_mismatch(),
                       doctest::Contains("do not match the network's observation shape"), Error);
}

}  // namespace test_local_trainer
