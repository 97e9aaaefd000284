// The built-in agents' inference servers and training sessions on the CPU backend (declared
// extern in session/builtin_agents.hpp).
#include "seedrl/session/builtin_agents.hpp"

namespace seedrl {

template class InferenceServer<VTraceAgent, cpu::Backend>;
template class TrainingSession<VTraceAgent, cpu::Backend>;
template class InferenceServer<R2D2Agent, cpu::Backend>;
template class TrainingSession<R2D2Agent, cpu::Backend>;
template class InferenceServer<PpoAgent, cpu::Backend>;
template class TrainingSession<PpoAgent, cpu::Backend>;
template class InferenceServer<SacAgent, cpu::Backend>;
template class TrainingSession<SacAgent, cpu::Backend>;

}  // namespace seedrl
