// TrainingSession's guard of a run's checkpoints: a corrupted newest checkpoint is skipped for
// the one before it (and the run learns on from there), and a run whose learning has stopped
// (every step skipped: parameters or loss not finite) ends with an error that says what and since
// when, writing nothing over the good checkpoints. (Also run under ThreadSanitizer in CI.)
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "seedrl/agents/vtrace.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/core/atomic_file.hpp"
#include "seedrl/core/binary_io.hpp"
#include "seedrl/io/safetensors.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"
#include "support/example_defaults.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_training_session {

using namespace seedrl;
using Backend = cpu::Backend;

namespace {

VTraceAgent catch_agent(std::int64_t frames) {
  return VTraceAgent(test::example_vtrace_options(nn::NetworkOptions::mlp(50, 3), frames));
}

std::filesystem::path fresh_directory(const char* name) {
  const auto dir = std::filesystem::temp_directory_path() / name;
  std::filesystem::remove_all(dir);
  return dir;
}

// Overwrites 4 bytes in the middle of the data of `path`'s largest tensor, as a bad disk or copy
// would (the scenario of the issue that asked for checksums).
void corrupt_data(const std::string& path) {
  std::string bytes = read_file(path);
  const io::SafetensorsFile file = io::SafetensorsFile::parse(bytes, path);
  const io::SafetensorsFile::Entry* largest = &file.entries().front();
  std::size_t data_bytes = 0;
  for (const auto& e : file.entries()) {
    if (e.end - e.begin > largest->end - largest->begin) largest = &e;
    data_bytes = std::max(data_bytes, e.end);
  }
  const std::size_t at = bytes.size() - data_bytes + (largest->begin + largest->end) / 2 / 4 * 4;
  const float nan = std::nanf("");
  std::memcpy(bytes.data() + at, &nan, 4);
  write_file_atomically(path, bytes);
}

// Catch with its observations replaced by 3e38: finite (a NaN would be refused at the server),
// but the network's sums overflow, so that the loss of every step is not finite.
struct PoisonedCatch {
  FlattenObservation<Catch> inner;
  TensorSpec observation_spec() const { return inner.observation_spec(); }
  ActionSpec action_spec() const { return inner.action_spec(); }
  void reset(const Tensor& observation) {
    inner.reset(observation);
    observation.flat<float>().setConstant(3e38f);
  }
  StepResult step(std::int32_t action, const Tensor& observation) {
    const StepResult result = inner.step(action, observation);
    observation.flat<float>().setConstant(3e38f);
    return result;
  }
};

}  // namespace

