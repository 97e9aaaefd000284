// The built-in agents' inference servers and training sessions on the CPU backend (declared
// extern in session/builtin_agents.hpp).
#include "seedrl/session/builtin_agents.hpp"

namespace seedrl {

SEEDRL_BUILTIN_SESSIONS(, cpu::Backend);

}  // namespace seedrl
