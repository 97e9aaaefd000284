// PolicyLogits: a categorical policy over N discrete actions, logits linear in the features
// (parameters "policy.*", orthogonal weights of gain 0.01). Output "logits" [T, B, N].
#pragma once

#include <span>
#include <string_view>

#include "seedrl/nn/description_reader.hpp"
#include "seedrl/nn/head.hpp"
#include "seedrl/nn/onnx_graph.hpp"

namespace seedrl::nn {

struct PolicyLogits {
  static constexpr std::string_view kOutputs[] = {"logits"};

  static bool in(const NetworkOptions& o) { return o.policy_value_heads && !o.box_actions(); }
  static void describe(const NetworkOptions&, std::ostream&) {}
  static bool parse(std::string_view, DescriptionReader&, NetworkOptions&) { return false; }
  static void onnx(OnnxGraph& g, const NetworkOptions& o, const HeadOnnxInputs& in) {
    const std::int64_t n = o.num_actions;
    g.output(g.linear(in.features, "policy", in.size, n, Activation::none), OnnxNames::logits, {n});
  }

  template <Backend B>
  class Layers final : public Head<B> {
   public:
    Layers(ParameterStore& store, const NetworkOptions& o, std::int64_t features)
        : actions_(o.num_actions),
          policy_(store, "policy", head_detail::linear(features, o.num_actions, 0.01)) {}

    std::span<const std::string_view> outputs() const override { return kOutputs; }
    void forward(const HeadInputs& in, NetworkOutputs& out) override {
      out.logits = policy_.forward(in.features).reshape({in.steps, in.batch, actions_});
    }
    void backward(const NetworkGrads& grads, const HeadInputs& in,
                  HeadGradients<B>& into) override {
      if (!grads.logits.defined()) return;
      require_tensor(grads.logits, {in.steps, in.batch, actions_}, DType::f32,
                     "Network::backward: gradient of ", "logits");
      into.add_features(policy_.backward(grads.logits.reshape({in.frames(), actions_}), true));
    }
    double flops(bool train) const override { return head_detail::flops(policy_.options(), train); }

   private:
    std::int64_t actions_;
    typename B::Linear policy_;
  };
};

}  // namespace seedrl::nn
