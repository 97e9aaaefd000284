// Network: the models SEED RL trains, for any backend.
//
//   observations [T, B, obs...] --torso--> features [T*B, F] --(LSTM core)--> [T*B, H]
//        --> policy logits [T, B, A], value [T, B], Q-values [T, B, A]
//        --> or, for a box of D real-valued actions, a diagonal Gaussian policy: mean and log
//            standard deviation [T, B, D], and the value [T, B]
//
// Torsos: an MLP (CartPole-sized; ReLU or tanh hidden layers); the MinAtar net (conv 16 3x3 stride
// 1 on 10x10xC, ReLU, linear 128, ReLU; Young & Tian 2019); the Nature DQN CNN (u8 4x84x84 scaled
// by 1/255, conv 32 8x8/4, conv 64 4x4/2, conv 64 3x3/1, linear 512, ReLUs; Mnih et al. 2015). An
// optional LSTM core runs over the time axis with per-step resets; heads are linear. The Q head is
// either one linear layer or dueling (Wang et al. 2016): Q(x, a) = V(x) + A(x, a) - mean_a' A(x,
// a'). The Gaussian head's mean is linear in the features; its log standard deviation is either a
// free parameter per dimension (state-independent, as PPO's usual head; initial_log_std) or a
// second linear head (state_dependent_log_std). The free parameter is the bias of a linear layer
// applied to a constant zero input, which broadcasts it to every row and sums its gradient over
// the rows with the layers every backend already has; that layer's weight stays zero.
// With separate_value_torso the value head sits on a torso of its own (the same layers, parameters
// "value_torso.*") instead of sharing the policy's, as the usual MuJoCo PPO networks do
// (Andrychowicz et al. 2021 found separate policy and value networks and tanh to work best).
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/nn/backend.hpp"
#include "seedrl/nn/layer_options.hpp"
#include "seedrl/nn/lstm_state.hpp"
#include "seedrl/nn/network_options.hpp"
#include "seedrl/nn/parameter.hpp"
#include "seedrl/nn/sequential.hpp"

namespace seedrl::nn {

/// A model built from `NetworkOptions` on backend B. The network owns its ParameterStore
/// (parameters(): values, gradients, names). backward() writes every parameter's gradient.
/// Not thread-safe; give each thread its own network (copy values with
/// parameters().copy_values_from()).
template <Backend B>
class Network {
 public:
  explicit Network(const NetworkOptions& config) : config_(config), store_(B::device) {
    config.validate();
    build_torso(torso_, "torso");
    if (config_.separate_value_torso) build_torso(value_torso_, "value_torso");
    std::int64_t features = torso_.output_shape(frame_shape(1))[1];
    if (config_.lstm_size > 0) {
      LstmOptions o{features, config_.lstm_size};
      o.input_weight_init = Init::xavier_uniform();
      o.recurrent_weight_init = Init::orthogonal();
      core_.emplace(store_, "core", o);
      features = config_.lstm_size;
    }
    head_input_size_ = features;
    if (config_.policy_value_heads && config_.box_actions()) {
      const std::int64_t d = config_.action_dims;
      policy_.emplace(store_, "policy_mean", head_options(features, d, 0.01));
      if (config_.state_dependent_log_std) {
        LinearOptions o = head_options(features, d, 0.01);
        o.bias_init = Init::constant(config_.initial_log_std);
        log_std_.emplace(store_, "policy_log_std", o);
      } else {
        LinearOptions o{1, d};  // the free log std: the bias, on a constant zero input
        o.weight_init = Init::zeros();
        o.bias_init = Init::constant(config_.initial_log_std);
        log_std_.emplace(store_, "policy_log_std", o);
      }
      value_.emplace(store_, "value", head_options(features, 1, 1.0));
    } else if (config_.policy_value_heads) {
      policy_.emplace(store_, "policy", head_options(features, config_.num_actions, 0.01));
      value_.emplace(store_, "value", head_options(features, 1, 1.0));
    }
    if (config_.q_head && config_.dueling) {
      q_value_.emplace(store_, "q_value", head_options(features, 1, 1.0));
      q_advantage_.emplace(store_, "q_advantage", head_options(features, config_.num_actions, 1.0));
    } else if (config_.q_head) {
      q_.emplace(store_, "q", head_options(features, config_.num_actions, 1.0));
    }
    store_.finalize(config_.seed);
  }

