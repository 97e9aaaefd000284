// Actor: what it sends, episode boundaries, statistics, reconnection and stopping.
#include <doctest/doctest.h>

#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "seedrl/acting/actor.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_actor {

using namespace seedrl;

namespace {

// Observation [1] = steps into the episode; reward = the action taken; the episode ends after
// `length` steps, terminated or truncated.
struct CountingEnv {
  int length = 3;
  bool truncate = false;
  int step_count = 0;
  TensorSpec observation_spec() const { return {{1}, DType::f32}; }
  ActionSpec action_spec() const { return {2}; }
  void reset(const Tensor& obs) {
    step_count = 0;
    obs.data<float>()[0] = 0.0f;
  }
  StepResult step(std::int32_t action, const Tensor& obs) {
    ++step_count;
    obs.data<float>()[0] = static_cast<float>(step_count);
    StepResult r;
    r.reward = static_cast<float>(action);
    if (step_count == length) (truncate ? r.truncated : r.terminated) = true;
    return r;
  }
};
static_assert(Environment<CountingEnv>);
static_assert(!FieldEnvironment<CountingEnv>);

// CountingEnv with two declared fields it writes at every reset and step: "countdown" (i32, the
// steps left in the episode) and "goal" (f32[2]: the environment's index and the step count).
struct FieldEnv : CountingEnv {
  float index = 0.0f;
  std::vector<StepFieldSpec> step_fields() const {
    return {{"countdown", {{}, DType::i32}}, {"goal", {{2}, DType::f32}}};
  }
  void reset(const StepRow& row) {
    CountingEnv::reset(row.observation());
    write(row);
  }
  StepResult step(std::int32_t action, const StepRow& row) {
    const StepResult r = CountingEnv::step(action, row.observation());
    write(row);
    return r;
  }
  void write(const StepRow& row) const {
    row.field("countdown").data<std::int32_t>()[0] = length - step_count;
    row.field(1).data<float>()[0] = index;
    row.field(1).data<float>()[1] = static_cast<float>(step_count);
  }
};
static_assert(FieldEnvironment<FieldEnv> && Environment<FieldEnv>);

struct Sent {
  std::uint64_t run_id;
  std::vector<float> observations, rewards;
  std::vector<std::uint8_t> flags;
  std::vector<std::int32_t> countdown;  // FieldEnv's fields, where the step has them
  std::vector<float> goal;
};

// A client that records what the actor sends and answers with action 1, failing on demand.
struct ScriptedClient {
  struct State {
    std::mutex mutex;
    std::vector<std::uint64_t> connects;
    std::vector<Sent> steps;
    StepSpec spec;     // of the last connect
    int fail_at = -1;  // step index answered with `failure`
    Status failure;
    int stop_after = 1 << 30;  // then stop the actor
    std::function<void()> stop;
  };
  std::shared_ptr<State> state = std::make_shared<State>();
  std::uint64_t run_id = 0;

  Status connect(const ConnectRequest& r) {
    std::lock_guard lock(state->mutex);
    run_id = r.run_id;
    state->connects.push_back(r.run_id);
    state->spec = r.spec;
    return Status::ok();
  }
  Status step(const StepRecord& step, std::span<std::int32_t> actions) {
    std::lock_guard lock(state->mutex);
    const Tensor& obs = step.observations;
    Sent s{run_id,
           {},
           {step.rewards.begin(), step.rewards.end()},
           {step.flags.begin(), step.flags.end()},
           {},
           {}};
    for (std::int64_t i = 0; i < obs.numel(); ++i) s.observations.push_back(obs.data<float>()[i]);
    if (step.fields.size() == 2) {
      const auto countdown = step.fields[0].flat<std::int32_t>();
      const auto goal = step.fields[1].flat<float>();
      s.countdown.assign(countdown.begin(), countdown.end());
      s.goal.assign(goal.begin(), goal.end());
    }
    state->steps.push_back(std::move(s));
    const int index = static_cast<int>(state->steps.size()) - 1;
    if (index == state->fail_at) return state->failure;
    if (index + 1 >= state->stop_after && state->stop) state->stop();
    for (auto& a : actions) a = 1;
    return Status::ok();
  }
  void disconnect() {}
};
static_assert(InferenceClient<ScriptedClient>);

}  // namespace

TEST_CASE("Actor: first steps, episode ends and resets as the server sees them") {
  ScriptedClient client;
  auto state = client.state;
  Actor<CountingEnv, ScriptedClient> actor({CountingEnv{3, false}, CountingEnv{2, true}}, client);
  state->stop_after = 8;
  state->stop = [&] { actor.stop(); };
  CHECK(actor.run().is_ok());
  REQUIRE(state->steps.size() == 8);
  REQUIRE(state->connects.size() == 1);
  CHECK(state->connects[0] != 0);
  const auto& s = state->steps;
  // Env 0 (3 steps, terminated): F(0) 1 2 T(3) | F(0) 1 2 T(3)
  const std::uint8_t F = step_flags::kFirst, T = step_flags::kTerminated,
                     U = step_flags::kTruncated;
  const std::uint8_t env0[8] = {F, 0, 0, T, F, 0, 0, T};
  const std::uint8_t env1[8] = {F, 0, U, F, 0, U, F, 0};  // env 1 (2 steps, truncated)
  for (int i = 0; i < 8; ++i) {
    CAPTURE(i);
    CHECK(s[static_cast<std::size_t>(i)].flags[0] == env0[i]);
    CHECK(s[static_cast<std::size_t>(i)].flags[1] == env1[i]);
    CHECK(s[static_cast<std::size_t>(i)].run_id == state->connects[0]);
    // A first step has reward 0 and the reset observation; otherwise reward = action = 1.
    CHECK(s[static_cast<std::size_t>(i)].rewards[0] == (env0[i] == F ? 0.0f : 1.0f));
    if (env0[i] == F) CHECK(s[static_cast<std::size_t>(i)].observations[0] == 0.0f);
  }
  // The action returned for a last step was not executed: the next observation is a reset one.
  CHECK(s[4].observations[0] == 0.0f);
  // The actor also steps its environments with the answer to the eighth request before it stops:
  // env 0 finishes 2 episodes (return 3 each), env 1 finishes 3 (return 2 each) in 12 env steps.
  const ActorStats stats = actor.stats();
  CHECK(stats.episodes == 5);
  CHECK(stats.mean_return == doctest::Approx((3 + 3 + 2 + 2 + 2) / 5.0));
  CHECK(stats.frames == 12);
}

