// The built-in agents' inference servers and training sessions on the CPU backend are compiled
// once, in the library (src/session/builtin_agents.cpp), and on the CUDA backend, with their
// learners, in seedrl::cuda (src/session/cuda_sessions.cpp, declared here for the programs that
// link it, which CMake gives SEEDRL_CUDA_SESSIONS): a program that trains them and includes this
// header (opt-in; seedrl/seedrl.hpp does) does not instantiate them again. A host program with an
// agent of its own need not include it, nor compile the four built-in agents' headers.
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

// The built-in agents' inference servers and training sessions on `BACKEND`: declared with
// SEEDRL_BUILTIN_SESSIONS(extern, Backend), defined (once, in a library) with
// SEEDRL_BUILTIN_SESSIONS(, Backend).
#define SEEDRL_BUILTIN_SESSIONS(EXTERN, BACKEND)               \
  EXTERN template class InferenceServer<VTraceAgent, BACKEND>; \
  EXTERN template class TrainingSession<VTraceAgent, BACKEND>; \
  EXTERN template class InferenceServer<R2D2Agent, BACKEND>;   \
  EXTERN template class TrainingSession<R2D2Agent, BACKEND>;   \
  EXTERN template class InferenceServer<PpoAgent, BACKEND>;    \
  EXTERN template class TrainingSession<PpoAgent, BACKEND>;    \
  EXTERN template class InferenceServer<SacAgent, BACKEND>;    \
  EXTERN template class TrainingSession<SacAgent, BACKEND>

// The built-in agents' learners on the CUDA backend (on the CPU backend their headers declare
// them, agents/*/learner.hpp): declared with SEEDRL_BUILTIN_CUDA_LEARNERS(extern), defined in
// seedrl::cuda with SEEDRL_BUILTIN_CUDA_LEARNERS().
#define SEEDRL_BUILTIN_CUDA_LEARNERS(EXTERN)                 \
  EXTERN template class Learner<VTraceAgent, cuda::Backend>; \
  EXTERN template class Learner<R2D2Agent, cuda::Backend>;   \
  EXTERN template class Learner<PpoAgent, cuda::Backend>;    \
  EXTERN template class Learner<SacAgent, cuda::Backend>

namespace seedrl {

SEEDRL_BUILTIN_SESSIONS(extern, cpu::Backend);
#ifdef SEEDRL_CUDA_SESSIONS
SEEDRL_BUILTIN_SESSIONS(extern, cuda::Backend);
SEEDRL_BUILTIN_CUDA_LEARNERS(extern);
#endif

}  // namespace seedrl
