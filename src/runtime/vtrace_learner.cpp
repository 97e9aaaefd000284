#include "seedrl/runtime/vtrace_learner.hpp"

namespace seedrl {

// The V-trace runtime on the CPU backend (declared extern in the header).
template class Learner<VTraceAgent, cpu::Backend>;
template class InferenceServer<VTraceAgent, cpu::Backend>;
template class TrainingSession<VTraceAgent, cpu::Backend>;

}  // namespace seedrl
