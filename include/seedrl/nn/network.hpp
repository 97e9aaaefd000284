// Network: the models SEED RL trains, for any backend: a torso (and optionally a second one for
// the value), an optional LSTM core, and a list of heads (nn/head.hpp, the kinds of nn/heads/).
//
//   observations [T, B, obs...] --torso--> features [T*B, F] --(LSTM core)--> [T*B, H]
//        --> each head: its named outputs (NetworkOutputs): policy logits [T, B, A], value
//            [T, B], Q-values [T, B, A] (linear or dueling), a Gaussian's mean and log std
//            [T, B, D], a critic's Q(x, a) [T, B] of an action given beside the observations
//
// Torsos: an MLP (CartPole-sized; ReLU or tanh hidden layers; none at all leaves the observations
// as the features); the MinAtar net (conv 16 3x3 stride 1 on 10x10xC, ReLU, linear 128, ReLU;
// Young & Tian 2019); the Nature DQN CNN (u8 4x84x84 scaled by 1/255, conv 32 8x8/4, conv 64
// 4x4/2, conv 64 3x3/1, linear 512, ReLUs; Mnih et al. 2015). An optional LSTM core runs over the
// time axis with per-step resets. With separate_value_torso the value head sits on a torso of its
// own (the same layers, parameters "value_torso.*") instead of sharing the policy's, as the usual
// MuJoCo PPO networks do (Andrychowicz et al. 2021 found separate policy and value networks and
// tanh to work best). Outputs and their gradients are found by head name (NetworkOutputs::head,
// NetworkGrads::head); inputs a head needs besides the observations are given by name too.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/backend/cpu/backend.hpp"
#ifdef SEEDRL_CUDA_SESSIONS
#include "seedrl/backend/cuda/backend.hpp"
#endif
#include "seedrl/core/error.hpp"
#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/nn/backend.hpp"
#include "seedrl/nn/description.hpp"
#include "seedrl/nn/head.hpp"
#include "seedrl/nn/heads/head_kinds.hpp"
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
    heads_ = make_heads<B>(store_, config_, features);
    SEEDRL_REQUIRE(config_.max_parameters <= 0 || store_.flat_size() <= config_.max_parameters,
                   "Network: ", store_.flat_size(),
                   " parameter values (with padding) exceed the "
                   "limit of ",
                   config_.max_parameters, " (NetworkOptions::max_parameters)");
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
  /// `inputs`: what heads need besides the observations, by name (a critic's "action" [T, B, D]);
  /// read during the forward only.
  const NetworkOutputs& forward(const Tensor& observations, const LstmState& initial_state = {},
                                const Tensor& resets = {},
                                std::span<const NetworkInput> inputs = {}) {
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
    head_inputs_ = {features, value_features, inputs, steps_, batch_};
    for (const std::unique_ptr<Head<B>>& head : heads_) head->forward(head_inputs_, outputs_);
    return outputs_;
  }

  /// Backpropagates `grads` through the last forward() and writes every parameter's gradient.
  void backward(const NetworkGrads& grads) {
    SEEDRL_REQUIRE(steps_ > 0, "Network: backward before forward");
    const std::int64_t frames = steps_ * batch_;
    bool any_head = false;
    for (const Tensor* g : head_tensors(grads)) any_head = any_head || g->defined();
    SEEDRL_REQUIRE(any_head || grads.final_state.defined(), "Network::backward: no gradient given");
    // Layers write their gradients; the ones a partial backward does not reach must read zero.
    bool partial = false;
    for (const std::unique_ptr<Head<B>>& head : heads_) partial = partial || head->partial(grads);
    if (partial) store_.zero_grad();

    head_inputs_.inputs = {};  // the caller's inputs were for the forward only
    gradients_.clear();
    for (const std::unique_ptr<Head<B>>& head : heads_)
      head->backward(grads, head_inputs_, gradients_);
    if (gradients_.value_features().defined())
      value_torso_.backward(gradients_.value_features(), false);

    Tensor grad_features = gradients_.features();
    if (core_) {
      const Tensor grad_sequence = grad_features.defined()
                                       ? grad_features.reshape({steps_, batch_, config_.lstm_size})
                                       : Tensor();
      grad_features = core_->backward(grad_sequence, grads.final_state, true);
      grad_features = grad_features.reshape({frames, grad_features.dim(2)});
    }
    if (grad_features.defined()) torso_.backward(grad_features, false);
  }

  /// The gradient of input `name` (a critic's "action" [T, B, D]) from the last backward();
  /// undefined when no head reads that input.
  const Tensor& input_gradient(std::string_view name) const { return gradients_.input(name); }

  /// Useful FLOPs of one forward per frame, and of forward + backward per frame (a first layer
  /// computes no input gradient).
  double forward_flops_per_frame() const { return flops(false); }
  double train_flops_per_frame() const { return flops(true); }

 private:
  using Linear = typename B::Linear;

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

  Shape frame_shape(std::int64_t frames) const {
    return config_.observation_shape.prepend({frames});
  }

  // The torso of config_ into `torso`, its layers named "<prefix>.<layer>".
  void build_torso(Sequential<B>& torso, const std::string& prefix) {
    const Shape& obs = config_.observation_shape;
    auto name = [&](const char* layer) { return prefix + "." + layer; };
    switch (config_.torso) {
      case Torso::mlp: {
        // Observations of several dimensions (a board's planes) are flattened first.
        if (obs.rank() > 1) torso.add(typename B::Flatten(name("flatten")));
        std::int64_t in = obs.numel();
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
      case Torso::board: {
        torso.add(typename B::Rescale(RescaleOptions{1.0f, true}, name("input")));
        std::int64_t in = obs[0];
        for (std::size_t i = 0; i < config_.conv_channels.size(); ++i) {
          Conv2dOptions o = torso_conv(in, config_.conv_channels[i], 3, 1);
          o.padding = 1;
          torso.add(typename B::Conv2d(store_, prefix + ".conv" + std::to_string(i + 1), o));
          in = config_.conv_channels[i];
        }
        torso.add(typename B::Flatten(name("flatten")));
        in *= obs[1] * obs[2];
        for (std::size_t i = 0; i < config_.mlp_hidden.size(); ++i) {
          const std::string fc = prefix + ".fc" + std::to_string(i + 1);
          torso.add(Linear(store_, fc, torso_linear(in, config_.mlp_hidden[i])));
          in = config_.mlp_hidden[i];
        }
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
    for (const std::unique_ptr<Head<B>>& head : heads_) total += head->flops(train);
    return total;
  }

  NetworkOptions config_;
  ParameterStore store_;
  Sequential<B> torso_, value_torso_;  // value_torso_: with separate_value_torso only
  std::optional<typename B::LSTM> core_;
  std::vector<std::unique_ptr<Head<B>>> heads_;  // in head_kinds.hpp's order
  std::int64_t head_input_size_ = 0;
  std::int64_t steps_ = 0, batch_ = 0;
  HeadInputs head_inputs_;  // of the last forward
  HeadGradients<B> gradients_;
  NetworkOutputs outputs_;
};

// Compiled once, in the library (src/nn/cpu_instantiations.cpp): a program using the CPU backend
// does not instantiate it again (and compiles faster).
extern template class Network<cpu::Backend>;
// On the CUDA backend, in seedrl::cuda (src/session/cuda_templates.cpp).
#ifdef SEEDRL_CUDA_SESSIONS
extern template class Network<cuda::Backend>;
#endif

}  // namespace seedrl::nn
