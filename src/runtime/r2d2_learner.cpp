// The R2D2 runtime on the CPU backend, compiled once (the header declares it extern).
#include "seedrl/runtime/r2d2_learner.hpp"

namespace seedrl {

template class ReplayBuffer<Unroll>;
template class Learner<R2D2Agent, cpu::Backend>;
template class InferenceServer<R2D2Agent, cpu::Backend>;
template class TrainingSession<R2D2Agent, cpu::Backend>;

}  // namespace seedrl
