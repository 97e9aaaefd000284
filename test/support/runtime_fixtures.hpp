// Small agents, servers and environments for the runtime tests.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "seedrl/agents/vtrace.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/experience/unroll_store.hpp"
#include "seedrl/inference/inference_server.hpp"

namespace seedrl::test {

using Backend = cpu::Backend;

/// `count` unrolls of spec (observations f32 [2], 3 actions, behaviour logits) from a seeded
/// stream, as an inference server's store builds them: each starts an episode, and a later step
/// terminates one with probability `termination`. Where the spec declares a legal-action mask
/// (kActionMaskField), it allows the action taken and nothing else.
inline std::vector<std::unique_ptr<Unroll>> random_unrolls(const UnrollSpec& spec, int count,
                                                           std::uint64_t seed,
                                                           double termination = 0.1) {
  Rng rng(seed);
  UnrollStore store(count, spec);
  std::vector<std::unique_ptr<Unroll>> out;
  const bool masked = !spec.fields.empty() && spec.fields[0].name == kActionMaskField;
  const Tensor mask = Tensor::zeros({1, 3}, DType::u8);
  Tensor obs = Tensor::empty({2});
  float logits[3];
  for (std::int64_t t = 0; t < spec.length; ++t)
    for (int slot = 0; slot < count; ++slot) {
      obs.data<float>()[0] = static_cast<float>(rng.uniform(-1, 1));
      obs.data<float>()[1] = static_cast<float>(rng.uniform(-1, 1));
      for (float& l : logits) l = static_cast<float>(rng.uniform(-1, 1));
      UnrollStep s;
      s.observation = obs;
      s.reward = static_cast<float>(rng.uniform(0, 1));
      s.flags =
          t == 0 ? step_flags::kFirst : (rng.uniform() < termination ? step_flags::kTerminated : 0);
      const auto action = static_cast<std::int32_t>(rng.below(3));
      s.set_action(&action);
      s.behaviour = logits;
      if (masked) {
        for (std::int32_t a = 0; a < 3; ++a) mask.data<std::uint8_t>()[a] = a == action;
        s.fields = std::span<const Tensor>(&mask, 1);
      }
      if (auto u = store.append(slot, s)) out.push_back(std::move(u));
    }
  return out;
}

/// A V-trace agent on an MLP over observations [2] with 3 actions (LSTM optional).
inline VTraceAgent tiny_agent(std::int64_t lstm = 0, std::uint64_t seed = 3) {
  VTraceAgentOptions o;
  o.network = nn::NetworkOptions::mlp(2, 3, {8});
  o.network.lstm_size = lstm;
  o.network.seed = seed;
  o.batch_size = 2;
  return VTraceAgent(o);
}

/// A server with its own parameters (a network standing in for the learner's) and queue.
struct ServerFixture {
  VTraceAgent agent;
  nn::Network<Backend> learner_net;
  SharedParameters parameters;
  UnrollQueue queue;
  InferenceServer<VTraceAgent, Backend> server;

  ServerFixture(const VTraceAgent& a, const InferenceServerOptions& options,
                std::size_t queue_capacity = 64)
      : agent(a),
        learner_net(agent.network_config()),
        parameters(learner_net.parameters()),
        queue(queue_capacity),
        server(agent, parameters, queue, {{2}, DType::f32}, {3}, options) {
    server.start();
  }
};

/// An actor's buffers for direct InferenceEndpoint::step calls (and `fields`, where the steps
/// declare fields).
struct StepBuffers {
  Tensor observations;
  std::vector<float> rewards;
  std::vector<std::uint8_t> flags;
  std::vector<std::int32_t> actions;
  std::vector<Tensor> fields;
  explicit StepBuffers(std::int32_t envs, float reward = 0.0f)
      : observations(Tensor::zeros({envs, 2})),
        rewards(static_cast<std::size_t>(envs), reward),
        flags(static_cast<std::size_t>(envs), step_flags::kFirst),
        actions(static_cast<std::size_t>(envs), -1) {}
  StepRecord record() const { return {observations, rewards, flags, fields}; }
  Status step(InferenceEndpoint& endpoint, const Connection& c) {
    return endpoint.step(c, record(), actions);
  }
};

inline ConnectRequest connect_request(std::uint64_t run_id, std::int32_t envs,
                                      std::int32_t first_slot = -1, bool evaluation = false) {
  ConnectRequest r;
  r.run_id = run_id;
  r.num_envs = envs;
  r.first_slot = first_slot;
  r.evaluation = evaluation;
  r.spec = {{{2}, DType::f32}, {3}, {}};
  return r;
}

inline double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace seedrl::test