  const NetworkOptions& config() const { return config_; }
  ParameterStore& parameters() { return store_; }
  const ParameterStore& parameters() const { return store_; }
  bool recurrent() const { return core_.has_value(); }
  /// Size of the features the heads see (torso output, or LSTM size).
  std::int64_t head_input_size() const { return head_input_size_; }

  /// A zero recurrent state for `batch` columns (undefined tensors when not recurrent).
  LstmState initial_state(std::int64_t batch) const {
    if (!recurrent()) return {};
    return {Tensor::zeros({batch, config_.lstm_size}, DType::f32, B::device),
            Tensor::zeros({batch, config_.lstm_size}, DType::f32, B::device)};
  }

  /// Runs the model on observations [T, B, observation_shape...]. For a recurrent network,
  /// `initial_state` is the state before step 0 (undefined: zeros) and resets [T, B] (f32 or u8,
  /// optional) marks where the state restarts from zero, i.e. the first step of a new episode.
  const NetworkOutputs& forward(const Tensor& observations, const LstmState& initial_state = {},
                                const Tensor& resets = {}) {
    SEEDRL_REQUIRE(
        observations.defined() && observations.rank() == config_.observation_shape.rank() + 2 &&
            observations.shape().drop_front(2) == config_.observation_shape,
        "Network: observations must be [T, B, ", config_.observation_shape.to_string().substr(1),
        ", got ", observations.defined() ? observations.shape().to_string() : "nothing");
    steps_ = observations.dim(0);
    batch_ = observations.dim(1);
    const std::int64_t frames = steps_ * batch_;
    const Tensor frames_in = observations.reshape(frame_shape(frames));
    Tensor features = torso_.forward(frames_in);
    const Tensor value_features =
        config_.separate_value_torso ? value_torso_.forward(frames_in) : Tensor();
    if (core_) {
      const Tensor sequence = features.reshape({steps_, batch_, features.dim(1)});
      features =
          core_->forward(sequence, initial_state, resets).reshape({frames, config_.lstm_size});
      outputs_.final_state = core_->final_state();
    }
    if (policy_ && config_.box_actions()) {
      const std::int64_t d = config_.action_dims;
      outputs_.mean = policy_->forward(features).reshape({steps_, batch_, d});
      outputs_.log_std = log_std_->forward(log_std_input(features)).reshape({steps_, batch_, d});
      outputs_.values = value_->forward(value_features.defined() ? value_features : features)
                            .reshape({steps_, batch_});
    } else if (policy_) {
      outputs_.logits = policy_->forward(features).reshape({steps_, batch_, config_.num_actions});
      outputs_.values = value_->forward(value_features.defined() ? value_features : features)
                            .reshape({steps_, batch_});
    }
    if (q_) outputs_.q = q_->forward(features).reshape({steps_, batch_, config_.num_actions});
    if (q_advantage_) outputs_.q = dueling_forward(features);
    return outputs_;
  }

