// The built-in agents' inference servers, training sessions and learners on the CUDA backend,
// compiled once in seedrl::cuda (declared extern in session/builtin_agents.hpp for the programs
// that link it, and for this library's own files: CMake gives both SEEDRL_CUDA_SESSIONS).
#include "seedrl/backend/cuda/backend.hpp"
#include "seedrl/session/builtin_agents.hpp"

namespace seedrl {

SEEDRL_BUILTIN_CUDA_LEARNERS();
SEEDRL_BUILTIN_SESSIONS(, cuda::Backend);

}  // namespace seedrl
