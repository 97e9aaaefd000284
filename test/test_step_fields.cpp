// A declared step field end to end: an environment declares and writes it, an actor in another
// thread sends it through a RemoteClient over a socket to a SocketServer, the InferenceServer
// gathers it and keeps it in the unrolls, and a learner stacks them and trains on it: the field
// is its value target. Nothing on the way was told about the field but the spec.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "seedrl/acting/actor.hpp"
#include "seedrl/env/catch.hpp"
#include "seedrl/env/flatten_observation.hpp"
#include "seedrl/io/onnx.hpp"
#include "seedrl/learner/learner_core.hpp"
#include "seedrl/policy/policy.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"
#include "support/example_defaults.hpp"
#include "support/runtime_fixtures.hpp"
#include "support/transport_fixtures.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_step_fields {

using namespace seedrl;
using namespace seedrl::test;

namespace {

// Observation {step / 10, index}; declared fields "count" (i32, the step) and "target" (f32, a
// value for the learner to regress to: 1 + index). Episodes of 5 steps.
struct CountingFieldEnv {
  float index = 0.0f;
  int count = 0;
  TensorSpec observation_spec() const { return {{2}, DType::f32}; }
  ActionSpec action_spec() const { return {3}; }
  std::vector<StepFieldSpec> step_fields() const {
    return {{"count", {{}, DType::i32}}, {"target", {{}, DType::f32}}};
  }
  void reset(const StepRow& row) {
    count = 0;
    write(row);
  }
  StepResult step(std::int32_t, const StepRow& row) {
    ++count;
    write(row);
    return {.reward = 0.0f, .terminated = count == 5, .truncated = false};
  }
  void write(const StepRow& row) const {
    row.observation().data<float>()[0] = static_cast<float>(count) / 10.0f;
    row.observation().data<float>()[1] = index;
    row.field("count").data<std::int32_t>()[0] = count;
    row.field("target").data<float>()[0] = 1.0f + index;
  }
};
static_assert(FieldEnvironment<CountingFieldEnv>);

// Catch with a declared field its network is not given: "columns" f32[5], how much of the
// board is lit in each column.
struct ColumnsCatch {
  Catch game;
  TensorSpec observation_spec() const { return game.observation_spec(); }
  ActionSpec action_spec() const { return game.action_spec(); }
  std::vector<StepFieldSpec> step_fields() const { return {{"columns", {{5}, DType::f32}}}; }
  void reset(const StepRow& row) {
    game.reset(row.observation());
    write(row);
  }
  StepResult step(std::int32_t action, const StepRow& row) {
    const StepResult r = game.step(action, row.observation());
    write(row);
    return r;
  }
  static void write(const StepRow& row) {
    const Tensor board = row.observation();  // [10, 5]
    float* columns = row.field("columns").data<float>();
    for (int c = 0; c < 5; ++c) {
      columns[c] = 0.0f;
      for (int r = 0; r < 10; ++r) columns[c] += board.data<float>()[r * 5 + c];
    }
  }
};

constexpr MetricInfo kValueLoss[] = {{"value_loss"}};

// A learner whose loss is 0.5 (V(s) - target)^2 with `target` the step field of that name, read
// from its batch; it also checks that every cell's fields belong to that cell's step.
class FieldLearner final : public LearnerCore<Backend> {
 public:
  FieldLearner(const VTraceAgent& agent, const UnrollSpec& spec, UnrollQueue& queue)
      : LearnerCore<Backend>("field_test", agent.options(), spec, kValueLoss), queue_(queue) {}

  std::optional<double> step(std::size_t batch) {
    if (!queue_.pop_many(batch, unrolls_)) return std::nullopt;
    const auto in = pass().stack(unrolls_);
    const UnrollBatch& b = pass().batch();
    const Tensor& count = b.field("count");
    const Tensor& target = b.field("target");
    const std::int64_t length = spec().length, n = static_cast<std::int64_t>(unrolls_.size());
    for (std::int64_t i = 0; i < length * n; ++i) {
      const float* obs = b.observations.data<float>() + 2 * i;
      aligned_ = aligned_ && count.data<std::int32_t>()[i] == std::lround(obs[0] * 10.0f) &&
                 target.data<float>()[i] == 1.0f + obs[1];
      cells_ += 1;
    }
    const nn::NetworkOutputs& out = network().forward(in.observations, in.initial_state, in.resets);
    const std::int64_t steps = length - 1;
    Eigen::ArrayXXf grad_values(steps, n);
    double loss = 0.0;
    for (std::int64_t t = 0; t < steps; ++t) {
      for (std::int64_t j = 0; j < n; ++j) {
        const float error = out.values.data<float>()[t * n + j] - target.data<float>()[t * n + j];
        loss += 0.5 * error * error / static_cast<double>(steps * n);
        grad_values(t, j) = error / static_cast<float>(steps * n);
      }
    }
    pass().backward_policy_value(RowMatrixXf::Zero(steps * n, spec().num_actions), grad_values);
    const double values[] = {loss};
    (void)finish_step(values, steps * n, 0.0, true, [] {});
    return loss;
  }