  /// Backpropagates `grads` through the last forward() and writes every parameter's gradient.
  void backward(const NetworkGrads& grads) {
    SEEDRL_REQUIRE(steps_ > 0, "Network: backward before forward");
    const std::int64_t frames = steps_ * batch_;
    const bool box = config_.box_actions();
    bool any_head = false;
    for (const Tensor* g : head_tensors(grads)) any_head = any_head || g->defined();
    SEEDRL_REQUIRE(any_head || grads.final_state.defined(), "Network::backward: no gradient given");
    // Layers write their gradients; the ones a partial backward does not reach must read zero.
    const bool policy_partial =
        box ? !grads.mean.defined() || !grads.log_std.defined() : !grads.logits.defined();
    const bool partial = (policy_ && (policy_partial || !grads.values.defined())) ||
                         ((q_ || q_advantage_) && !grads.q.defined());
    if (partial) store_.zero_grad();

    Tensor grad_features;
    auto accumulate = [&](std::optional<Linear>& head, const Tensor& grad, const Shape& output,
                          const char* what) {
      if (!grad.defined()) return;
      require_tensor(grad, output, DType::f32, "Network::backward: gradient of ", what);
      const Tensor g = head->backward(grad.reshape({frames, head->options().out_features}), true);
      if (!grad_features.defined()) {
        grad_features = g;
      } else {
        B::add_to(grad_features, g);
      }
    };
    if (policy_ && box) {
      const std::int64_t d = config_.action_dims;
      accumulate(policy_, grads.mean, {steps_, batch_, d}, "mean");
      if (config_.state_dependent_log_std) {
        accumulate(log_std_, grads.log_std, {steps_, batch_, d}, "log_std");
      } else if (grads.log_std.defined()) {  // reaches the free parameter only
        require_tensor(grads.log_std, {steps_, batch_, d}, DType::f32,
                       "Network::backward: gradient of ", "log_std");
        log_std_->backward(grads.log_std.reshape({frames, d}), false);
      }
      value_backward(grads.values, accumulate);
    } else if (policy_) {
      accumulate(policy_, grads.logits, {steps_, batch_, config_.num_actions}, "logits");
      value_backward(grads.values, accumulate);
    }
    if (q_) accumulate(q_, grads.q, {steps_, batch_, config_.num_actions}, "q");
    if (q_advantage_ && grads.q.defined()) {
      require_tensor(grads.q, {steps_, batch_, config_.num_actions}, DType::f32,
                     "Network::backward: gradient of ", "q");
      const Tensor grad_value = grad_value_buffer_.view({frames, 1});
      const Tensor grad_advantage = grad_advantage_buffer_.view({frames, config_.num_actions});
      B::dueling_backward(grads.q.reshape({frames, config_.num_actions}), grad_value,
                          grad_advantage);
      accumulate(q_value_, grad_value, {frames, 1}, "the dueling value");
      accumulate(q_advantage_, grad_advantage, {frames, config_.num_actions},
                 "the dueling advantage");
    }

    if (core_) {
      const Tensor grad_sequence = grad_features.defined()
                                       ? grad_features.reshape({steps_, batch_, config_.lstm_size})
                                       : Tensor();
      grad_features = core_->backward(grad_sequence, grads.final_state, true);
      grad_features = grad_features.reshape({frames, grad_features.dim(2)});
    }
    if (grad_features.defined()) torso_.backward(grad_features, false);
  }

  /// Useful FLOPs of one forward per frame, and of forward + backward per frame (a first layer
  /// computes no input gradient).
  double forward_flops_per_frame() const { return flops(false); }
  double train_flops_per_frame() const { return flops(true); }

 private:
  using Linear = typename B::Linear;

  // The value head's backward: into the shared features (through `accumulate`) or through the
  // value torso.
  template <class Accumulate>
  void value_backward(const Tensor& grad, Accumulate& accumulate) {
    if (!config_.separate_value_torso) {
      accumulate(value_, grad, {steps_, batch_}, "values");
      return;
    }
    if (!grad.defined()) return;
    require_tensor(grad, {steps_, batch_}, DType::f32, "Network::backward: gradient of ", "values");
    value_torso_.backward(value_->backward(grad.reshape({steps_ * batch_, 1}), true), false);
  }

  static LinearOptions head_options(std::int64_t in, std::int64_t out, double gain) {
    LinearOptions o{in, out};
    o.weight_init = Init::orthogonal(gain);
    o.bias_init = Init::zeros();
    return o;
  }
  static LinearOptions torso_linear(std::int64_t in, std::int64_t out,
                                    Activation activation = Activation::relu) {
    LinearOptions o{in, out};
    o.activation = activation;
    o.weight_init = Init::orthogonal(std::sqrt(2.0));
    o.bias_init = Init::zeros();
    return o;
  }
  static Conv2dOptions torso_conv(std::int64_t in, std::int64_t out, std::int64_t kernel,
                                  std::int64_t stride) {
    Conv2dOptions o{in, out, kernel, stride};
    o.activation = Activation::relu;
    o.weight_init = Init::orthogonal(std::sqrt(2.0));
    o.bias_init = Init::zeros();
    return o;
  }

  // The free log std's input: zeros [frames, 1] (the features themselves for a log std head),
  // rows of one zero buffer that only grows (no allocation per batch size).
  Tensor log_std_input(const Tensor& features) {
    if (config_.state_dependent_log_std) return features;
    const std::int64_t frames = features.dim(0);
    if (!zeros_.defined() || zeros_.dim(0) < frames)
      zeros_ = Tensor::zeros(
          {std::max<std::int64_t>(frames, 2 * (zeros_.defined() ? zeros_.dim(0) : 0)), 1},
          DType::f32, B::device);
    return zeros_.slice(0, frames);
  }

