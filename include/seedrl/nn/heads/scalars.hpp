// Scalars: K learned values that depend on no input (SAC's temperature log alpha), as a network's
// only head: the bias of a linear layer applied to a constant zero input, which broadcasts the
// values to every frame and sums their gradient over the frames with the layers every backend
// already has (as the Gaussian policy's free log std); that layer's weight stays zero. They start
// at NetworkOptions::initial_scalar. Output "scalars" [T, B, K]; parameters "scalars.*"; the
// description's words "scalars K".
#pragma once

#include <algorithm>
#include <span>
#include <string_view>

#include "seedrl/nn/description_reader.hpp"
#include "seedrl/nn/head.hpp"
#include "seedrl/nn/onnx_graph.hpp"

namespace seedrl::nn {

struct Scalars {
  static constexpr std::string_view kOutputs[] = {"scalars"};

  static bool in(const NetworkOptions& o) { return o.scalars > 0; }
  static void describe(const NetworkOptions& o, std::ostream& s) { s << " scalars " << o.scalars; }
  static bool parse(std::string_view word, DescriptionReader& r, NetworkOptions& o) {
    if (word != "scalars") return false;
    o.scalars = r.number();
    o.policy_value_heads = false;
    return true;
  }
  static void onnx(OnnxGraph& g, const NetworkOptions& o, const HeadOnnxInputs& in) {
    // [batch, K]: the values broadcast to the rows of the features.
    const std::string rows = g.apply("Shape", {in.features});
    const std::string batch =
        g.apply("Slice", {rows, g.int64_constant({0}), g.int64_constant({1})});
    const std::string shape = g.apply("Concat", {batch, g.int64_constant({o.scalars})},
                                      {OnnxAttribute::integer("axis", 0)});
    g.output(g.apply("Expand", {g.parameter("scalars.bias", {o.scalars}), shape}), "scalars",
             {o.scalars});
  }

  template <Backend B>
  class Layers final : public Head<B> {
   public:
    Layers(ParameterStore& store, const NetworkOptions& o, std::int64_t /*features*/)
        : count_(o.scalars), values_(store, "scalars", options(o)) {}

    std::span<const std::string_view> outputs() const override { return kOutputs; }
    void forward(const HeadInputs& in, NetworkOutputs& out) override {
      out.scalars = values_.forward(zeros(in.frames())).reshape({in.steps, in.batch, count_});
    }
    void backward(const NetworkGrads& grads, const HeadInputs& in, HeadGradients<B>&) override {
      if (!grads.scalars.defined()) return;
      require_tensor(grads.scalars, {in.steps, in.batch, count_}, DType::f32,
                     "Network::backward: gradient of ", "scalars");
      values_.backward(grads.scalars.reshape({in.frames(), count_}), false);  // the values only
    }
    double flops(bool) const override { return 0.0; }

   private:
    static LinearOptions options(const NetworkOptions& o) {
      LinearOptions l{1, o.scalars};
      l.weight_init = Init::zeros();
      l.bias_init = Init::constant(o.initial_scalar);
      return l;
    }
    // Rows of one zero buffer that only grows (no allocation per batch size).
    Tensor zeros(std::int64_t frames) {
      if (!zeros_.defined() || zeros_.dim(0) < frames)
        zeros_ = Tensor::zeros(
            {std::max<std::int64_t>(frames, 2 * (zeros_.defined() ? zeros_.dim(0) : 0)), 1},
            DType::f32, B::device);
      return zeros_.slice(0, frames);
    }

    std::int64_t count_;
    typename B::Linear values_;
    Tensor zeros_;
  };
};

}  // namespace seedrl::nn
