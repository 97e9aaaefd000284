// DuelingQ: action values from a value and an advantage stream (Wang et al. 2016):
// Q(x, a) = V(x) + A(x, a) - mean_a' A(x, a'), computed on the backend's device (parameters
// "q_value.*" and "q_advantage.*", orthogonal weights of gain 1; the description's word
// "dueling"). Output "q" [T, B, N]. With action branches (NetworkOptions::action_branches) it is
// a branching dueling Q-network (Tavakoli et al. 2018): one shared state value, and each branch's
// advantages centred on that branch's mean, Q_k(x, a) = V(x) + A_k(x, a) - mean_a' A_k(x, a').
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/nn/description_reader.hpp"
#include "seedrl/nn/head.hpp"
#include "seedrl/nn/onnx_graph.hpp"

namespace seedrl::nn {

struct DuelingQ {
  static constexpr std::string_view kOutputs[] = {"q"};

  static bool in(const NetworkOptions& o) { return o.q_head && o.dueling; }
  static void describe(const NetworkOptions&, std::ostream& s) { s << " dueling"; }
  /// A description with "dueling" is of a dueling Q head alone.
  static bool parse(std::string_view word, DescriptionReader&, NetworkOptions& o) {
    if (word != "dueling") return false;
    o.dueling = true;
    o.q_head = true;
    o.policy_value_heads = false;
    return true;
  }
  static void onnx(OnnxGraph& g, const NetworkOptions& o, const HeadOnnxInputs& in) {
    const std::int64_t n = o.num_actions;  // Q = V + (A - mean_a A), each branch on its own
    const std::string v = g.linear(in.features, "q_value", in.size, 1, Activation::none);
    const std::string a = g.linear(in.features, "q_advantage", in.size, n, Activation::none);
    const auto mean_of = [&](const std::string& x) {
      return g.apply("ReduceMean", {x},
                     {OnnxAttribute::integers("axes", {1}), OnnxAttribute::integer("keepdims", 1)});
    };
    std::string centred;
    if (o.action_branches.empty()) {
      centred = g.apply("Sub", {a, mean_of(a)});
    } else {
      std::vector<std::string> centred_parts;
      std::int64_t offset = 0;
      for (std::int64_t size : o.action_branches) {
        const std::string part =
            g.apply("Slice", {a, g.int64_constant({offset}), g.int64_constant({offset + size}),
                              g.int64_constant({1})});
        centred_parts.push_back(g.apply("Sub", {part, mean_of(part)}));
        offset += size;
      }
      centred = g.apply("Concat", centred_parts, {OnnxAttribute::integer("axis", 1)});
    }
    g.output(g.apply("Add", {v, centred}), OnnxNames::q, {n});
  }

  template <Backend B>
  class Layers final : public Head<B> {
   public:
    Layers(ParameterStore& store, const NetworkOptions& o, std::int64_t features)
        : actions_(o.num_actions),
          branches_(o.action_branches),
          value_(store, "q_value", head_detail::linear(features, 1, 1.0)),
          advantage_(store, "q_advantage", head_detail::linear(features, actions_, 1.0)) {}

    std::span<const std::string_view> outputs() const override { return kOutputs; }
    void forward(const HeadInputs& in, NetworkOutputs& out) override {
      const Tensor v = value_.forward(in.features);
      const Tensor a = advantage_.forward(in.features);
      const Tensor q = q_buffer_.view({in.frames(), actions_});
      B::dueling_forward(v, a, q, branches_);
      out.q = q.reshape({in.steps, in.batch, actions_});
    }
    void backward(const NetworkGrads& grads, const HeadInputs& in,
                  HeadGradients<B>& into) override {
      if (!grads.q.defined()) return;
      require_tensor(grads.q, {in.steps, in.batch, actions_}, DType::f32,
                     "Network::backward: gradient of ", "q");
      const Tensor grad_value = grad_value_buffer_.view({in.frames(), 1});
      const Tensor grad_advantage = grad_advantage_buffer_.view({in.frames(), actions_});
      B::dueling_backward(grads.q.reshape({in.frames(), actions_}), grad_value, grad_advantage,
                          branches_);
      into.add_features(value_.backward(grad_value, true));
      into.add_features(advantage_.backward(grad_advantage, true));
    }
    double flops(bool train) const override {
      return head_detail::flops(value_.options(), train) +
             head_detail::flops(advantage_.options(), train) +
             3.0 * static_cast<double>(actions_);  // the combination
    }

   private:
    std::int64_t actions_;
    std::vector<std::int64_t> branches_;  // empty: one branch
    typename B::Linear value_, advantage_;
    ScratchBuffer q_buffer_{B::device}, grad_value_buffer_{B::device},
        grad_advantage_buffer_{B::device};
  };
};

}  // namespace seedrl::nn
