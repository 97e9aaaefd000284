// Clipping by global gradient norm (Pascanu et al. 2013), as tf.clip_by_global_norm does it.
#pragma once

#include <cmath>

#include "seedrl/core/error.hpp"
#include "seedrl/nn/backend.hpp"
#include "seedrl/nn/parameter.hpp"

namespace seedrl::nn {

/// Euclidean norm of all gradients of the store taken together.
template <Backend B>
double global_grad_norm(const ParameterStore& store) {
  return std::sqrt(B::sum_of_squares(store.grads()));
}

/// Scales every gradient by max_norm / max(norm, max_norm), so the global norm is at most
/// max_norm, and returns the norm before clipping. A non-finite norm leaves the gradients as they
/// are (and is returned, so the caller can skip the step).
template <Backend B>
double clip_by_global_norm(ParameterStore& store, double max_norm) {
  SEEDRL_REQUIRE(max_norm > 0.0 && std::isfinite(max_norm),
                 "clip_by_global_norm: max_norm must be positive and finite, got ", max_norm);
  const double norm = global_grad_norm<B>(store);
  if (std::isfinite(norm) && norm > max_norm) {
    B::scale(store.grads(), static_cast<float>(max_norm / norm));
  }
  return norm;
}

}  // namespace seedrl::nn
