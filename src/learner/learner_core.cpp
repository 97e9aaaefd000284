// The learner core on the CPU backend, compiled once (its header declares it extern).
#include "seedrl/learner/learner_core.hpp"

namespace seedrl {

template class LearnerCore<cpu::Backend>;

}  // namespace seedrl