TEST_CASE("Actor: a lost connection is retried with a new run id; closed ends the run") {
  ScriptedClient client;
  auto state = client.state;
  ActorOptions options;
  options.initial_backoff = std::chrono::milliseconds(1);
  Actor<CountingEnv, ScriptedClient> actor({CountingEnv{}}, client, options);
  state->fail_at = 2;
  state->failure = Status::unavailable("connection reset");
  state->stop_after = 6;
  state->stop = [&] {
    state->fail_at = 6;
    state->failure = Status::closed("server gone");
  };
  const Status result = actor.run();
  CHECK(result.is_closed());
  REQUIRE(state->connects.size() == 2);
  CHECK(state->connects[0] != state->connects[1]);
  // After reconnecting, the environment restarts: the first step of the new run is a first step.
  CHECK(state->steps[3].flags[0] == step_flags::kFirst);
  CHECK(state->steps[3].run_id == state->connects[1]);
  CHECK(actor.stats().connections == 2);
}

TEST_CASE("Actor: stop() from another thread ends run() promptly") {
  ScriptedClient client;
  Actor<CountingEnv, ScriptedClient> actor({CountingEnv{}, CountingEnv{}}, client);
  std::thread runner([&] { CHECK(actor.run().is_ok()); });
  while (actor.stats().frames < 100) std::this_thread::yield();
  actor.stop();
  runner.join();
  CHECK(new_run_id() != new_run_id());
  CHECK_THROWS_WITH_AS((Actor<CountingEnv, ScriptedClient>({}, client)),
                       doctest::Contains("Actor: no environments"), Error);
}

TEST_CASE("Actor: declared step fields travel in the step record, written by each environment") {
  ScriptedClient client;
  auto state = client.state;
  FieldEnv a, b;
  a.index = 0.0f;
  b.index = 1.0f;
  b.length = 2;
  Actor<FieldEnv, ScriptedClient> actor({a, b}, client);
  CHECK(actor.step_spec().fields == a.step_fields());
  state->stop_after = 4;
  state->stop = [&] { actor.stop(); };
  CHECK(actor.run().is_ok());
  CHECK(state->spec == step_spec(a));
  REQUIRE(state->steps.size() == 4);
  // Env 0 (3 steps): countdown 3 2 1 0, goal (0, step); env 1 (2 steps): 2 1 0 | 2 after a reset.
  const std::int32_t countdown0[4] = {3, 2, 1, 0}, countdown1[4] = {2, 1, 0, 2};
  const float steps1[4] = {0, 1, 2, 0};
  for (std::size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    const Sent& sent = state->steps[i];
    REQUIRE(sent.countdown.size() == 2);
    REQUIRE(sent.goal.size() == 4);
    CHECK(sent.countdown[0] == countdown0[i]);
    CHECK(sent.countdown[1] == countdown1[i]);
    CHECK(sent.goal[0] == 0.0f);
    CHECK(sent.goal[1] == static_cast<float>(i));
    CHECK(sent.goal[2] == 1.0f);
    CHECK(sent.goal[3] == steps1[i]);
  }
}

TEST_CASE("Actor: environments with other fields are refused; an undeclared field by name") {
  // Fields a run-time setting decides: two environments of one type may still differ.
  struct Configurable : FieldEnv {
    bool with_goal = true;
    std::vector<StepFieldSpec> step_fields() const {
      std::vector<StepFieldSpec> f = FieldEnv::step_fields();
      if (!with_goal) f.pop_back();
      return f;
    }
  };
  Configurable without;
  without.with_goal = false;
  ScriptedClient client;
  CHECK_THROWS_WITH_AS((Actor<Configurable, ScriptedClient>({Configurable{}, without}, client)),
                       doctest::Contains("Actor: environments with different step specs"), Error);
  struct BadName : FieldEnv {
    std::vector<StepFieldSpec> step_fields() const { return {{"Goal", {{2}, DType::f32}}}; }
  };
  CHECK_THROWS_WITH_AS((Actor<BadName, ScriptedClient>({BadName{}}, client)),
                       doctest::Contains("step field 0 is named 'Goal'"), Error);
  struct Reserved : FieldEnv {
    std::vector<StepFieldSpec> step_fields() const { return {{"reward", {{}, DType::f32}}}; }
  };
  CHECK_THROWS_WITH_AS((Actor<Reserved, ScriptedClient>({Reserved{}}, client)),
                       doctest::Contains("step field 'reward' has the name of a part every step"),
                       Error);

  const std::vector<StepFieldSpec> fields = FieldEnv{}.step_fields();
  const Tensor observation = Tensor::zeros({1, 1});
  const std::vector<Tensor> batches = {Tensor::zeros({1}, DType::i32), Tensor::zeros({1, 2})};
  const StepRow row(observation[0], fields, batches, 0);
  CHECK_THROWS_WITH_AS(row.field("mask"),
                       doctest::Contains("no step field 'mask' is declared (countdown i32[], "
                                         "goal f32[2])"),
                       Error);
}

}  // namespace test_actor
