// What the CUDA conformance programs share (test_cuda_conformance: layers, networks, optimizers;
// test_cuda_learners: learners, Policy, whole runs): random inputs, copies to the GPU, the
// closeness check, and a main that skips (exit 77, reported as skipped by CTest) without a GPU.
//
// Tolerances: TF32 is off (the default), so both backends compute in f32 and differ only in
// summation order; results are compared as
//   max |gpu - cpu| <= atol + rtol * max |cpu|
// with rtol 1e-4 (2e-4 for gradients reduced over many frames) and atol 1e-6.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "seedrl/backend/cuda/backend.hpp"
#include "seedrl/core/random.hpp"
#include "support/printing.hpp"

namespace seedrl::test {

inline constexpr double kRtol = 1e-4, kGradRtol = 2e-4, kAtol = 1e-6;

inline Tensor random_tensor(const Shape& shape, Rng& rng, DType dtype = DType::f32) {
  Tensor t = Tensor::empty(shape, dtype);
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    if (dtype == DType::u8) {
      t.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(rng.below(256));
    } else {
      t.data<float>()[i] = static_cast<float>(rng.uniform(-1.0, 1.0));
    }
  }
  return t;
}

inline Tensor on_gpu(const Tensor& t) {
  return t.clone(Device::cuda);
}

// Checks gpu (any device) against cpu within atol + rtol * max|cpu|.
inline void check_close(const Tensor& cpu_t, const Tensor& gpu_t, double rtol,
                        const std::string& what) {
  REQUIRE_MESSAGE(gpu_t.defined(), what, ": GPU result undefined");
  REQUIRE_MESSAGE(cpu_t.shape() == gpu_t.shape(), what, ": shapes ", cpu_t.shape(), " vs ",
                  gpu_t.shape());
  CHECK_MESSAGE(gpu_t.device() == Device::cuda, what, ": GPU result lives on ", gpu_t.device());
  const Tensor host = gpu_t.clone(Device::cpu);
  double max_diff = 0.0, max_ref = 0.0;
  for (std::int64_t i = 0; i < cpu_t.numel(); ++i) {
    const double a = cpu_t.data<float>()[i], b = host.data<float>()[i];
    max_ref = std::max(max_ref, std::abs(a));
    max_diff = std::max(max_diff, std::isfinite(b) ? std::abs(a - b) : INFINITY);
  }
  CHECK_MESSAGE(max_diff <= kAtol + rtol * max_ref, what, ": max |gpu - cpu| = ", max_diff,
                " with max |cpu| = ", max_ref);
}

/// The program's main: without a usable GPU it says why and exits with 77.
inline int run_on_gpu(int argc, char** argv) {
  if (!cuda::available()) {
    std::printf("skipped: no usable CUDA device (%s)\n", cuda::unavailable_reason().c_str());
    return 77;
  }
  std::printf("%s\n", cuda::device_info().describe().c_str());
  doctest::Context context(argc, argv);
  return context.run();
}

}  // namespace seedrl::test
