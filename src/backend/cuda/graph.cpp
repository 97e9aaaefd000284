// CUDA graphs of a thread's stream (include/seedrl/backend/cuda/graph.hpp).
#include "seedrl/backend/cuda/graph.hpp"

#include "cuda_util.hpp"
#include "seedrl/core/error.hpp"

namespace seedrl::cuda {
namespace detail {
namespace {
thread_local bool g_capturing = false;
thread_local std::int64_t g_captured_allocations = 0;  // by this thread while capturing
}  // namespace
bool capturing() noexcept {
  return g_capturing;
}
void note_allocation() noexcept {
  if (g_capturing) ++g_captured_allocations;
}
}  // namespace detail

struct Graph::Impl {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::size_t nodes = 0;

  void reset() noexcept {
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    if (graph != nullptr) cudaGraphDestroy(graph);
    exec = nullptr;
    graph = nullptr;
    nodes = 0;
  }
  ~Impl() { reset(); }
};

Graph::Graph() : impl_(std::make_unique<Impl>()) {}
Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;

void Graph::capture(const std::function<void()>& work) {
  impl_->reset();
  const cudaStream_t s = detail::stream();
  // Relaxed: the allocator's bookkeeping (event queries) stays legal on this thread while the
  // stream captures; kernels and copies queued on the stream are what the graph holds.
  SEEDRL_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
  cudaGraph_t graph = nullptr;
  detail::g_captured_allocations = 0;
  detail::g_capturing = true;
  try {
    work();
  } catch (...) {
    detail::g_capturing = false;
    cudaStreamEndCapture(s, &graph);  // ends the capture so the stream works again
    if (graph != nullptr) cudaGraphDestroy(graph);
    cudaGetLastError();
    throw;
  }
  detail::g_capturing = false;
  const cudaError_t ended = cudaStreamEndCapture(s, &graph);
  // Memory allocated while capturing is released to the cache by the time work() returns or
  // soon after, and would be handed to others while replays still write it.
  if (ended == cudaSuccess && detail::g_captured_allocations > 0) {
    cudaGraphDestroy(graph);
    fail("cuda::Graph::capture: the captured work allocated device memory (",
         detail::g_captured_allocations,
         " allocations); capture work whose buffers already exist (run it once first)");
  }
  if (ended != cudaSuccess) {
    if (graph != nullptr) cudaGraphDestroy(graph);
    detail::throw_cuda(ended,
                       "cudaStreamEndCapture (the captured work waited for the device, "
                       "or used another stream)",
                       __FILE__, __LINE__);
  }
  impl_->graph = graph;
  SEEDRL_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &impl_->nodes));
  const cudaError_t made = cudaGraphInstantiate(&impl_->exec, graph, 0);
  if (made != cudaSuccess) {
    impl_->reset();
    detail::throw_cuda(made, "cudaGraphInstantiate", __FILE__, __LINE__);
  }
}

void Graph::replay() const {
  SEEDRL_REQUIRE(impl_->exec != nullptr, "cuda::Graph::replay: nothing captured");
  SEEDRL_CUDA_CHECK(cudaGraphLaunch(impl_->exec, detail::stream()));
}

bool Graph::captured() const {
  return impl_->exec != nullptr;
}

std::size_t Graph::nodes() const {
  return impl_->nodes;
}

}  // namespace seedrl::cuda