  bool aligned() const { return aligned_; }
  std::int64_t cells() const { return cells_; }

 private:
  UnrollQueue& queue_;
  std::vector<std::unique_ptr<Unroll>> unrolls_;
  bool aligned_ = true;
  std::int64_t cells_ = 0;
};

}  // namespace

namespace {

// CountingFieldEnv's steps served to FieldLearner: inference (unrolls of 4, batches of up to 4)
// behind a socket server whose log the test can read.
struct FieldRun {
  static VTraceAgent agent_of() {
    VTraceAgentOptions o = tiny_agent().options();  // Adam
    o.learning_rate.initial = 0.01;
    return VTraceAgent(o);
  }
  static InferenceServerOptions inference_options() {
    InferenceServerOptions o;
    o.unroll_length = 4;
    o.max_batch = 4;
    return o;
  }
  SocketServerOptions logged() {
    SocketServerOptions o = server_options();
    o.log = log.sink();
    return o;
  }

  const VTraceAgent agent = agent_of();
  const StepSpec spec = step_spec(CountingFieldEnv{});
  UnrollQueue queue{16};
  FieldLearner learner{agent, make_unroll_spec(agent, spec, inference_options()), queue};
  InferenceServer<VTraceAgent, Backend> inference{agent, learner.parameters(), queue, spec,
                                                  inference_options()};
  ServerLog log;
  SocketServer sockets{inference, logged()};

  FieldRun() {
    inference.start();
    sockets.start();
  }
};

}  // namespace

TEST_CASE("Step fields: an environment's field crosses a socket into a learner's batch") {
  FieldRun run;
  auto& learner = run.learner;
  auto& inference = run.inference;
  auto& sockets = run.sockets;

  std::vector<CountingFieldEnv> envs(4);
  for (std::size_t e = 0; e < envs.size(); ++e) envs[e].index = static_cast<float>(e);
  Actor<CountingFieldEnv, RemoteClient> actor(std::move(envs),
                                              RemoteClient(client_options(sockets.address())));
  std::thread acting([&] { CHECK(actor.run().is_ok()); });

  std::vector<double> losses;
  while (losses.size() < 150) {
    const std::optional<double> loss = learner.step(4);
    REQUIRE(loss.has_value());
    losses.push_back(*loss);
  }
  actor.stop();
  inference.stop();
  acting.join();
  sockets.stop();

  CHECK(learner.cells() == 150 * 4 * 5);  // every step of every unroll was read
  CHECK(learner.aligned());
  // The loss read the field: the values went to the targets 1 to 4 that only it carries.
  const double first = (losses[0] + losses[1] + losses[2]) / 3.0;
  const double last = (losses[147] + losses[148] + losses[149]) / 3.0;
  CAPTURE(first);
  CAPTURE(last);
  CHECK(first > 1.0);
  CHECK(last < 0.1 * first);
}

TEST_CASE("Step fields: a field that is not finite is refused for its actor; the others go on") {
  FieldRun run;
  auto& learner = run.learner;
  auto& inference = run.inference;
  auto& sockets = run.sockets;
  auto& log = run.log;
  // The poisoned environment's target goes bad at its third step.
  struct NanTarget : CountingFieldEnv {
    StepResult step(std::int32_t action, const StepRow& row) {
      const StepResult r = CountingFieldEnv::step(action, row);
      if (count == 3) row.field("target").data<float>()[0] = std::nanf("");
      return r;
    }
  };
  Actor<CountingFieldEnv, RemoteClient> good(std::vector<CountingFieldEnv>(2),
                                             RemoteClient(client_options(sockets.address())));
  Actor<NanTarget, RemoteClient> poisoned(std::vector<NanTarget>(1),
                                          RemoteClient(client_options(sockets.address())));
  Status refused;
  std::atomic<bool> poisoned_done{false};
  std::thread acting([&] { CHECK(good.run().is_ok()); });
  std::thread poisoned_acting([&] {
    refused = poisoned.run();
    poisoned_done = true;
  });
  // The learner takes the good actor's unrolls meanwhile: a full queue would hold inference, and
  // with it the poisoned actor's third step and its refusal (the good actor may connect first and
  // fill the queue before the other reaches that step).
  while (!poisoned_done) REQUIRE(learner.step(1).has_value());
  poisoned_acting.join();  // refused for good: the actor stops with the reason
  CHECK(refused.is_invalid_argument());
  CHECK(refused.message().find(
            "environment 0: its step field 'target' holds nan at element 0; values must be "
            "finite") != std::string::npos);
  CHECK(
      log.wait_for({"refused (invalid request): environment 0: its step field 'target' holds "
                    "nan at element 0"}));
  // The good actor's unrolls keep coming.
  for (int i = 0; i < 20; ++i) REQUIRE(learner.step(1).has_value());
  good.stop();
  inference.stop();
  acting.join();
  sockets.stop();
  CHECK(learner.aligned());
}

