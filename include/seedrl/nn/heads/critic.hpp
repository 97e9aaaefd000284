// Critic: the value Q(x, a) of a given action a, for off-policy actor-critics (SAC): the action
// enters beside the trunk's features, h1 = ReLU(W_x features + W_a a + b), then the hidden layers
// of `critic_hidden` with ReLU and a linear output. Splitting the first layer's weight into W_x
// and W_a is one linear layer on the concatenation [features, a] without building it (every
// backend has linear layers; none needs a concatenation). With an MLP torso of no hidden layers
// the features are the observations, and the critic is CleanRL's SAC Q-network: an MLP on
// [observation, action]. Its layers start as PyTorch's do: uniform within 1 / sqrt(fan in), the
// fan in of the first being F + D.
//
// Input "action" f32 [T, B, D] (D = action_dims), beside the observations; output "q" [T, B];
// backward also gives the gradient of the action (Network::input_gradient("action")), which an
// actor's loss needs. Parameters "critic.fc1.*" (W_x, b), "critic.action.weight" (W_a),
// "critic.fc2.*" ..., "critic.q.*". The description's words: "critic [256,256]".
#pragma once

#include <cmath>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/nn/description_reader.hpp"
#include "seedrl/nn/head.hpp"
#include "seedrl/nn/onnx_graph.hpp"

namespace seedrl::nn {

struct Critic {
  static constexpr std::string_view kOutputs[] = {"q"};
  static constexpr std::string_view kInput = "action";

  static bool in(const NetworkOptions& o) { return o.critic; }
  static void describe(const NetworkOptions& o, std::ostream& s) {
    s << " critic [";
    for (std::size_t i = 0; i < o.critic_hidden.size(); ++i)
      s << (i ? "," : "") << o.critic_hidden[i];
    s << "]";
  }
  static bool parse(std::string_view word, DescriptionReader& r, NetworkOptions& o) {
    if (word != "critic") return false;
    o.critic = true;
    o.critic_hidden = r.list();
    o.policy_value_heads = false;
    return true;
  }
  static void onnx(OnnxGraph& g, const NetworkOptions& o, const HeadOnnxInputs& in) {
    const std::int64_t d = o.action_dims;
    const std::string action = g.input(OnnxNames::action, {d});
    std::int64_t width = o.critic_hidden.empty() ? 1 : o.critic_hidden[0];
    const std::string from_features =
        g.linear(in.features, layer_name(o, 0), in.size, width, Activation::none);
    const std::string from_action =
        g.linear(action, "critic.action", d, width, Activation::none, false);
    std::string x = g.apply("Add", {from_features, from_action});
    if (!o.critic_hidden.empty()) x = g.apply("Relu", {x});
    for (std::size_t i = 1; i <= o.critic_hidden.size(); ++i) {
      const bool last = i == o.critic_hidden.size();
      const std::int64_t out = last ? 1 : o.critic_hidden[i];
      x = g.linear(x, layer_name(o, i), width, out, last ? Activation::none : Activation::relu);
      width = out;
    }
    g.output(g.apply("Squeeze", {x, g.int64_constant({1})}), OnnxNames::q, {});
  }

  /// The name of layer i (0: the first, on the features; the last: the output "critic.q").
  static std::string layer_name(const NetworkOptions& o, std::size_t i) {
    return i == o.critic_hidden.size() ? std::string("critic.q") : str_cat("critic.fc", i + 1);
  }

  template <Backend B>
  class Layers final : public Head<B> {
   public:
    Layers(ParameterStore& store, const NetworkOptions& o, std::int64_t features)
        : dims_(o.action_dims) {
      const std::vector<std::int64_t>& hidden = o.critic_hidden;
      const std::int64_t first = hidden.empty() ? 1 : hidden[0];
      const double bound = 1.0 / std::sqrt(static_cast<double>(features + dims_));
      LinearOptions x{features, first};
      x.weight_init = x.bias_init = Init::uniform(bound);
      layers_.reserve(hidden.size() + 1);
      LinearOptions a{dims_, first};
      a.bias = false;
      a.weight_init = Init::uniform(bound);
      layers_.emplace_back(store, layer_name(o, 0), x);
      action_.emplace(store, "critic.action", a);
      for (std::size_t i = 1; i <= hidden.size(); ++i) {
        const bool last = i == hidden.size();
        LinearOptions l{hidden[i - 1], last ? 1 : hidden[i]};
        l.activation = last ? Activation::none : Activation::relu;
        layers_.emplace_back(store, layer_name(o, i), l);  // fan-in uniform: PyTorch's default
      }
      if (!hidden.empty()) relu_.emplace(str_cat("critic.relu1"));
    }

    std::span<const std::string_view> outputs() const override { return kOutputs; }
    void forward(const HeadInputs& in, NetworkOutputs& out) override {
      const Tensor& action = in.input(kInput, Shape{dims_}, "critic");
      Tensor x = layers_[0].forward(in.features);
      B::add_to(x, action_->forward(action.reshape({in.frames(), dims_})));
      if (relu_) x = relu_->forward(x);
      for (std::size_t i = 1; i < layers_.size(); ++i) x = layers_[i].forward(x);
      out.q = x.reshape({in.steps, in.batch});
    }
    void backward(const NetworkGrads& grads, const HeadInputs& in,
                  HeadGradients<B>& into) override {
      if (!grads.q.defined()) return;
      require_tensor(grads.q, {in.steps, in.batch}, DType::f32, "Network::backward: gradient of ",
                     "q");
      Tensor g = grads.q.reshape({in.frames(), 1});
      for (std::size_t i = layers_.size(); i-- > 1;) g = layers_[i].backward(g, true);
      if (relu_) g = relu_->backward(g, true);
      into.set_input(kInput, action_->backward(g, true).reshape({in.steps, in.batch, dims_}));
      into.add_features(layers_[0].backward(g, true));
    }
    double flops(bool train) const override {
      double total = head_detail::flops(action_->options(), train);
      for (const auto& l : layers_) total += head_detail::flops(l.options(), train);
      return total;
    }

   private:
    std::int64_t dims_;
    std::vector<typename B::Linear> layers_;  // the first on the features, ..., the output
    std::optional<typename B::Linear> action_;
    std::optional<typename B::ReLU> relu_;
  };
};

}  // namespace seedrl::nn
