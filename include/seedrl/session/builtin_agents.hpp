// The built-in agents' inference servers and training sessions on the CPU backend are compiled
// once, in the library (src/session/builtin_agents.cpp), and on the CUDA backend in seedrl::cuda
// (src/session/cuda_sessions.cpp, declared here for the programs that link it, which CMake gives
// SEEDRL_CUDA_SESSIONS): programs that train them do not instantiate them again. Included at the
// end of session/training_session.hpp.
#pragma once

#include "seedrl/agents/ppo.hpp"
#include "seedrl/agents/r2d2.hpp"
#include "seedrl/agents/sac.hpp"
#include "seedrl/agents/vtrace.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/inference/inference_server.hpp"
#include "seedrl/session/training_session.hpp"
#ifdef SEEDRL_CUDA_SESSIONS
#include "seedrl/backend/cuda/backend.hpp"
#endif

namespace seedrl {

extern template class InferenceServer<VTraceAgent, cpu::Backend>;
extern template class TrainingSession<VTraceAgent, cpu::Backend>;
extern template class InferenceServer<R2D2Agent, cpu::Backend>;
extern template class TrainingSession<R2D2Agent, cpu::Backend>;
extern template class InferenceServer<PpoAgent, cpu::Backend>;
extern template class TrainingSession<PpoAgent, cpu::Backend>;
extern template class InferenceServer<SacAgent, cpu::Backend>;
extern template class TrainingSession<SacAgent, cpu::Backend>;
#ifdef SEEDRL_CUDA_SESSIONS
extern template class InferenceServer<VTraceAgent, cuda::Backend>;
extern template class TrainingSession<VTraceAgent, cuda::Backend>;
extern template class InferenceServer<R2D2Agent, cuda::Backend>;
extern template class TrainingSession<R2D2Agent, cuda::Backend>;
extern template class InferenceServer<PpoAgent, cuda::Backend>;
extern template class TrainingSession<PpoAgent, cuda::Backend>;
extern template class InferenceServer<SacAgent, cuda::Backend>;
extern template class TrainingSession<SacAgent, cuda::Backend>;
#endif

}  // namespace seedrl
