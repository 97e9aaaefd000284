// Value: the state value, linear in the features, or in the separate value torso's features
// where the network has one (parameters "value.*", orthogonal weights of gain 1). Output
// "values" [T, B]; the ONNX output "value" [batch].
#pragma once

#include <span>
#include <string_view>

#include "seedrl/nn/description_reader.hpp"
#include "seedrl/nn/head.hpp"
#include "seedrl/nn/onnx_graph.hpp"

namespace seedrl::nn {

struct Value {
  static constexpr std::string_view kOutputs[] = {"values"};

  static bool in(const NetworkOptions& o) { return o.policy_value_heads; }
  static void describe(const NetworkOptions&, std::ostream&) {}
  static bool parse(std::string_view, DescriptionReader&, NetworkOptions&) { return false; }
  static void onnx(OnnxGraph& g, const NetworkOptions&, const HeadOnnxInputs& in) {
    const std::string v = g.linear(in.value_features, "value", in.value_size, 1, Activation::none);
    g.output(g.apply("Squeeze", {v, g.int64_constant({1})}), OnnxNames::value, {});
  }

  template <Backend B>
  class Layers final : public Head<B> {
   public:
    Layers(ParameterStore& store, const NetworkOptions&, std::int64_t features)
        : value_(store, "value", head_detail::linear(features, 1, 1.0)) {}

    std::span<const std::string_view> outputs() const override { return kOutputs; }
    void forward(const HeadInputs& in, NetworkOutputs& out) override {
      const Tensor& x = in.value_features.defined() ? in.value_features : in.features;
      out.values = value_.forward(x).reshape({in.steps, in.batch});
    }
    void backward(const NetworkGrads& grads, const HeadInputs& in,
                  HeadGradients<B>& into) override {
      if (!grads.values.defined()) return;
      require_tensor(grads.values, {in.steps, in.batch}, DType::f32,
                     "Network::backward: gradient of ", "values");
      const Tensor g = value_.backward(grads.values.reshape({in.frames(), 1}), true);
      if (in.value_features.defined()) {
        into.add_value_features(g);
      } else {
        into.add_features(g);
      }
    }
    double flops(bool train) const override { return head_detail::flops(value_.options(), train); }

   private:
    typename B::Linear value_;
  };
};

}  // namespace seedrl::nn
