// GraphedForward's bookkeeping, on the CPU with a stand-in graph that replays by running the
// captured work again (as a CUDA graph replays its kernels, reading what sits at the captured
// addresses then). test_cuda_conformance checks real CUDA graphs against plain forwards.
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/inference/graphed_forward.hpp"
#include "seedrl/nn/network.hpp"

using namespace seedrl;

namespace {

struct ReplayingGraph {
  static inline bool refuse = false;
  std::function<void()> work;
  void capture(const std::function<void()>& w) {
    if (refuse) throw Error("stand-in graph: capture refused");
    work = w;
  }
  void replay() const { work(); }
};

struct GraphBackend : cpu::Backend {
  using Graph = ReplayingGraph;
  static int graph_capture_after() { return 2; }
};

nn::NetworkOptions config(std::int64_t lstm = 0) {
  auto c = nn::NetworkOptions::mlp(5, 3, {16});
  c.lstm_size = lstm;
  c.seed = 3;
  return c;
}

// Random observations [1, batch, 5] written into `buffer` (the same address while it fits).
Tensor write_input(ScratchBuffer& buffer, std::int64_t batch, Rng& rng) {
  const Tensor t = buffer.view({1, batch, 5});
  for (std::int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = static_cast<float>(rng.uniform(-1, 1));
  return t;
}

// The logits a separate network with the same parameters computes for `input`.
void check_outputs(nn::Network<cpu::Backend>& reference, const nn::NetworkOutputs& got,
                   const Tensor& input, const std::string& what) {
  const Tensor expected = reference.forward(input.clone(Device::cpu)).logits;
  REQUIRE(got.logits.shape() == expected.shape());
  for (std::int64_t i = 0; i < expected.numel(); ++i)
    REQUIRE_MESSAGE(got.logits.data<float>()[i] == expected.data<float>()[i], what, " at ", i);
}

}  // namespace

TEST_CASE("GraphedForward: plain forwards first, then one capture per batch size and replays") {
  nn::Network<GraphBackend> net(config());
  nn::Network<cpu::Backend> reference(config());
  GraphedForward<GraphBackend> forward;
  static_assert(GraphedForward<GraphBackend>::kAvailable);
  ScratchBuffer buffer;
  Rng rng(1);
  write_input(buffer, 16, rng);  // the largest batch first, so smaller ones keep the address
  for (int i = 0; i < 5; ++i) {
    const Tensor input = write_input(buffer, 8, rng);
    check_outputs(reference, forward(net, input), input, "batch 8, use " + std::to_string(i));
  }
  CHECK(forward.stats().plain == 2);
  CHECK(forward.stats().captures == 1);
  CHECK(forward.stats().replays == 3);

  // Parameters changed in place: replays read them afresh.
  net.parameters().values().data<float>()[0] += 0.5f;
  reference.parameters().values().data<float>()[0] += 0.5f;
  Tensor input = write_input(buffer, 8, rng);
  check_outputs(reference, forward(net, input), input, "after a parameter update");
  CHECK(forward.stats().replays == 4);

  // Another batch size is counted on its own.
  for (int i = 0; i < 3; ++i) {
    input = write_input(buffer, 4, rng);
    check_outputs(reference, forward(net, input), input, "batch 4");
  }
  CHECK(forward.stats().captures == 2);
  CHECK(forward.stats().drops == 0);

  // A larger batch than ever moves the buffers: every graph is dropped, and a known batch size is
  // captured again at its next use.
  input = write_input(buffer, 32, rng);
  check_outputs(reference, forward(net, input), input, "batch 32");
  input = write_input(buffer, 8, rng);
  check_outputs(reference, forward(net, input), input, "batch 8 after the move");
  CHECK(forward.stats().drops >= 1);
  CHECK(forward.stats().captures == 3);
  CHECK(forward.stats().failures == 0);
}

TEST_CASE("GraphedForward: a refused capture keeps its batch size on plain forwards") {
  nn::Network<GraphBackend> net(config());
  nn::Network<cpu::Backend> reference(config());
  GraphedForward<GraphBackend> forward;
  ScratchBuffer buffer;
  Rng rng(2);
  ReplayingGraph::refuse = true;
  for (int i = 0; i < 6; ++i) {
    const Tensor input = write_input(buffer, 8, rng);
    check_outputs(reference, forward(net, input), input, "refused");
  }
  ReplayingGraph::refuse = false;
  CHECK(forward.stats().failures == 1);
  CHECK(forward.stats().last_failure.find("capture refused") != std::string::npos);
  CHECK(forward.stats().plain == 6);
  CHECK(forward.stats().replays == 0);
}

TEST_CASE("GraphedForward: disabled, recurrent networks and backends without graphs run plain") {
  Rng rng(3);
  ScratchBuffer buffer;
  SUBCASE("disabled") {
    nn::Network<GraphBackend> net(config());
    GraphedForward<GraphBackend> forward(false);
    for (int i = 0; i < 5; ++i) forward(net, write_input(buffer, 4, rng));
    CHECK(forward.stats().plain == 5);
  }
  SUBCASE("recurrent") {
    nn::Network<GraphBackend> net(config(8));
    GraphedForward<GraphBackend> forward;
    for (int i = 0; i < 5; ++i) forward(net, write_input(buffer, 4, rng));
    CHECK(forward.stats().plain == 5);
  }
  SUBCASE("the CPU backend") {
    static_assert(!GraphedForward<cpu::Backend>::kAvailable);
    nn::Network<cpu::Backend> net(config());
    GraphedForward<cpu::Backend> forward;
    for (int i = 0; i < 5; ++i) forward(net, write_input(buffer, 4, rng));
    CHECK(forward.stats().plain == 5);
    CHECK(forward.stats().captures == 0);
  }
}
