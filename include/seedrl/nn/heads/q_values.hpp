// QValues: action values linear in the features (parameters "q.*", orthogonal weights of gain
// 1). Output "q" [T, B, N].
#pragma once

#include <span>
#include <string_view>

#include "seedrl/nn/description_reader.hpp"
#include "seedrl/nn/head.hpp"
#include "seedrl/nn/onnx_graph.hpp"

namespace seedrl::nn {

struct QValues {
  static constexpr std::string_view kOutputs[] = {"q"};

  static bool in(const NetworkOptions& o) { return o.q_head && !o.dueling; }
  static void describe(const NetworkOptions&, std::ostream&) {}
  static bool parse(std::string_view, DescriptionReader&, NetworkOptions&) { return false; }
  static void onnx(OnnxGraph& g, const NetworkOptions& o, const HeadOnnxInputs& in) {
    const std::int64_t n = o.num_actions;
    g.output(g.linear(in.features, "q", in.size, n, Activation::none), OnnxNames::q, {n});
  }

  template <Backend B>
  class Layers final : public Head<B> {
   public:
    Layers(ParameterStore& store, const NetworkOptions& o, std::int64_t features)
        : actions_(o.num_actions), q_(store, "q", head_detail::linear(features, actions_, 1.0)) {}

    std::span<const std::string_view> outputs() const override { return kOutputs; }
    void forward(const HeadInputs& in, NetworkOutputs& out) override {
      out.q = q_.forward(in.features).reshape({in.steps, in.batch, actions_});
    }
    void backward(const NetworkGrads& grads, const HeadInputs& in,
                  HeadGradients<B>& into) override {
      if (!grads.q.defined()) return;
      require_tensor(grads.q, {in.steps, in.batch, actions_}, DType::f32,
                     "Network::backward: gradient of ", "q");
      into.add_features(q_.backward(grads.q.reshape({in.frames(), actions_}), true));
    }
    double flops(bool train) const override { return head_detail::flops(q_.options(), train); }

   private:
    std::int64_t actions_;
    typename B::Linear q_;
  };
};

}  // namespace seedrl::nn
