// seedrl::cuda::Graph: the GPU work of a function, captured once and replayed as one launch.
//
// A small network's step on the GPU is a dozen kernels of a few microseconds each, so the host's
// cost of launching them (and the GPU's wait between them) can exceed the work itself. A Graph
// captures what `work` queues on the calling thread's stream into a CUDA graph; replay() then
// queues all of it with one launch. The captured kernels read and write the same device
// addresses on every replay, so `work` must use buffers that stay put (the layers' reused
// scratch buffers do, once their shapes have been seen), must not wait for the device and must
// not allocate new device memory. capture() throws, naming CUDA's error, where it does; the
// stream is then usable again. Opt-in: include this header and link seedrl::cuda.
#pragma once

#include <functional>
#include <memory>

namespace seedrl::cuda {

class Graph {
 public:
  Graph();
  ~Graph();
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;

  /// Runs `work` once with the calling thread's stream capturing (nothing executes on the GPU
  /// then), and keeps the result for replay(). Replaces an earlier capture.
  void capture(const std::function<void()>& work);
  /// Queues the captured work on the calling thread's stream; throws if nothing was captured.
  void replay() const;
  bool captured() const;
  /// Kernels and copies in the captured graph (0 before a capture).
  std::size_t nodes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedrl::cuda
