// cpu::Linear: a fully connected layer on oneDNN inner-product primitives.
#pragma once

#include "seedrl/backend/layers.hpp"

namespace seedrl::cpu {

/// y = act(x W^T + b) on [N, in_features] -> [N, out_features], f32 (contract in
/// backend/layers.hpp). Primitives are created once per batch size and cached; the forward keeps
/// the weights in oneDNN's preferred layout and repacks them only when the store's version moves.
using Linear = backend::Linear<Device::cpu>;

}  // namespace seedrl::cpu
