// Checked raw pointers to the f32 tensors a backend's whole-tensor operations take, shared by the
// CPU and the CUDA backend (each names its own device).
#pragma once

#include <array>

#include "seedrl/core/error.hpp"
#include "seedrl/core/tensor.hpp"

namespace seedrl::backend {

/// The data of `t`, which must be a defined f32 tensor on `device`; `what` names the operation in
/// the error.
inline float* f32_on(Device device, const Tensor& t, const char* what) {
  SEEDRL_REQUIRE(t.defined() && t.dtype() == DType::f32 && t.device() == device, what,
                 ": expected a defined f32 ", name(device), " tensor");
  return static_cast<float*>(t.raw_data());
}

/// Pointers to f32 tensors on `device` that all have the size of the first. Lambdas take them as
/// init captures (`[p = ptr[0]]`): clang before 16 cannot capture structured bindings.
template <class... Rest>
std::array<float*, 1 + sizeof...(Rest)> f32_same_size(Device device, const char* what,
                                                      const Tensor& first, const Rest&... rest) {
  SEEDRL_REQUIRE(((rest.numel() == first.numel()) && ...), what, ": tensor sizes differ (first is ",
                 first.shape(), ")");
  return {f32_on(device, first, what), f32_on(device, rest, what)...};
}

}  // namespace seedrl::backend
