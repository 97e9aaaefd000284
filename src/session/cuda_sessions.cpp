// The built-in agents' inference servers and training sessions on the CUDA backend, compiled once
// in seedrl::cuda (declared extern in session/builtin_agents.hpp for the programs that link it).
#include "seedrl/backend/cuda/backend.hpp"
#include "seedrl/session/builtin_agents.hpp"

namespace seedrl {

SEEDRL_BUILTIN_SESSIONS(, cuda::Backend);

}  // namespace seedrl
