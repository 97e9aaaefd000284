// The per-element update rules of the optimizers, shared by every backend.
//
// An optimizer (nn/optimizer.hpp) turns its options and step count into one of these
// coefficient structs; a backend applies the matching *_element function to every parameter.
#pragma once

#include <math.h>  // sqrtf, callable from host and device code

#include "seedrl/core/host_device.hpp"

namespace seedrl::nn {

/// Adam (Kingma & Ba 2015) with bias correction, epsilon added to sqrt(v_hat) as in PyTorch:
/// m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  p -= lr * (m/c1) / (sqrt(v/c2) + eps),
/// with c1 = 1 - b1^t and c2 = 1 - b2^t at step t (counted from 1).
struct AdamStep {
  float learning_rate;
  float beta1;
  float beta2;
  float epsilon;
  float bias_correction1;
  float bias_correction2;
};

/// Written as PyTorch computes it, p -= (lr / c1) m / (sqrt(v) / sqrt(c2) + eps): one division
/// and one square root per element, the rest constant over the parameters (a caller that passes
/// `s` by value lets the compiler hoist it out of the loop).
SEEDRL_HOST_DEVICE inline void adam_element(float& p, float g, float& m, float& v,
                                            const AdamStep& s) {
  m = s.beta1 * m + (1.0f - s.beta1) * g;
  v = s.beta2 * v + (1.0f - s.beta2) * g * g;
  const float step_size = s.learning_rate / s.bias_correction1;
  const float inverse_sqrt_c2 = 1.0f / sqrtf(s.bias_correction2);
  p -= step_size * m / (sqrtf(v) * inverse_sqrt_c2 + s.epsilon);
}

/// RMSProp as in TensorFlow's ApplyRMSProp / ApplyCenteredRMSProp (IMPALA's optimizer):
/// ms = rho ms + (1-rho) g^2;  centered: mg = rho mg + (1-rho) g, denom = ms - mg^2, else ms;
/// mom = mu mom + lr g / sqrt(denom + eps)   (or / (sqrt(denom) + eps) when !epsilon_inside_sqrt);
/// p -= mom.
struct RmsPropStep {
  float learning_rate;
  float decay;
  float momentum;
  float epsilon;
  bool centered;
  bool epsilon_inside_sqrt;
};

SEEDRL_HOST_DEVICE inline void rmsprop_element(float& p, float g, float& mean_square,
                                               float& mean_grad, float& mom, const RmsPropStep& s) {
  mean_square = s.decay * mean_square + (1.0f - s.decay) * g * g;
  float denom = mean_square;
  if (s.centered) {
    mean_grad = s.decay * mean_grad + (1.0f - s.decay) * g;
    denom -= mean_grad * mean_grad;
  }
  const float scaled =
      s.epsilon_inside_sqrt ? g / sqrtf(denom + s.epsilon) : g / (sqrtf(denom) + s.epsilon);
  mom = s.momentum * mom + s.learning_rate * scaled;
  p -= mom;
}

/// Stochastic gradient descent with heavy-ball momentum (PyTorch form):
/// buf = mu buf + g;  p -= lr * buf   (buf = g when mu = 0).
struct SgdStep {
  float learning_rate;
  float momentum;
};

SEEDRL_HOST_DEVICE inline void sgd_element(float& p, float g, float& buf, const SgdStep& s) {
  buf = s.momentum * buf + g;
  p -= s.learning_rate * buf;
}

}  // namespace seedrl::nn
