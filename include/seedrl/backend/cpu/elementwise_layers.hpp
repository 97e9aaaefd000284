// cpu::ReLU, cpu::Flatten and cpu::Rescale: the parameter-free layers of the CPU backend.
#pragma once

#include "seedrl/backend/layers.hpp"

namespace seedrl::cpu {

/// y = max(x, 0), vectorised and threaded with OpenMP above 64k elements.
using ReLU = backend::ReLU<Device::cpu>;
/// A reshape view; the same type on every backend.
using Flatten = backend::Flatten;
/// Conversion, layout change and scaling as one cached oneDNN reorder.
using Rescale = backend::Rescale<Device::cpu>;

}  // namespace seedrl::cpu
