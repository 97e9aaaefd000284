// Self-play at the inference server (issue 37): the server answers a slot that an OpponentTable
// assigns to an opponent set with that set's values, honouring its mask, in the same batch as the
// learner's slots; opponents' rows and waiting rows reach no unroll and no frame count; a set's
// network is loaded once while the set stays in use.
// (test_self_play_learning: the whole run.)
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "seedrl/agents/vtrace.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/self_play.hpp"
#include "support/runtime_fixtures.hpp"

namespace test_self_play {

using namespace seedrl;
using Backend = cpu::Backend;

namespace {

// Parameter values of `net` whose policy always prefers `action` (zero policy weights, one
// large bias).
Tensor preferring(nn::Network<Backend>& net, std::int32_t action) {
  net.parameters().find("policy.weight").value.fill_zero();
  const Tensor bias = net.parameters().find("policy.bias").value;
  bias.fill_zero();
  bias.data<float>()[action] = 50.0f;
  net.parameters().bump_version();
  return net.parameters().values().clone();
}

// The tests' server: the tiny agent's, `slots` slots in batches of as many, unrolls of 2,
// serving `table`; `learner` holds the learner's values and `other` makes opponent sets' values.
struct OpponentServer {
  VTraceAgent agent = test::tiny_agent();
  nn::Network<Backend> learner{agent.network_config()};
  nn::Network<Backend> other{agent.network_config()};
  SharedParameters parameters{learner.parameters()};
  UnrollQueue queue{4096};
  InferenceServer<VTraceAgent, Backend> server;
  std::shared_ptr<OpponentTable> table;

  OpponentServer(std::int32_t slots, const StepSpec& spec)
      : server(agent, parameters, queue, spec, options(slots)),
        table(std::make_shared<OpponentTable>(slots)) {
    server.serve_opponents(table);
  }

