// The built-in agents' inference servers and training sessions on the CPU backend are compiled
// once, in the library (src/session/builtin_agents.cpp): programs that train them on the CPU do
// not instantiate them again. Included at the end of session/training_session.hpp.
#pragma once

#include "seedrl/agents/ppo.hpp"
#include "seedrl/agents/r2d2.hpp"
#include "seedrl/agents/sac.hpp"
#include "seedrl/agents/vtrace.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/inference/inference_server.hpp"
#include "seedrl/session/training_session.hpp"

namespace seedrl {

extern template class InferenceServer<VTraceAgent, cpu::Backend>;
extern template class TrainingSession<VTraceAgent, cpu::Backend>;
extern template class InferenceServer<R2D2Agent, cpu::Backend>;
extern template class TrainingSession<R2D2Agent, cpu::Backend>;
extern template class InferenceServer<PpoAgent, cpu::Backend>;
extern template class TrainingSession<PpoAgent, cpu::Backend>;
extern template class InferenceServer<SacAgent, cpu::Backend>;
extern template class TrainingSession<SacAgent, cpu::Backend>;

}  // namespace seedrl
