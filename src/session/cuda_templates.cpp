// The runtime's templates on the CUDA backend that the built-in agents' sessions and learners
// (cuda_sessions.cpp) and the programs that link seedrl::cuda share, compiled once here (their
// headers declare them extern under SEEDRL_CUDA_SESSIONS): the network and its optimizers, the
// learner core and Policy.
#include "seedrl/backend/cuda/backend.hpp"
#include "seedrl/learner/learner_core.hpp"
#include "seedrl/nn/network.hpp"
#include "seedrl/nn/optimizer.hpp"
#include "seedrl/policy/policy.hpp"

namespace seedrl {

template class nn::Network<cuda::Backend>;
template class nn::Adam<cuda::Backend>;
template class nn::RmsProp<cuda::Backend>;
template class nn::Sgd<cuda::Backend>;
template std::unique_ptr<nn::Optimizer> nn::make_optimizer<cuda::Backend>(
    nn::ParameterStore&, const nn::OptimizerOptions&);
template class LearnerCore<cuda::Backend>;
template class Policy<cuda::Backend>;

}  // namespace seedrl
