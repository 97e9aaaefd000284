// GraphedForward<B>: the inference server's forward, replayed from captured graphs where the
// backend has them (B::Graph: CUDA graphs on the GPU backend).
//
// A small network's forward on a GPU is a dozen kernels of a few microseconds each, and the
// host's time to queue them through cuDNN and cuBLAS exceeds the GPU's time to run them: on an
// H200 the MinAtar network's forward at batch 256 took 106 us, 101 us of it spent queueing, and
// the server's whole step (copy in, forward, copies out) went from 135 us to 57 us with the
// forward replayed from one graph (docs/performance.md). So, per input shape (batch size):
//
//   uses 1 .. B::graph_capture_after()  plain forwards (the convolutions measure their
//                                       algorithms meanwhile, which a graph must not do)
//   the next use                        capture the forward into a graph, and replay it
//   later uses                          replay: one launch for the whole forward
//
// A graph holds device addresses: the input's, the parameters' and the network's scratch
// buffers'. When any of them may have moved (a new input or parameter address, or any
// ScratchBuffer reallocation in the process, as a larger batch than before causes) every graph is
// dropped, to be captured again at its shape's next use. Parameters written in place (the
// learner's updates) are read afresh by every replay, convolution weights repacked included. A
// capture the backend refuses leaves that shape on plain forwards for good, the reason kept in
// stats(). Without B::Graph (the CPU backend), or for a recurrent network (whose state and resets
// take other paths), every forward is plain. Used by one thread (the inference thread).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/nn/network.hpp"

namespace seedrl {

struct GraphedForwardStats {
  std::int64_t plain = 0;     ///< forwards run directly
  std::int64_t captures = 0;  ///< graphs captured
  std::int64_t replays = 0;   ///< forwards replayed from a graph
  std::int64_t drops = 0;     ///< times every graph was dropped (their buffers may have moved)
  std::int64_t failures = 0;  ///< captures the backend refused
  std::string last_failure;   ///< the backend's reason for the last refusal
};

namespace detail {
struct NoGraph {};
template <class B>
struct GraphOf {
  using type = NoGraph;
};
template <class B>
requires requires {
  typename B::Graph;
}
struct GraphOf<B> {
  using type = typename B::Graph;
};
}  // namespace detail

template <class B>
class GraphedForward {
 public:
  static constexpr bool kAvailable = requires { typename B::Graph; };

  /// `enabled` false: every forward is plain (InferenceServerOptions::graphs).
  explicit GraphedForward(bool enabled = true) : enabled_(enabled && kAvailable) {}

  /// network.forward(input) for a feed-forward network, replayed from a graph once one is ready.
  const nn::NetworkOutputs& operator()(nn::Network<B>& network, const Tensor& input) {
    if constexpr (kAvailable) {
      if (enabled_ && network.config().lstm_size == 0) return graphed(network, input);
    }
    ++stats_.plain;
    return network.forward(input);
  }

  const GraphedForwardStats& stats() const { return stats_; }

 private:
  using Graph = typename detail::GraphOf<B>::type;
  // Where graphs read and write; they are valid while it is unchanged.
  struct Layout {
    const void* input = nullptr;
    const void* parameters = nullptr;
    std::uint64_t reallocations = 0;
    bool operator==(const Layout&) const = default;
  };
  struct Entry {
    std::int64_t uses = 0;
    bool failed = false;
    bool captured = false;
    Graph graph;
    nn::NetworkOutputs outputs;  // views of the buffers the captured forward writes
  };

  const nn::NetworkOutputs& graphed(nn::Network<B>& network, const Tensor& input) {
    check_layout({input.raw_data(), network.parameters().values().raw_data(),
                  ScratchBuffer::reallocations()});
    Entry& entry = entries_[{input.dim(0), input.dim(1)}];
    if (entry.failed || ++entry.uses <= B::graph_capture_after()) return plain(network, input);
    if (!entry.captured) {
      try {
        // The input by value: a graph replays what sits at its address then.
        entry.graph.capture([&network, &entry, input] { entry.outputs = network.forward(input); });
      } catch (const std::exception& e) {
        entry.failed = true;
        ++stats_.failures;
        stats_.last_failure = e.what();
        return plain(network, input);
      }
      entry.captured = true;
      ++stats_.captures;
    }
    entry.graph.replay();
    ++stats_.replays;
    return entry.outputs;
  }

  const nn::NetworkOutputs& plain(nn::Network<B>& network, const Tensor& input) {
    ++stats_.plain;
    const nn::NetworkOutputs& outputs = network.forward(input);
    // A forward at a new shape may have grown the network's buffers under the graphs.
    Layout after = layout_;
    after.reallocations = ScratchBuffer::reallocations();
    check_layout(after);
    return outputs;
  }

  void check_layout(const Layout& now) {
    if (now == layout_) return;
    layout_ = now;
    bool dropped = false;
    for (auto& [shape, entry] : entries_) {
      if (!entry.captured) continue;
      entry.graph = Graph();
      entry.outputs = {};
      entry.captured = false;
      dropped = true;
    }
    if (dropped) ++stats_.drops;
  }

  bool enabled_;
  Layout layout_;
  std::map<std::pair<std::int64_t, std::int64_t>, Entry> entries_;  // by [T, B]
  GraphedForwardStats stats_;
};

}  // namespace seedrl
