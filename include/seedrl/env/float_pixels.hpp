// FloatPixels: an environment's u8 observations as f32, for an MLP torso on flattened pixels.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/env/environment.hpp"

namespace seedrl {

/// An environment's u8 observation of any shape as f32 [D] (the values unchanged), for an MLP
/// torso on flattened pixels: MinAtar's [10, 10, C] as [100 C], as gymnax's MinAtar networks
/// see it.
template <Environment Env>
class FloatPixels {
 public:
  explicit FloatPixels(Env env) : env_(std::move(env)), inner_(env_.observation_spec()) {
    SEEDRL_REQUIRE(inner_.dtype == DType::u8, "FloatPixels: observations must be u8");
  }
  TensorSpec observation_spec() const { return {{inner_.shape.numel()}, DType::f32}; }
  ActionSpec action_spec() const { return env_.action_spec(); }
  void reset(const Tensor& observation) {
    env_.reset(pixels());
    convert(observation);
  }
  StepResult step(std::int32_t action, const Tensor& observation) {
    const StepResult r = env_.step(action, pixels());
    convert(observation);
    return r;
  }

 private:
  Tensor pixels() {
    pixels_.resize(static_cast<std::size_t>(inner_.shape.numel()));
    return Tensor::from_blob(pixels_.data(), inner_.shape, DType::u8);
  }
  void convert(const Tensor& observation) const {
    float* out = observation.data<float>();
    for (std::size_t i = 0; i < pixels_.size(); ++i) out[i] = static_cast<float>(pixels_[i]);
  }

  Env env_;
  TensorSpec inner_;
  std::vector<std::uint8_t> pixels_;
};

}  // namespace seedrl
