// cpu::LayerNorm: layer normalisation of each row with a learned scale and shift.
#pragma once

#include "seedrl/backend/layers.hpp"

namespace seedrl::cpu {

/// y = gamma (x - mean) / sqrt(var + epsilon) + beta over each row of [N, features].
using LayerNorm = backend::LayerNorm<Device::cpu>;

}  // namespace seedrl::cpu
