// The R2D2 runtime on the CPU backend, compiled once (the header declares it extern).
#include "seedrl/agents/r2d2.hpp"

namespace seedrl {

template class ReplayBuffer<Unroll>;
template class ReplayTable<Unroll>;
template class Learner<R2D2Agent, cpu::Backend>;

}  // namespace seedrl
