// The C ABI (include/seedrl/capi/seedrl.h, libseedrl_c.so) as a C program calls it, against a
// SocketServer on this machine: bad settings, a wrong token, another spec and a learner that is
// not there come back as statuses with messages naming the problem (no crash, nothing thrown);
// a connected actor's steps carry its buffers and bring the actions; the learner's end is
// SEEDRL_CLOSED. (Also run under AddressSanitizer in CI.)
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "seedrl/agents/vtrace.hpp"
#include "seedrl/capi/seedrl.h"
#include "seedrl/inference/inference_server.hpp"
#include "seedrl/policy/policy.hpp"
#include "seedrl/transport/socket_server.hpp"
#include "support/temp_dir.hpp"
#include "support/transport_fixtures.hpp"

namespace test_capi {

using namespace seedrl;
using namespace seedrl::test;

bool says(const char* part) {
  return std::string(seedrl_last_error()).find(part) != std::string::npos;
}

// An actor of `envs` environments for the FakeEndpoint's spec (f32 [2], 3 actions) at `address`.
seedrl_actor* fake_actor(const std::string& address, const char* token, std::int32_t envs,
                         std::int32_t actions = 3) {
  seedrl_actor_options o;
  seedrl_actor_options_init(&o);
  o.address = address.c_str();
  o.token = token;
  o.num_envs = envs;
  o.connect_timeout_ms = 2000;
  seedrl_actor* actor = nullptr;
  REQUIRE(seedrl_actor_create(&o, &actor) == SEEDRL_OK);
  const std::int64_t dims[1] = {2};
  REQUIRE(seedrl_actor_observation(actor, SEEDRL_F32, 1, dims) == SEEDRL_OK);
  REQUIRE(seedrl_actor_discrete_actions(actor, actions) == SEEDRL_OK);
  return actor;
}

TEST_CASE("C ABI: bad settings are statuses naming the setting, before anything connects") {
  CHECK(seedrl_abi_version() == SEEDRL_C_ABI_VERSION);
  CHECK(std::string(seedrl_status_name(SEEDRL_UNAVAILABLE)) == "unavailable");
  seedrl_actor_options o;
  seedrl_actor_options_init(&o);
  seedrl_actor* actor = reinterpret_cast<seedrl_actor*>(&o);  // overwritten with NULL on failure
  o.num_envs = 0;
  CHECK(seedrl_actor_create(&o, &actor) == SEEDRL_INVALID_ARGUMENT);
  CHECK(actor == nullptr);
  CHECK(says("num_envs"));
  o.num_envs = 1;
  o.address = "no-port";
  CHECK(seedrl_actor_create(&o, &actor) == SEEDRL_INVALID_ARGUMENT);
  CHECK(says("no-port"));
  o.address = "127.0.0.1:1";
  o.token_file = "/nonexistent/token";
  CHECK(seedrl_actor_create(&o, &actor) == SEEDRL_INVALID_ARGUMENT);
  CHECK(says("/nonexistent/token"));
  CHECK(seedrl_actor_create(nullptr, &actor) == SEEDRL_INVALID_ARGUMENT);

  o.token_file = nullptr;
  REQUIRE(seedrl_actor_create(&o, &actor) == SEEDRL_OK);
  const std::int64_t bad_dims[2] = {4, 0};
  CHECK(seedrl_actor_observation(actor, SEEDRL_F32, 2, bad_dims) == SEEDRL_INVALID_ARGUMENT);
  CHECK(says("dimension 1"));
  CHECK(seedrl_actor_observation(actor, 7, 0, nullptr) == SEEDRL_INVALID_ARGUMENT);
  CHECK(says("dtype"));
  CHECK(seedrl_actor_discrete_actions(actor, 0) == SEEDRL_INVALID_ARGUMENT);
  const float low[1] = {1.0f}, high[1] = {-1.0f};
  CHECK(seedrl_actor_box_actions(actor, 1, low, high) == SEEDRL_INVALID_ARGUMENT);
  // Connecting without a spec says which part is missing; stepping unconnected says so.
  CHECK(seedrl_actor_connect(actor, 0) == SEEDRL_INVALID_ARGUMENT);
  CHECK(says("seedrl_actor_observation"));
  float reward = 0.0f, observation[2] = {0.0f, 0.0f};
  std::uint8_t flag = SEEDRL_FLAG_FIRST;
  std::int32_t action = -1;
  CHECK(seedrl_actor_step(actor, &reward, &flag, observation, nullptr, &action) ==
        SEEDRL_UNAVAILABLE);
  CHECK(seedrl_actor_step(actor, nullptr, &flag, observation, nullptr, &action) ==
        SEEDRL_INVALID_ARGUMENT);
  seedrl_actor_destroy(actor);
  seedrl_actor_destroy(nullptr);
}

TEST_CASE("C ABI: a wrong token, another spec, and no learner at all") {
  FakeEndpoint endpoint;
  SocketServer server(endpoint, server_options());
  server.start();
  const std::string address = server.address().to_string();

  seedrl_actor* guess = fake_actor(address, "guess", 1);
  CHECK(seedrl_actor_connect(guess, 0) == SEEDRL_INVALID_ARGUMENT);
  CHECK(says("unauthorized"));
  seedrl_actor_destroy(guess);

  seedrl_actor* other = fake_actor(address, kToken, 1, 5);
  CHECK(seedrl_actor_connect(other, 0) == SEEDRL_INVALID_ARGUMENT);
  CHECK(says("actions"));
  seedrl_actor_destroy(other);

  server.stop();
  seedrl_actor* nobody = fake_actor(address, kToken, 1);
  CHECK(seedrl_actor_connect(nobody, 0) == SEEDRL_UNAVAILABLE);
  CHECK(says(address.c_str()));
  // With patience it retries (100 ms, 200 ms, ...) and gives up at its end, still unavailable.
  CHECK(seedrl_actor_connect(nobody, 250) == SEEDRL_UNAVAILABLE);
  seedrl_actor_destroy(nobody);
}

TEST_CASE("C ABI: steps carry the caller's buffers and bring the learner's actions") {
  FakeEndpoint endpoint;
  SocketServer server(endpoint, server_options());
  server.start();
  seedrl_actor* actor = fake_actor(server.address().to_string(), kToken, 3);
  REQUIRE(seedrl_actor_connect(actor, 1000) == SEEDRL_OK);
  CHECK(seedrl_actor_action_width(actor) == 1);
  // The fake learner answers each environment with its observation's first value mod 3.
  const float rewards[3] = {0.0f, 0.5f, -1.0f};
  const std::uint8_t flags[3] = {SEEDRL_FLAG_FIRST, 0, SEEDRL_FLAG_TERMINATED};
  const float observations[6] = {1.0f, 9.0f, 2.0f, 9.0f, 4.0f, 9.0f};
  std::int32_t actions[3] = {-1, -1, -1};
  REQUIRE(seedrl_actor_step(actor, rewards, flags, observations, nullptr, actions) == SEEDRL_OK);
  CHECK(actions[0] == 1);
  CHECK(actions[1] == 2);
  CHECK(actions[2] == 1);
  CHECK(endpoint.last_rewards() == std::vector<float>{0.0f, 0.5f, -1.0f});
  CHECK(endpoint.last_flags() == std::vector<std::uint8_t>{1, 0, 2});
  // The box overload on a discrete connection is refused by name, and changes nothing.
  float box[3];
  CHECK(seedrl_actor_step_box(actor, rewards, flags, observations, nullptr, box) ==
        SEEDRL_INVALID_ARGUMENT);
  // The learner's end arrives as SEEDRL_CLOSED.
  endpoint.stop();
  const seedrl_status end =
      seedrl_actor_step(actor, rewards, flags, observations, nullptr, actions);
  CHECK((end == SEEDRL_CLOSED || end == SEEDRL_UNAVAILABLE));
  seedrl_actor_destroy(actor);
}

TEST_CASE("C ABI: a policy that cannot load says why") {
  seedrl_policy* policy = reinterpret_cast<seedrl_policy*>(&policy);
  CHECK(seedrl_policy_load("/nonexistent/checkpoint.safetensors", &policy) == SEEDRL_NOT_FOUND);
  CHECK(policy == nullptr);
  CHECK(says("/nonexistent/checkpoint.safetensors"));
  CHECK(seedrl_policy_load(nullptr, &policy) == SEEDRL_INVALID_ARGUMENT);
  CHECK(seedrl_policy_observation_size(nullptr) == 0);
  seedrl_policy_destroy(nullptr);
}

TEST_CASE("C ABI: a loaded policy acts as seedrl::Policy does on the same checkpoint") {
  // A V-trace learner's checkpoint (an MLP on 3 floats, 4 actions, random parameters).
  TempDir dir("capi_policy");
  const std::string path = dir / "checkpoint.safetensors";
  VTraceAgentOptions options;
  options.network = nn::NetworkOptions::mlp(3, 4, {16, 8});
  options.network.seed = 5;
  options.batch_size = 2;
  const VTraceAgent agent(options);
  InferenceServerOptions server;
  server.unroll_length = 4;
  UnrollQueue queue(1);
  Learner<VTraceAgent, cpu::Backend> learner(
      agent, make_unroll_spec(agent, {{3}, DType::f32}, {4}, server), queue);
  learner.save_checkpoint(path, {1, 0, 0, {}, {}});

  seedrl_policy* policy = nullptr;
  REQUIRE(seedrl_policy_load(path.c_str(), &policy) == SEEDRL_OK);
  CHECK(seedrl_policy_observation_size(policy) == 3);
  CHECK(seedrl_policy_action_width(policy) == 1);
  std::vector<float> observations(5 * 3);
  for (std::size_t i = 0; i < observations.size(); ++i)
    observations[i] = static_cast<float>(i % 7) * 0.5f - 1.5f;
  std::vector<std::int32_t> actions(5, -1);
  REQUIRE(seedrl_policy_act(policy, 5, observations.data(), nullptr, actions.data()) == SEEDRL_OK);
  Policy<> reference(path);
  CHECK(actions == reference.act(Tensor::from_values<float>({5, 3}, observations)));
  float box[5];
  CHECK(seedrl_policy_act_box(policy, 5, observations.data(), box) == SEEDRL_INVALID_ARGUMENT);
  CHECK(says("discrete actions"));
  seedrl_policy_destroy(policy);
}

}  // namespace test_capi
