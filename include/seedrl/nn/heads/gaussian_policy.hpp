// GaussianPolicy: a diagonal Gaussian over a box of D real values (parameters "policy_mean.*",
// "policy_log_std.*"). The mean is linear in the features; the log standard deviation is either
// a free parameter per dimension (state-independent, PPO's usual head; initial_log_std) or a
// second linear head (state_dependent_log_std: the description's word "log_std_head"). The free
// parameter is the bias of a linear layer applied to a constant zero input, which broadcasts it to
// every row and sums its gradient over the rows with the layers every backend already has; that
// layer's weight stays zero. Outputs "mean" and "log_std" [T, B, D].
#pragma once

#include <algorithm>
#include <span>
#include <string_view>

#include "seedrl/nn/description_reader.hpp"
#include "seedrl/nn/head.hpp"
#include "seedrl/nn/onnx_graph.hpp"

namespace seedrl::nn {

struct GaussianPolicy {
  static constexpr std::string_view kOutputs[] = {"mean", "log_std"};

  static bool in(const NetworkOptions& o) { return o.policy_value_heads && o.box_actions(); }
  static void describe(const NetworkOptions& o, std::ostream& s) {
    if (o.state_dependent_log_std) s << " log_std_head";
  }
  static bool parse(std::string_view word, DescriptionReader&, NetworkOptions& o) {
    if (word != "log_std_head") return false;
    o.state_dependent_log_std = true;
    return true;
  }
  static void onnx(OnnxGraph& g, const NetworkOptions& o, const HeadOnnxInputs& in) {
    const std::int64_t d = o.action_dims;
    const std::string mean = g.linear(in.features, "policy_mean", in.size, d, Activation::none);
    g.output(mean, OnnxNames::mean, {d});
    if (o.state_dependent_log_std) {
      g.output(g.linear(in.features, "policy_log_std", in.size, d, Activation::none),
               OnnxNames::log_std, {d});
    } else {  // the free log std, broadcast to every row
      g.output(
          g.apply("Expand", {g.parameter("policy_log_std.bias", {d}), g.apply("Shape", {mean})}),
          OnnxNames::log_std, {d});
    }
  }

  template <Backend B>
  class Layers final : public Head<B> {
   public:
    Layers(ParameterStore& store, const NetworkOptions& o, std::int64_t features)
        : dims_(o.action_dims),
          state_dependent_(o.state_dependent_log_std),
          mean_(store, "policy_mean", head_detail::linear(features, dims_, 0.01)),
          log_std_(store, "policy_log_std", log_std_options(o, features)) {}

    std::span<const std::string_view> outputs() const override { return kOutputs; }
    void forward(const HeadInputs& in, NetworkOutputs& out) override {
      out.mean = mean_.forward(in.features).reshape({in.steps, in.batch, dims_});
      out.log_std =
          log_std_.forward(log_std_input(in.features)).reshape({in.steps, in.batch, dims_});
    }
    void backward(const NetworkGrads& grads, const HeadInputs& in,
                  HeadGradients<B>& into) override {
      const Shape shape{in.steps, in.batch, dims_};
      if (grads.mean.defined()) {
        require_tensor(grads.mean, shape, DType::f32, "Network::backward: gradient of ", "mean");
        into.add_features(mean_.backward(grads.mean.reshape({in.frames(), dims_}), true));
      }
      if (!grads.log_std.defined()) return;
      require_tensor(grads.log_std, shape, DType::f32, "Network::backward: gradient of ",
                     "log_std");
      const Tensor g = log_std_.backward(grads.log_std.reshape({in.frames(), dims_}),
                                         state_dependent_);  // the free one: the parameter only
      if (state_dependent_) into.add_features(g);
    }
    double flops(bool train) const override {
      return head_detail::flops(mean_.options(), train) +
             (state_dependent_ ? head_detail::flops(log_std_.options(), train) : 0.0);
    }

   private:
    static LinearOptions log_std_options(const NetworkOptions& o, std::int64_t features) {
      if (o.state_dependent_log_std) {
        LinearOptions l = head_detail::linear(features, o.action_dims, 0.01);
        l.bias_init = Init::constant(o.initial_log_std);
        return l;
      }
      LinearOptions l{1, o.action_dims};  // the free log std: the bias, on a constant zero input
      l.weight_init = Init::zeros();
      l.bias_init = Init::constant(o.initial_log_std);
      return l;
    }
    // The free log std's input: zeros [frames, 1] (the features themselves for a log std head),
    // rows of one zero buffer that only grows (no allocation per batch size).
    Tensor log_std_input(const Tensor& features) {
      if (state_dependent_) return features;
      const std::int64_t frames = features.dim(0);
      if (!zeros_.defined() || zeros_.dim(0) < frames)
        zeros_ = Tensor::zeros(
            {std::max<std::int64_t>(frames, 2 * (zeros_.defined() ? zeros_.dim(0) : 0)), 1},
            DType::f32, B::device);
      return zeros_.slice(0, frames);
    }

    std::int64_t dims_;
    bool state_dependent_;
    typename B::Linear mean_, log_std_;
    Tensor zeros_;
  };
};

}  // namespace seedrl::nn
