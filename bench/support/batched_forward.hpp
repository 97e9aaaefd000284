// The inference server's step alone at a batch of N, for bench_inference's "batched" mode: N
// observations in host memory, one copy to the device, the forward, the outputs back.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/core/tensor_spec.hpp"
#include "seedrl/nn/network.hpp"
#include "seedrl/shared/staging.hpp"
#include "support/bench_util.hpp"
#ifdef SEEDRL_BENCH_CUDA
#include "seedrl/backend/cuda/backend.hpp"
#endif

namespace seedrl::bench {

/// A network and the observations it takes.
struct Model {
  std::string name;
  nn::NetworkOptions network;
  TensorSpec observation;
};

// The server's inference step alone at batch `batch`: gather in page-locked host memory, one
// copy to the device, forward, outputs back (what InferenceServer::process does around actors).
// On a GPU also its parts, each timed alone: the copy in, the forward (and the host's time to
// queue it, the launch overhead), the copies out; and the same step with the forward replayed
// from a CUDA graph (one launch), checked against the plain step's outputs.
struct BatchedFigures {
  double step_us = 0, h2d_us = 0, forward_us = 0, enqueue_us = 0, d2h_us = 0;
  double graph_step_us = 0;  // 0: not measured
  std::size_t graph_nodes = 0;
  bool graph_matches = false;
  std::string graph_error;
};

template <class B>
void wait_for_device() {
#ifdef SEEDRL_BENCH_CUDA
  if constexpr (B::device == Device::cuda) cuda::synchronize();
#endif
}

template <class B>
BatchedFigures run_batched(const Model& m, std::int64_t batch, double seconds,
                           const std::vector<std::uint8_t>& pool) {
  nn::Network<B> net(m.network);
  ScratchBuffer gather = ScratchBuffer::pinned(B::device);
  const Tensor obs = gather.view(m.observation.shape.prepend({1, batch}), m.observation.dtype);
  std::memcpy(obs.raw_data(), pool.data(), std::min(obs.bytes(), pool.size()));
  StagingBuffer to_device(B::device);
  HostOutputs to_host(B::device);
  BatchedFigures f;
  const double part = seconds / 4;
  f.step_us = 1e6 * bench::time_per_call([&] { to_host(net.forward(to_device(obs))); }, seconds,
                                         bench::kModelWarmup);
  f.h2d_us = 1e6 * bench::time_per_call([&] { to_device(obs); }, part);
  const Tensor staged = to_device(obs);
  double enqueue = 0;
  std::int64_t calls = 0;
  f.forward_us = 1e6 * bench::time_per_call(
                           [&] {
                             const double t0 = bench::now_seconds();
                             net.forward(staged);
                             enqueue += bench::now_seconds() - t0;
                             ++calls;
                             wait_for_device<B>();
                           },
                           part, 0);
  f.enqueue_us = 1e6 * enqueue / static_cast<double>(std::max<std::int64_t>(calls, 1));
  const nn::NetworkOutputs& outputs = net.forward(staged);
  f.d2h_us = 1e6 * bench::time_per_call([&] { to_host(outputs); }, part);
#ifdef SEEDRL_BENCH_CUDA
  if constexpr (B::device == Device::cuda) {
    // Logits and values, copied out of HostOutputs' reused buffers.
    const auto host_floats = [](const nn::NetworkOutputs& o) {
      std::vector<float> v;
      for (const Tensor* t : {&o.logits, &o.values})
        if (t->defined()) v.insert(v.end(), t->data<float>(), t->data<float>() + t->numel());
      return v;
    };
    const std::vector<float> expected = host_floats(to_host(net.forward(staged)));
    try {
      cuda::Graph graph;
      graph.capture([&] { net.forward(staged); });
      f.graph_nodes = graph.nodes();
      // The graph replays into the buffers the capture's forward returned: net's last outputs.
      const nn::NetworkOutputs& graph_outputs = net.forward(staged);
      f.graph_step_us = 1e6 * bench::time_per_call(
                                  [&] {
                                    to_device(obs);
                                    graph.replay();
                                    to_host(graph_outputs);
                                  },
                                  seconds, bench::kModelWarmup);
      graph.replay();
      f.graph_matches = host_floats(to_host(graph_outputs)) == expected;
    } catch (const std::exception& e) {
      f.graph_error = e.what();
    }
  }
#endif
  return f;
}

}  // namespace seedrl::bench