TEST_CASE("Step fields: an actor whose fields differ from the learner's is refused by name") {
  const VTraceAgent agent = tiny_agent();
  const StepSpec spec = step_spec(CountingFieldEnv{});
  UnrollQueue queue(4);
  nn::Network<Backend> net(agent.network_config());
  SharedParameters parameters(net.parameters());
  InferenceServer<VTraceAgent, Backend> inference(agent, parameters, queue,
                                                  StepSpec{spec.observation, spec.action, {}});
  inference.start();
  SocketServer sockets(inference, server_options());
  sockets.start();
  RemoteClient client(client_options(sockets.address()));
  ConnectRequest request = connect_request(5, 1);
  request.spec = spec;
  const Status refused = client.connect(request);
  CAPTURE(refused);
  CHECK(refused.is_invalid_argument());
  CHECK(refused.message().find("actor step fields are count i32[], target f32[], the server "
                               "expects no fields") != std::string::npos);
  // In process, the same words.
  Connection connection;
  const Status local = inference.connect(request, &connection);
  CHECK(local.is_invalid_argument());
  CHECK(refused.message().find(local.message()) != std::string::npos);
  inference.stop();
  sockets.stop();
}

TEST_CASE("Step fields: a run records them; Policy takes them by the spec; ONNX names them") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / str_cat("seedrl_step_fields_", ::getpid());
  std::filesystem::remove_all(dir);
  const std::int64_t frames = 20000;
  LocalTrainerOptions run = example_run_options(frames, dir.string());
  // The fields pass through FlattenObservation and LocalClient.
  const TrainingResult trained = train_locally<VTraceAgent, Backend>(
      VTraceAgent(example_vtrace_options(nn::NetworkOptions::mlp(50, 3), frames)),
      [](std::int32_t actor, std::int32_t env) {
        return FlattenObservation(
            ColumnsCatch{Catch(static_cast<std::uint64_t>(100 * actor + env))});
      },
      run);
  CHECK(trained.frames >= frames);

  const std::string checkpoint = (dir / "checkpoint.safetensors").string();
  const std::vector<StepFieldSpec> declared = ColumnsCatch{Catch(1)}.step_fields();
  CHECK(describe_checkpoint(checkpoint).step_fields == declared);
  Policy<> policy(checkpoint);
  CHECK(policy.step_fields() == declared);
  const Tensor observations = Tensor::zeros({2, 50});
  CHECK_THROWS_WITH_AS(policy.act(observations),
                       doctest::Contains("steps declare columns f32[5]; act() was given 0 fields"),
                       Error);
  const std::vector<Tensor> wrong = {Tensor::zeros({2, 4})};
  CHECK_THROWS_WITH_AS(policy.act({observations, wrong}),
                       doctest::Contains("step field 'columns' must be f32[2, 5], got f32[2, 4]"),
                       Error);
  const std::vector<Tensor> columns = {Tensor::zeros({2, 5})};
  const std::vector<std::int32_t> actions = policy.act({observations, columns});
  REQUIRE(actions.size() == 2);
  for (std::int32_t a : actions) CHECK((a >= 0 && a < 3));

  io::OnnxExportOptions onnx;
  onnx.step_fields = policy.step_fields();
  const std::string model =
      io::encode_onnx(policy.network_config(), policy.network().parameters(), onnx);
  CHECK(model.find("seedrl.step_fields") != std::string::npos);
  CHECK(model.find("columns f32 5") != std::string::npos);
  CHECK(io::encode_onnx(policy.network_config(), policy.network().parameters())
            .find("seedrl.step_fields") == std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace test_step_fields