  Shape frame_shape(std::int64_t frames) const {
    return config_.observation_shape.prepend({frames});
  }

  // The torso of config_ into `torso`, its layers named "<prefix>.<layer>".
  void build_torso(Sequential<B>& torso, const std::string& prefix) {
    const Shape& obs = config_.observation_shape;
    auto name = [&](const char* layer) { return prefix + "." + layer; };
    switch (config_.torso) {
      case Torso::mlp: {
        std::int64_t in = obs[0];
        for (std::size_t i = 0; i < config_.mlp_hidden.size(); ++i) {
          const std::string fc = prefix + ".fc" + std::to_string(i + 1);
          torso.add(
              Linear(store_, fc, torso_linear(in, config_.mlp_hidden[i], config_.mlp_activation)));
          in = config_.mlp_hidden[i];
        }
        break;
      }
      case Torso::minatar: {
        torso.add(typename B::Rescale(RescaleOptions{1.0f, false}, name("input")));
        torso.add(typename B::Conv2d(store_, name("conv"), torso_conv(obs[2], 16, 3, 1)));
        torso.add(typename B::Flatten(name("flatten")));
        const std::int64_t flat = (obs[0] - 2) * (obs[1] - 2) * 16;
        torso.add(Linear(store_, name("fc"), torso_linear(flat, 128)));
        break;
      }
      case Torso::nature: {
        torso.add(typename B::Rescale(RescaleOptions{1.0f / 255.0f, true}, name("input")));
        torso.add(typename B::Conv2d(store_, name("conv1"), torso_conv(obs[0], 32, 8, 4)));
        torso.add(typename B::Conv2d(store_, name("conv2"), torso_conv(32, 64, 4, 2)));
        torso.add(typename B::Conv2d(store_, name("conv3"), torso_conv(64, 64, 3, 1)));
        torso.add(typename B::Flatten(name("flatten")));
        const Shape conv_out = torso.output_shape(frame_shape(1));
        torso.add(Linear(store_, name("fc"), torso_linear(conv_out[1], 512)));
        break;
      }
    }
  }

  // Q = V + A - mean(A), on the backend's device.
  Tensor dueling_forward(const Tensor& features) {
    const std::int64_t frames = steps_ * batch_, actions = config_.num_actions;
    const Tensor v = q_value_->forward(features);
    const Tensor a = q_advantage_->forward(features);
    const Tensor q = q_buffer_.view({frames, actions});
    B::dueling_forward(v, a, q);
    return q.reshape({steps_, batch_, actions});
  }

  double flops(bool train) const {
    const Shape one = frame_shape(1);
    double total = torso_.forward_flops(one) + (train ? torso_.backward_flops(one, false) : 0.0);
    if (config_.separate_value_torso)
      total +=
          value_torso_.forward_flops(one) + (train ? value_torso_.backward_flops(one, false) : 0.0);
    if (core_) {
      const LstmOptions& o = core_->options();
      total += o.forward_flops(1) + (train ? o.backward_flops(1, !torso_.empty()) : 0.0);
    }
    auto head = [&](const std::optional<Linear>& h) {
      if (!h) return;
      const Shape in{1, head_input_size_};
      total += h->forward_flops(in) + (train ? h->backward_flops(in, true) : 0.0);
    };
    head(policy_);
    if (config_.state_dependent_log_std) head(log_std_);
    head(value_);
    head(q_);
    head(q_value_);
    head(q_advantage_);
    if (q_advantage_) total += 3.0 * static_cast<double>(config_.num_actions);  // the combination
    return total;
  }

  NetworkOptions config_;
  ParameterStore store_;
  Sequential<B> torso_, value_torso_;  // value_torso_: with separate_value_torso only
  std::optional<typename B::LSTM> core_;
  std::optional<Linear> policy_, log_std_, value_, q_, q_value_, q_advantage_;
  Tensor zeros_;  // the free log std's zero input
  ScratchBuffer q_buffer_{B::device}, grad_value_buffer_{B::device},
      grad_advantage_buffer_{B::device};
  std::int64_t head_input_size_ = 0;
  std::int64_t steps_ = 0, batch_ = 0;
  NetworkOutputs outputs_;
};

// Compiled once, in the library (src/nn/cpu_instantiations.cpp): a program using the CPU backend
// does not instantiate it again (and compiles faster).
extern template class Network<cpu::Backend>;

}  // namespace seedrl::nn
