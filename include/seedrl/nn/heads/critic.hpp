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
//
// With critic_layer_norm every hidden layer is normalised before its ReLU,
// h_i = ReLU(LayerNorm_i(W_i h_{i-1} + b_i)), parameters "critic.ln<i>.weight" and ".bias" (the
// scale starting at 1, the shift at 0), and the description has the word "critic_layernorm".
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
    if (o.critic_layer_norm) s << " critic_layernorm";
  }
  static bool parse(std::string_view word, DescriptionReader& r, NetworkOptions& o) {
    if (word == "critic_layernorm") {
      o.critic_layer_norm = true;
      return true;
    }
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
    if (!o.critic_hidden.empty()) x = g.apply("Relu", {onnx_norm(g, o, 0, x, width)});
    for (std::size_t i = 1; i <= o.critic_hidden.size(); ++i) {
      const bool last = i == o.critic_hidden.size();
      const std::int64_t out = last ? 1 : o.critic_hidden[i];
      const bool fuse = !last && !o.critic_layer_norm;
      x = g.linear(x, layer_name(o, i), width, out, fuse ? Activation::relu : Activation::none);
      if (!last && o.critic_layer_norm) x = g.apply("Relu", {onnx_norm(g, o, i, x, out)});
      width = out;
    }
    g.output(g.apply("Squeeze", {x, g.int64_constant({1})}), OnnxNames::q, {});
  }

  /// Hidden layer i's normalisation in ONNX operators of opset 13 (LayerNormalization is 17's):
  /// (x - mean) / sqrt(var + epsilon) * scale + shift over the features; x itself without
  /// critic_layer_norm.
  static std::string onnx_norm(OnnxGraph& g, const NetworkOptions& o, std::size_t i,
                               const std::string& x, std::int64_t width) {
    if (!o.critic_layer_norm) return x;
    const std::vector<OnnxAttribute> over_features = {OnnxAttribute::integers("axes", {1}),
                                                      OnnxAttribute::integer("keepdims", 1)};
    const std::string centred = g.apply("Sub", {x, g.apply("ReduceMean", {x}, over_features)});
    const std::string variance =
        g.apply("ReduceMean", {g.apply("Mul", {centred, centred})}, over_features);
    const std::string deviation =
        g.apply("Sqrt", {g.apply("Add", {variance, g.float_scalar(LayerNormOptions{}.epsilon)})});
    const std::string name = norm_name(i);
    const std::string scaled = g.apply(
        "Mul", {g.apply("Div", {centred, deviation}), g.parameter(name + ".weight", {width})});
    return g.apply("Add", {scaled, g.parameter(name + ".bias", {width})});
  }
  static std::string norm_name(std::size_t i) { return str_cat("critic.ln", i + 1); }

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
        // ReLU fused into the layer, unless a normalisation comes between
        l.activation = last || o.critic_layer_norm ? Activation::none : Activation::relu;
        layers_.emplace_back(store, layer_name(o, i), l);  // fan-in uniform: PyTorch's default
      }
      // A ReLU layer after the first hidden layer (its sum with the action), or after each norm.
      const std::size_t relus =
          o.critic_layer_norm ? hidden.size() : std::min<std::size_t>(1, hidden.size());
      for (std::size_t i = 0; i < relus; ++i) relus_.emplace_back(str_cat("critic.relu", i + 1));
      if (o.critic_layer_norm) {
        for (std::size_t i = 0; i < hidden.size(); ++i)
          norms_.emplace_back(store, norm_name(i), LayerNormOptions{hidden[i]});
      }
    }

    std::span<const std::string_view> outputs() const override { return kOutputs; }
    void forward(const HeadInputs& in, NetworkOutputs& out) override {
      const Tensor& action = in.input(kInput, Shape{dims_}, "critic");
      Tensor x = layers_[0].forward(in.features);
      B::add_to(x, action_->forward(action.reshape({in.frames(), dims_})));
      const std::size_t hidden = layers_.size() - 1;
      for (std::size_t i = 0; i < hidden; ++i) {
        if (i > 0) x = layers_[i].forward(x);
        if (!norms_.empty()) x = norms_[i].forward(x);
        if (i < relus_.size()) x = relus_[i].forward(x);
      }
      if (hidden > 0) x = layers_.back().forward(x);
      out.q = x.reshape({in.steps, in.batch});
    }
    void backward(const NetworkGrads& grads, const HeadInputs& in,
                  HeadGradients<B>& into) override {
      if (!grads.q.defined()) return;
      require_tensor(grads.q, {in.steps, in.batch}, DType::f32, "Network::backward: gradient of ",
                     "q");
      Tensor g = grads.q.reshape({in.frames(), 1});
      const std::size_t hidden = layers_.size() - 1;
      if (hidden > 0) g = layers_.back().backward(g, true);
      for (std::size_t i = hidden; i-- > 0;) {
        if (i < relus_.size()) g = relus_[i].backward(g, true);
        if (!norms_.empty()) g = norms_[i].backward(g, true);
        if (i > 0) g = layers_[i].backward(g, true);
      }
      into.set_input(kInput, action_->backward(g, true).reshape({in.steps, in.batch, dims_}));
      into.add_features(layers_[0].backward(g, true));
    }
    double flops(bool train) const override {
      double total = head_detail::flops(action_->options(), train);
      for (const auto& l : layers_) total += head_detail::flops(l.options(), train);
      for (const auto& n : norms_) total += head_detail::flops(n.options(), train);
      return total;
    }

   private:
    std::int64_t dims_;
    std::vector<typename B::Linear> layers_;  // the first on the features, ..., the output
    std::optional<typename B::Linear> action_;
    std::vector<typename B::ReLU> relus_;       // after hidden layer i (see the constructor)
    std::vector<typename B::LayerNorm> norms_;  // one per hidden layer with critic_layer_norm
  };
};

}  // namespace seedrl::nn
