#include "seedrl/agents/vtrace.hpp"

namespace seedrl {

// The V-trace runtime on the CPU backend (declared extern in the header).
template class Learner<VTraceAgent, cpu::Backend>;

}  // namespace seedrl
