// cpu::Conv2d: a 2-D convolution on oneDNN primitives over channels-last images.
#pragma once

#include "seedrl/backend/layers.hpp"

namespace seedrl::cpu {

/// act(conv(x, W) + b) on NHWC f32 images (contract in backend/layers.hpp). Activations stay
/// channels-last (measured fastest for these shapes on AVX-512, and no reorder between layers);
/// oneDNN picks the weight layout (format_tag::any) and the layer reorders the weights into it on
/// each forward and the weight gradient back out of it on each backward. Primitives and reorders
/// are created once per input shape and cached; the backward-data primitive is only created when
/// an input gradient is asked for.
using Conv2d = backend::Conv2d<Device::cpu>;

}  // namespace seedrl::cpu
