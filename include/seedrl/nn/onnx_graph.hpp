// OnnxGraph: the ONNX graph an exporter builds, as the parts of a network that write their own
// nodes (head kinds, nn/heads/) see it. io/onnx.hpp's exporter implements it; the network's parts
// never touch protobuf. Values are named by strings; every tensor is f32 unless a node says.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/core/shape.hpp"
#include "seedrl/nn/layer_options.hpp"

namespace seedrl::nn {

/// An attribute of an ONNX node: an integer (`list` false) or a list of integers.
struct OnnxAttribute {
  std::string name;
  std::vector<std::int64_t> values;
  bool list = false;

  static OnnxAttribute integer(std::string name, std::int64_t value) {
    return {std::move(name), {value}, false};
  }
  static OnnxAttribute integers(std::string name, std::vector<std::int64_t> values) {
    return {std::move(name), std::move(values), true};
  }
};

/// The names of an exported model's inputs and outputs (docs/deployment.md lists their shapes).
struct OnnxNames {
  static constexpr const char* observations = "observations";
  static constexpr const char* lstm_h = "lstm_h";
  static constexpr const char* lstm_c = "lstm_c";
  static constexpr const char* action = "action";  ///< a critic's input
  /// u8 [batch, A], 1 where an action is legal: an input where the run's steps declared a mask
  static constexpr const char* action_mask = "action_mask";
  /// [batch, A]; with K action branches (NetworkOptions::action_branches) also one output per
  /// branch, "logits_0" ... "logits_<K-1>" [batch, n_k] (and "q_0" ... for Q-values)
  static constexpr const char* logits = "logits";
  static constexpr const char* mean = "mean";
  static constexpr const char* log_std = "log_std";
  static constexpr const char* value = "value";
  static constexpr const char* q = "q";
  static constexpr const char* lstm_h_out = "lstm_h_out";
  static constexpr const char* lstm_c_out = "lstm_c_out";
};

/// What a head's ONNX nodes start from: the features value (and its size) and the value torso's
/// (the same as the features without a separate value torso).
struct HeadOnnxInputs {
  std::string features;
  std::int64_t size = 0;
  std::string value_features;
  std::int64_t value_size = 0;
};

class OnnxGraph {
 public:
  virtual ~OnnxGraph() = default;

  /// y = act(x W^T + b) for seedrl's Linear layer `layer`: parameters "<layer>.weight" [out, in]
  /// and, where `bias`, "<layer>.bias" [out], checked against the store. Returns y.
  virtual std::string linear(const std::string& x, const std::string& layer, std::int64_t in,
                             std::int64_t out, Activation activation, bool bias = true) = 0;
  /// A node of ONNX operator `op` on `inputs`; returns its single output (a fresh name).
  virtual std::string apply(std::string_view op, const std::vector<std::string>& inputs,
                            const std::vector<OnnxAttribute>& attributes = {}) = 0;
  /// The parameter `name` of the network, checked to be `shape`, as a constant of the graph.
  virtual std::string parameter(const std::string& name, const Shape& shape) = 0;
  /// A constant i64 vector (axes, shapes).
  virtual std::string int64_constant(const std::vector<std::int64_t>& values) = 0;
  /// A constant f32 scalar.
  virtual std::string float_scalar(float value) = 0;
  /// A graph input named `name`, f32 [batch, dims...]; returns its value.
  virtual std::string input(std::string_view name, const std::vector<std::int64_t>& dims) = 0;
  /// `value` becomes the graph output `name`, f32 [batch, dims...].
  virtual void output(const std::string& value, std::string_view name,
                      const std::vector<std::int64_t>& dims) = 0;
};

}  // namespace seedrl::nn
