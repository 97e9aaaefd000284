// The networks and optimizers on the CPU backend, compiled once (their headers declare them
// extern).
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/nn/network.hpp"
#include "seedrl/nn/optimizer.hpp"

namespace seedrl {

template class nn::Network<cpu::Backend>;
template class nn::Adam<cpu::Backend>;
template class nn::RmsProp<cpu::Backend>;
template class nn::Sgd<cpu::Backend>;
template std::unique_ptr<nn::Optimizer> nn::make_optimizer<cpu::Backend>(
    nn::ParameterStore&, const nn::OptimizerOptions&);

}  // namespace seedrl
