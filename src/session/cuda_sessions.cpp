// The built-in agents' inference servers and training sessions on the CUDA backend, compiled once
// in seedrl::cuda (declared extern in session/builtin_agents.hpp for the programs that link it).
#include "seedrl/backend/cuda/backend.hpp"
#include "seedrl/session/builtin_agents.hpp"

namespace seedrl {

template class InferenceServer<VTraceAgent, cuda::Backend>;
template class TrainingSession<VTraceAgent, cuda::Backend>;
template class InferenceServer<R2D2Agent, cuda::Backend>;
template class TrainingSession<R2D2Agent, cuda::Backend>;
template class InferenceServer<PpoAgent, cuda::Backend>;
template class TrainingSession<PpoAgent, cuda::Backend>;
template class InferenceServer<SacAgent, cuda::Backend>;
template class TrainingSession<SacAgent, cuda::Backend>;

}  // namespace seedrl
