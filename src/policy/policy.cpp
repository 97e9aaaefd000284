// Policy is compiled once, for the CPU backend (describe_checkpoint: checkpoint_description.cpp).
#include "seedrl/policy/policy.hpp"

#include "seedrl/math/categorical.hpp"

namespace seedrl {

template class Policy<cpu::Backend>;

}  // namespace seedrl