TEST_CASE(
    "TrainingSession: a corrupted newest checkpoint is skipped; the run resumes from the "
    "previous one and learns") {
  const auto dir = fresh_directory("seedrl_test_session_fallback");
  const VTraceAgent agent = catch_agent(120000);
  const std::string newest = (dir / "checkpoint.safetensors").string();
  const TrainingResult first = train_locally<VTraceAgent, Backend>(
      agent, test::make_catch, test::example_run_options(20000, dir.string()));
  // The second run goes on past wherever the first stopped (a loaded machine overshoots 20,000
  // frames by a batch or more), so that its checkpoint differs from the first's.
  const TrainingResult second = train_locally<VTraceAgent, Backend>(
      agent, test::make_catch, test::example_run_options(first.frames + 10000, dir.string()));
  REQUIRE(second.resumed);
  REQUIRE(second.frames > first.frames);
  REQUIRE(io::checkpoint_generations(newest).size() == 2);
  corrupt_data(newest);

  LocalTrainerOptions third = test::example_run_options(120000, dir.string());
  std::vector<std::string> lines;
  third.messages = [&](io::MessageKind, std::string_view line) { lines.emplace_back(line); };
  const TrainingResult result = train_locally<VTraceAgent, Backend>(agent, test::make_catch, third);
  CHECK(result.resumed);
  const std::string previous = io::checkpoint_generation(newest, 1);
  bool said_skipped = false, said_resumed = false;
  for (const std::string& line : lines) {
    said_skipped = said_skipped || (line.find("skipped a newer checkpoint that does not load: " +
                                              newest) != std::string::npos &&
                                    line.find("fails its checksum") != std::string::npos);
    said_resumed = said_resumed || line.find("resumed from " + previous) != std::string::npos;
  }
  CAPTURE(lines);
  CHECK(said_skipped);
  CHECK(said_resumed);
  // It went on from the first run's counters (the previous generation), not from zero.
  CHECK(result.frames - result.frames_this_run >= first.frames);
  CHECK(result.frames - result.frames_this_run < second.frames);
  CAPTURE(result.mean_return);
  CHECK(result.mean_return > 0.5);  // learning went on: random play averages about -0.6
  // Three generations now: this run's end, then the two it found (the corrupt one among them).
  CHECK(io::checkpoint_generations(newest).size() == 3);
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "TrainingSession: parameters that are not finite stop the run with what and since "
    "when, and no checkpoint is written over the good ones") {
  const auto dir = fresh_directory("seedrl_test_session_stopped");
  const VTraceAgent agent = catch_agent(20000);
  const TrainingResult first = train_locally<VTraceAgent, Backend>(
      agent, test::make_catch, test::example_run_options(10000, dir.string()));
  const std::string path = (dir / "checkpoint.safetensors").string();
  const std::string good = read_file(path);

  // Far more frames than 20 skipped steps take, counted from wherever the first run stopped (under
  // load it overshoots its budget, and a second run with little left to do would finish, and try
  // its final checkpoint, before the learner had skipped 20 steps).
  LocalTrainerOptions options = test::example_run_options(first.frames + 200000, dir.string());
  options.max_skipped_steps = 20;
  options.num_actors = 1;
  const TrainingSessionOptions session_options = options.session();
  const auto probe = test::make_catch(0, 0);
  TrainingSession<VTraceAgent, Backend> session(agent, probe.observation_spec(),
                                                probe.action_spec(), session_options);
  REQUIRE(session.resumed());
  // A weight of a head goes bad after the resume (nothing else runs yet); a new version, as after
  // any write. (In a torso, a ReLU can hide a bad weight: max(0, NaN) is 0 in vector code.)
  nn::ParameterStore& parameters = session.learner().network().parameters();
  const nn::Parameter& poisoned = parameters.parameters().back();
  poisoned.value.data<float>()[0] = std::nanf("");
  parameters.bump_version();

  std::vector<FlattenObservation<Catch>> envs;
  for (std::int32_t e = 0; e < options.envs_per_actor; ++e) envs.push_back(test::make_catch(0, e));
  ActorOptions actor_options;
  actor_options.first_slot = 0;
  Actor<FlattenObservation<Catch>, LocalClient> actor(std::move(envs),
                                                      LocalClient(session.server()), actor_options);
  std::thread actor_thread([&] { (void)actor.run(); });
  std::string message;
  try {
    TrainingHooks hooks;
    hooks.stop_sources = [&](bool) { actor.stop(); };
    hooks.join_sources = [&] { actor_thread.join(); };
    session.run(hooks);
  } catch (const Error& e) {
    message = e.what();
  }
  if (actor_thread.joinable()) actor_thread.join();
  CAPTURE(message);
  CHECK(message.find("learning has stopped: the learner skipped 20 steps in a row since learner "
                     "step " +
                     std::to_string(first.learner_steps)) != std::string::npos);
  CHECK(message.find("; at the first, the parameters are not finite ('" + poisoned.name +
                     "' holds nan at element 0)") != std::string::npos);
  // The good checkpoint is as it was, and no other was written.
  CHECK(read_file(path) == good);
  CHECK(io::checkpoint_generations(path).size() == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("TrainingSession: a loss that is never finite stops the run naming the loss") {
  LocalTrainerOptions options = test::example_run_options(200000);
  options.max_skipped_steps = 10;
  std::string message;
  try {
    train_locally<VTraceAgent, Backend>(
        catch_agent(200000),
        [](std::int32_t a, std::int32_t e) { return PoisonedCatch{test::make_catch(a, e)}; },
        options);
  } catch (const Error& e) {
    message = e.what();
  }
  CAPTURE(message);
  CHECK(message.find("learning has stopped: the learner skipped 10 steps in a row since learner "
                     "step 0; at the first, the ") == 0);
  CHECK(message.find(" are not finite") != std::string::npos);
}

}  // namespace test_training_session
