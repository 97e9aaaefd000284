// Head<B>: one output part of a Network. A head reads the trunk's features (those of the shared
// torso and core, or the value torso's) and any named inputs the caller gives the network (a
// critic's action), writes named outputs (NetworkOutputs: "logits", "mean", "log_std", "values",
// "q"), and in backward turns the gradients of those outputs into gradients of its parameters, of
// the features and of its inputs.
//
//   features [frames, F] ──┬── head 1 ──▶ out.head("logits")    grads.head("logits") ──┐
//   (inputs by name) ──────┴── head 2 ──▶ out.head("values")    grads.head("values") ──┤
//                                                                 HeadGradients ◀──────┘
//
// Each kind of head is one type in nn/heads/ (its description words, its ONNX nodes, and its
// layers on a backend, Kind::Layers<B>, a Head<B>); nn/heads/head_kinds.hpp lists the kinds in
// the order a network builds them. Not thread-safe: a head belongs to one network.
#pragma once

#include <concepts>
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/nn/backend.hpp"
#include "seedrl/nn/network_options.hpp"
#include "seedrl/nn/parameter.hpp"

namespace seedrl::nn {

/// An input a network's caller gives besides the observations, by name: a critic's "action"
/// [T, B, D], on the backend's device.
struct NetworkInput {
  std::string_view name;
  Tensor value;
};

/// What a head's forward (and backward) reads.
struct HeadInputs {
  Tensor features;        ///< [frames, F]: the shared torso's (and core's) output
  Tensor value_features;  ///< [frames, F]: the separate value torso's (undefined without one)
  std::span<const NetworkInput> inputs;
  std::int64_t steps = 0, batch = 0;

  std::int64_t frames() const { return steps * batch; }
  /// The named input, checked to be f32 [steps, batch, dims...]; throws naming `head`.
  const Tensor& input(std::string_view name, const Shape& dims, std::string_view head) const {
    for (const NetworkInput& i : inputs) {
      if (i.name != name) continue;
      require_tensor(i.value, dims.prepend({steps, batch}), DType::f32, "Network: the ", head,
                     " head's input '", name, "'");
      return i.value;
    }
    fail("Network: the ", head, " head needs the input '", name, "' (f32 [T, B, ",
         dims.to_string().substr(1), "), given beside the observations");
  }
};

/// What every head's backward leaves, summed over the heads: the gradients of the shared features
/// and of the value torso's, and of named inputs.
template <Backend B>
class HeadGradients {
 public:
  /// Adds `g` [frames, F] to the gradient of the shared features (the first one is kept as it
  /// is: a layer's buffer, added to in place).
  void add_features(const Tensor& g) { add(features_, g); }
  void add_value_features(const Tensor& g) { add(value_features_, g); }
  /// The gradient of input `name` (the head that reads it sets it).
  void set_input(std::string_view name, const Tensor& g) {
    for (auto& [n, t] : inputs_) {
      if (n == name) {
        t = g;
        return;
      }
    }
    inputs_.emplace_back(std::string(name), g);
  }

  const Tensor& features() const { return features_; }
  const Tensor& value_features() const { return value_features_; }
  /// The gradient of input `name` from the last backward; undefined when no head set it.
  const Tensor& input(std::string_view name) const {
    for (const auto& [n, t] : inputs_)
      if (n == name) return t;
    static const Tensor undefined;
    return undefined;
  }
  void clear() {
    features_ = {};
    value_features_ = {};
    for (auto& entry : inputs_) entry.second = {};
  }

 private:
  static void add(Tensor& into, const Tensor& g) {
    if (!into.defined()) {
      into = g;
    } else {
      B::add_to(into, g);
    }
  }
  Tensor features_, value_features_;
  std::vector<std::pair<std::string, Tensor>> inputs_;
};

template <Backend B>
class Head {
 public:
  virtual ~Head() = default;

  /// The outputs it writes (names of kHeadNames).
  virtual std::span<const std::string_view> outputs() const = 0;
  /// Computes its outputs from `in` into `out`.
  virtual void forward(const HeadInputs& in, NetworkOutputs& out) = 0;
  /// From the gradients of its outputs in `grads` (an undefined one counts as zero), writes its
  /// parameters' gradients and adds what flows back to `into`. `in` is the last forward's.
  virtual void backward(const NetworkGrads& grads, const HeadInputs& in,
                        HeadGradients<B>& into) = 0;
  /// Useful FLOPs per frame of a forward, or of a forward and a backward.
  virtual double flops(bool train) const = 0;

  /// Whether `grads` misses the gradient of one of its outputs: then some of its layers are not
  /// reached, and the network zeroes every gradient first so that theirs read zero.
  bool partial(const NetworkGrads& grads) const {
    for (std::string_view name : outputs())
      if (!grads.head(name).defined()) return true;
    return false;
  }
};

/// The shared pieces of the head kinds' layers.
namespace head_detail {

/// A head's linear layer: orthogonal weights of `gain`, zero bias (the usual RL heads).
inline LinearOptions linear(std::int64_t in, std::int64_t out, double gain) {
  LinearOptions o{in, out};
  o.weight_init = Init::orthogonal(gain);
  o.bias_init = Init::zeros();
  return o;
}

/// FLOPs per frame of a per-row layer `o` (LinearOptions, LayerNormOptions), forward only or
/// forward and backward (input gradient included).
template <typename Options>
requires requires(const Options& o) {
  { o.forward_flops(1) } -> std::convertible_to<double>;
  { o.backward_flops(1, true) } -> std::convertible_to<double>;
}
double flops(const Options& o, bool train) {
  return o.forward_flops(1) + (train ? o.backward_flops(1, true) : 0.0);
}

}  // namespace head_detail

}  // namespace seedrl::nn
