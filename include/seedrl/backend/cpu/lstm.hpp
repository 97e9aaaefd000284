// cpu::LSTM: one LSTM layer over a time-major unroll, with backward through time.
#pragma once

#include "seedrl/backend/layers.hpp"

namespace seedrl::cpu {

using nn::LstmState;

/// The LSTM of backend/layers.hpp on the CPU: the input projection for all T*B frames is one
/// GEMM, the recurrence is one [B, H] x [H, 4H] GEMM per step plus fused element-wise gate math,
/// and backward through time does the same in reverse with the weight gradients as whole-unroll
/// GEMMs at the end.
using LSTM = backend::LSTM<Device::cpu>;

}  // namespace seedrl::cpu
