// Options of the layers every backend implements, with their shape rules and FLOP counts.
//
// Backends (seedrl::cpu, seedrl::cuda) implement layers with these options; the shape and cost
// formulas live here once so that backends cannot disagree about them.
//
// Layout conventions: a Linear sees [N, features]; Conv2d sees channels-last images
// [N, height, width, channels] (NHWC) and produces NHWC; weights are stored PyTorch-style
// ([out, in] and [out_channels, in_channels, kernel, kernel]).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "seedrl/core/error.hpp"
#include "seedrl/core/shape.hpp"
#include "seedrl/nn/init.hpp"

namespace seedrl::nn {

/// Activation fused into the output of a Linear or Conv2d (tanh: Linear only).
enum class Activation { none, relu, tanh };

inline const char* activation_name(Activation a) {
  return a == Activation::relu ? "relu" : a == Activation::tanh ? "tanh" : "none";
}

/// y = act(x W^T + b) on [N, in_features] -> [N, out_features].
struct LinearOptions {
  std::int64_t in_features = 0;
  std::int64_t out_features = 0;
  bool bias = true;
  Activation activation = Activation::none;
  Init weight_init = Init::fan_in_uniform();
  Init bias_init = Init::fan_in_uniform();

  void validate(std::string_view layer) const {
    SEEDRL_REQUIRE(in_features > 0, layer, ": in_features must be positive, got ", in_features);
    SEEDRL_REQUIRE(out_features > 0, layer, ": out_features must be positive, got ", out_features);
  }
  Shape output_shape(const Shape& input, const std::string& layer) const {
    SEEDRL_REQUIRE(input.rank() == 2 && input[1] == in_features, layer, ": expected input [N, ",
                   in_features, "], got ", input);
    return {input[0], out_features};
  }
  double forward_flops(std::int64_t n) const {
    return 2.0 * static_cast<double>(n) * static_cast<double>(in_features * out_features);
  }
  /// Weight gradient always; input gradient only when asked.
  double backward_flops(std::int64_t n, bool input_grad) const {
    return forward_flops(n) * (input_grad ? 2.0 : 1.0);
  }
};

/// 2-D convolution on NHWC images with a square kernel, symmetric zero padding.
struct Conv2dOptions {
  std::int64_t in_channels = 0;
  std::int64_t out_channels = 0;
  std::int64_t kernel = 3;
  std::int64_t stride = 1;
  std::int64_t padding = 0;
  bool bias = true;
  Activation activation = Activation::none;
  Init weight_init = Init::fan_in_uniform();
  Init bias_init = Init::fan_in_uniform();

  void validate(std::string_view layer) const {
    SEEDRL_REQUIRE(in_channels > 0, layer, ": in_channels must be positive, got ", in_channels);
    SEEDRL_REQUIRE(out_channels > 0, layer, ": out_channels must be positive, got ", out_channels);
    SEEDRL_REQUIRE(kernel > 0, layer, ": kernel must be positive, got ", kernel);
    SEEDRL_REQUIRE(stride > 0, layer, ": stride must be positive, got ", stride);
    SEEDRL_REQUIRE(padding >= 0, layer, ": padding must be >= 0, got ", padding);
    SEEDRL_REQUIRE(activation != Activation::tanh, layer,
                   ": Conv2d fuses no activation or ReLU; tanh is for Linear layers");
  }
  std::int64_t output_size(std::int64_t input_size) const {
    return (input_size + 2 * padding - kernel) / stride + 1;
  }
  Shape output_shape(const Shape& input, const std::string& layer) const {
    SEEDRL_REQUIRE(input.rank() == 4 && input[3] == in_channels, layer,
                   ": expected NHWC input [N, H, W, ", in_channels, "], got ", input);
    SEEDRL_REQUIRE(input[1] + 2 * padding >= kernel && input[2] + 2 * padding >= kernel, layer,
                   ": input ", input, " is smaller than the ", kernel, "x", kernel,
                   " kernel (padding ", padding, ")");
    return {input[0], output_size(input[1]), output_size(input[2]), out_channels};
  }
  double forward_flops(const Shape& input) const {
    const Shape out = output_shape(input, "Conv2d");
    return 2.0 * static_cast<double>(out.numel()) *
           static_cast<double>(in_channels * kernel * kernel);
  }
  double backward_flops(const Shape& input, bool input_grad) const {
    return forward_flops(input) * (input_grad ? 2.0 : 1.0);
  }
};

/// One LSTM layer over a time-major sequence [T, B, input_size] -> [T, B, hidden_size], gates in
/// PyTorch order (input, forget, cell, output), one bias vector of 4 * hidden_size.
struct LstmOptions {
  std::int64_t input_size = 0;
  std::int64_t hidden_size = 0;
  Init input_weight_init = Init::fan_in_uniform();
  Init recurrent_weight_init = Init::fan_in_uniform();
  Init bias_init = Init::zeros();

  void validate(std::string_view layer) const {
    SEEDRL_REQUIRE(input_size > 0, layer, ": input_size must be positive, got ", input_size);
    SEEDRL_REQUIRE(hidden_size > 0, layer, ": hidden_size must be positive, got ", hidden_size);
  }
  double forward_flops(std::int64_t frames) const {
    return 2.0 * static_cast<double>(frames) *
           static_cast<double>(4 * hidden_size * (input_size + hidden_size));
  }
  double backward_flops(std::int64_t frames, bool input_grad) const {
    const double recurrent = 2.0 * static_cast<double>(frames * 4 * hidden_size * hidden_size);
    const double input = 2.0 * static_cast<double>(frames * 4 * hidden_size * input_size);
    return 2.0 * recurrent + input * (input_grad ? 2.0 : 1.0);
  }
};

/// Layer normalisation over the features of each row, with a learned scale and shift:
/// y = gamma (x - mean) / sqrt(var + epsilon) + beta on [N, features] -> [N, features], the mean
/// and the (biased) variance over the row. gamma starts at 1, beta at 0 (PyTorch's LayerNorm).
struct LayerNormOptions {
  std::int64_t features = 0;
  float epsilon = 1e-5f;

  void validate(std::string_view layer) const {
    SEEDRL_REQUIRE(features > 0, layer, ": features must be positive, got ", features);
    SEEDRL_REQUIRE(epsilon > 0.0f, layer, ": epsilon must be positive, got ", epsilon);
  }
  Shape output_shape(const Shape& input, const std::string& layer) const {
    SEEDRL_REQUIRE(input.rank() == 2 && input[1] == features, layer, ": expected input [N, ",
                   features, "], got ", input);
    return input;
  }
  // Per element: the mean, the variance, the normalisation and the affine map.
  double forward_flops(std::int64_t n) const {
    return 8.0 * static_cast<double>(n) * static_cast<double>(features);
  }
  double backward_flops(std::int64_t n, bool input_grad) const {
    return (input_grad ? 10.0 : 4.0) * static_cast<double>(n) * static_cast<double>(features);
  }
};

/// Converts an image batch to f32 channels-last and multiplies by `scale`: u8 pixels become
/// [0, 1] with scale 1/255. Input is [N, C, H, W] when channels_first_input, else [N, H, W, C];
/// the output is always [N, H, W, C]. An input layer: it has no gradient.
struct RescaleOptions {
  float scale = 1.0f;
  bool channels_first_input = false;

  Shape output_shape(const Shape& input, const std::string& layer) const {
    SEEDRL_REQUIRE(input.rank() == 4, layer, ": expected a 4-D image batch, got ", input);
    return channels_first_input ? Shape{input[0], input[2], input[3], input[1]} : input;
  }
};

}  // namespace seedrl::nn