  static InferenceServerOptions options(std::int32_t slots) {
    InferenceServerOptions o;
    o.max_batch = slots;
    o.max_slots = slots;
    o.unroll_length = 2;
    return o;
  }
};

const StepSpec kUnmasked{{{2}, DType::f32}, {3}, {}};

}  // namespace

TEST_CASE("InferenceServer: opponent sets act with their values and masks; they leave nothing") {
  const StepSpec spec{{{2}, DType::f32}, {3}, {{kActionMaskField, {{3}, DType::u8}}}};
  OpponentServer s(5, spec);
  auto& server = s.server;
  auto& table = s.table;
  auto& queue = s.queue;
  (void)preferring(s.learner, 0);  // the learner's own values prefer action 0
  table->put(1, preferring(s.other, 2));
  // Slots 0, 1 the learner (1 always waits), 2 and 3 opponent set 1 (3 may not play action 2),
  // 4 the latest self.
  REQUIRE(table->assign(2, 1));
  REQUIRE(table->assign(3, 1));
  REQUIRE(table->assign(4, policy_ids::kLatest));
  server.start();

  ConnectRequest request = test::connect_request(1, 5, 0);
  request.spec = spec;
  Connection c;
  REQUIRE(server.connect(request, &c).is_ok());
  test::StepBuffers buffers(5);
  buffers.fields = {Tensor::zeros({5, 3}, DType::u8)};
  std::uint8_t* masks = buffers.fields[0].data<std::uint8_t>();
  for (int i = 0; i < 15; ++i) masks[i] = 1;
  masks[3 * 3 + 2] = 0;  // slot 3 may not play 2
  constexpr int kSteps = 7;
  for (int t = 0; t < kSteps; ++t) {
    for (std::int32_t e = 0; e < 5; ++e)
      buffers.flags[static_cast<std::size_t>(e)] = t == 0 ? step_flags::kFirst : 0;
    buffers.flags[1] = step_flags::kWaiting;
    REQUIRE(buffers.step(server, c).is_ok());
    CHECK(buffers.actions[0] == 0);  // the learner's values
    CHECK(buffers.actions[2] == 2);  // the opponent set's
    CHECK(buffers.actions[3] != 2);  // ... within its mask
    CHECK(buffers.actions[4] == 0);  // the latest self: the learner's values
  }
  server.disconnect(c);
  server.stop();
  // Only slot 0 trained: 7 steps make 3 unrolls of 2 transitions (overlap 1); its 6 transitions
  // are the frames. Slots 1 to 4 would have added unrolls of their own.
  std::int64_t unrolls = 0;
  while (queue.pop()) ++unrolls;
  CHECK(unrolls == 3);
  CHECK(server.training_frames() == kSteps - 1);

  // The table must fit the server; box actions have no opponent sets.
  CHECK_THROWS_WITH(server.serve_opponents(std::make_shared<OpponentTable>(4)),
                    doctest::Contains("max_slots = 5"));
}

TEST_CASE("InferenceServer: an opponent set that cannot act fails only the requests it serves") {
  OpponentServer s(4, kUnmasked);
  s.table->put(1, preferring(s.other, 2));
  s.table->put(2, Tensor::zeros({5}));  // values for another network: it cannot act
  REQUIRE(s.table->assign(1, 1));       // actor A: slots 0, 1 (its opponent set 1)
  REQUIRE(s.table->assign(3, 2));       // actor B: slots 2, 3 (its opponent set 2)
  s.server.start();
  Connection a, b;
  REQUIRE(s.server.connect(test::connect_request(1, 2, 0), &a).is_ok());
  REQUIRE(s.server.connect(test::connect_request(2, 2, 2), &b).is_ok());
  test::StepBuffers buffers_a(2), buffers_b(2);
  Status status_a, status_b;
  std::thread stepping_a([&] { status_a = buffers_a.step(s.server, a); });
  status_b = buffers_b.step(s.server, b);
  stepping_a.join();
  // (In one batch or two:) B's set failed B alone; A was answered, its set acting.
  CHECK(status_a.is_ok());
  CHECK(buffers_a.actions[1] == 2);
  CHECK(status_b.code() == Status::Code::internal);
  CHECK(status_b.message().find("opponent set 2 holds 5 values") != std::string::npos);
  // A goes on; B's slots were restarted, and a set it can act with serves it again.
  for (auto& flag : buffers_a.flags) flag = 0;
  CHECK(buffers_a.step(s.server, a).is_ok());
  REQUIRE(s.table->assign(3, 1));
  CHECK(buffers_b.step(s.server, b).is_ok());
  CHECK(buffers_b.actions[1] == 2);
  s.server.disconnect(a);
  s.server.disconnect(b);
  s.server.stop();
}

TEST_CASE("InferenceServer: the learner's network computes only the rows that act for it") {
  // Slots 0 and 1 wait (the learner's and an opponent set's seat), slot 2 acts for opponent set 1,
  // slot 3 for the learner (it trains), slot 4 for its latest self. Only slots 3 and 4 need the
  // learner's forward; slot 3's behaviour logits must be its own row's, computed without the rows
  // before it in the batch.
  OpponentServer s(5, kUnmasked);  // the learner's values are random: logits vary by row
  auto& server = s.server;
  auto& table = s.table;
  auto& queue = s.queue;
  table->put(1, preferring(s.other, 2));
  REQUIRE(table->assign(1, 1));
  REQUIRE(table->assign(2, 1));
  REQUIRE(table->assign(4, policy_ids::kLatest));
  server.start();
  Connection c;
  REQUIRE(server.connect(test::connect_request(1, 5, 0), &c).is_ok());
  test::StepBuffers buffers(5);
  constexpr int kSteps = 3;
  Tensor slot3 = Tensor::empty({kSteps, 1, 2});
  for (int t = 0; t < kSteps; ++t) {
    for (std::int64_t e = 0; e < 10; ++e)
      buffers.observations.data<float>()[e] = 0.37f * static_cast<float>(e + 3 * t) - 1.1f;
    slot3[t].copy_from(buffers.observations.slice(3, 4).reshape({1, 2}));
    for (std::int32_t e = 0; e < 5; ++e)
      buffers.flags[static_cast<std::size_t>(e)] = t == 0 ? step_flags::kFirst : 0;
    buffers.flags[0] = buffers.flags[1] = step_flags::kWaiting;
    REQUIRE(buffers.step(server, c).is_ok());
    CHECK(buffers.actions[2] == 2);  // opponent set 1's values
  }
  server.disconnect(c);
  server.stop();
  CHECK(server.forward_rows() == 2 * kSteps);  // slots 3 and 4, each step
  std::vector<std::unique_ptr<Unroll>> unrolls;
  while (auto u = queue.pop()) unrolls.push_back(std::move(*u));
  REQUIRE(unrolls.size() == 1);  // slot 3's 3 steps: one unroll of 2 transitions
  for (std::int64_t t = 0; t < kSteps; ++t) {
    const nn::NetworkOutputs& out = s.learner.forward(slot3.slice(t, t + 1), {});
    for (std::int64_t a = 0; a < 3; ++a) {
      CAPTURE(t);
      CHECK(unrolls[0]->behaviour.data<float>()[t * 3 + a] ==
            doctest::Approx(out.logits.data<float>()[a]).epsilon(1e-5));
    }
  }
}

TEST_CASE("InferenceServer: each opponent set in use keeps a network, loaded once") {
  // Sets 1 and 2 share every batch; each is loaded once however many batches they share. A set
  // that no batch has used for OpponentActing::kIdleBatches batches gives its network up; the
  // next set takes that network, with its own values, and a set drawn again is loaded again.
  OpponentServer s(3, kUnmasked);
  auto& server = s.server;
  auto& table = s.table;
  (void)preferring(s.learner, 0);
  table->put(1, preferring(s.other, 2));
  table->put(2, preferring(s.other, 1));
  table->put(3, preferring(s.other, 2));
  REQUIRE(table->assign(1, 1));
  REQUIRE(table->assign(2, 2));
  server.start();
  Connection c;
  REQUIRE(server.connect(test::connect_request(1, 3, 0), &c).is_ok());
  test::StepBuffers buffers(3);
  int step = 0;
  const auto steps = [&](int n, std::int32_t slot2) {
    for (int t = 0; t < n; ++t, ++step) {
      for (std::uint8_t& f : buffers.flags) f = step == 0 ? step_flags::kFirst : 0;
      REQUIRE(buffers.step(server, c).is_ok());
      CHECK(buffers.actions[0] == 0);
      CHECK(buffers.actions[1] == 2);      // set 1's values
      CHECK(buffers.actions[2] == slot2);  // slot 2's set's, or the learner's
      if (buffers.actions[2] != slot2) break;
    }
  };
  const int idle = static_cast<int>(OpponentActing<VTraceAgent, Backend>::kIdleBatches) + 2;
  steps(10, 1);
  CHECK(server.opponent_loads() == 2);
  CHECK(server.opponent_networks_built() == 2);
  REQUIRE(table->assign(2, policy_ids::kLearner));  // set 2 idles
  steps(idle, 0);
  CHECK(server.opponent_loads() == 2);
  REQUIRE(table->assign(2, 3));  // set 3 takes set 2's network, with its own values
  steps(5, 2);
  CHECK(server.opponent_loads() == 3);
  CHECK(server.opponent_networks_built() == 2);
  REQUIRE(table->assign(2, policy_ids::kLearner));  // set 3 idles
  steps(idle, 0);
  REQUIRE(table->assign(2, 2));  // set 2 drawn again: loaded again
  steps(3, 1);
  CHECK(server.opponent_loads() == 4);
  CHECK(server.opponent_networks_built() == 2);
  server.disconnect(c);
  server.stop();
}

}  // namespace test_self_play
