// The CUDA backend against the CPU backend: every layer, whole networks, the optimizers, gradient
// clipping and the backend's tensor operations run on both with the same parameters and the same
// random inputs, and must agree within stated tolerances.
//
// Needs a GPU: without one the program prints why and exits with 77, which CTest reports as
// skipped (SKIP_RETURN_CODE). Tolerances: TF32 is off (the default), so both backends compute in
// f32 and differ only in summation order; results are compared as
//   max |gpu - cpu| <= atol + rtol * max |cpu|
// with rtol 1e-4 (2e-4 for gradients reduced over many frames) and atol 1e-6.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "seedrl/agents/r2d2.hpp"
#include "seedrl/agents/vtrace.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/backend/cuda/backend.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/env/catch.hpp"
#include "seedrl/env/flatten_observation.hpp"
#include "seedrl/experience/unroll_store.hpp"
#include "seedrl/nn/gradient_clipping.hpp"
#include "seedrl/nn/network.hpp"
#include "seedrl/nn/optimizer.hpp"
#include "seedrl/policy/policy.hpp"
#include "seedrl/session/local_trainer.hpp"
#include "support/example_defaults.hpp"
#include "support/printing.hpp"

using namespace seedrl;
using Cpu = cpu::Backend;
using Gpu = cuda::Backend;

namespace {

constexpr double kRtol = 1e-4, kGradRtol = 2e-4, kAtol = 1e-6;

Tensor random_tensor(const Shape& shape, Rng& rng, DType dtype = DType::f32) {
  Tensor t = Tensor::empty(shape, dtype);
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    if (dtype == DType::u8) {
      t.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(rng.below(256));
    } else {
      t.data<float>()[i] = static_cast<float>(rng.uniform(-1.0, 1.0));
    }
  }
  return t;
}

Tensor on_gpu(const Tensor& t) {
  return t.clone(Device::cuda);
}

// Checks gpu (any device) against cpu within atol + rtol * max|cpu|.
void check_close(const Tensor& cpu_t, const Tensor& gpu_t, double rtol, const std::string& what) {
  REQUIRE_MESSAGE(gpu_t.defined(), what, ": GPU result undefined");
  REQUIRE_MESSAGE(cpu_t.shape() == gpu_t.shape(), what, ": shapes ", cpu_t.shape(), " vs ",
                  gpu_t.shape());
  CHECK_MESSAGE(gpu_t.device() == Device::cuda, what, ": GPU result lives on ", gpu_t.device());
  const Tensor host = gpu_t.clone(Device::cpu);
  double max_diff = 0.0, max_ref = 0.0;
  for (std::int64_t i = 0; i < cpu_t.numel(); ++i) {
    const double a = cpu_t.data<float>()[i], b = host.data<float>()[i];
    max_ref = std::max(max_ref, std::abs(a));
    max_diff = std::max(max_diff, std::isfinite(b) ? std::abs(a - b) : INFINITY);
  }
  CHECK_MESSAGE(max_diff <= kAtol + rtol * max_ref, what, ": max |gpu - cpu| = ", max_diff,
                " with max |cpu| = ", max_ref);
}

// Two stores built the same way hold the same initial values: both initialise on the host from
// the same seed, the GPU one then copies them to the device.
void check_same_parameters(const nn::ParameterStore& cpu_store,
                           const nn::ParameterStore& gpu_store) {
  check_close(cpu_store.values(), gpu_store.values(), 0.0, "initial parameters");
}

// Runs a layer forward and backward on both backends; compares outputs, input gradients and
// every parameter gradient.
template <class CpuLayer, class GpuLayer, class Options>
void check_layer(const Options& options, const Shape& input_shape, std::uint64_t seed,
                 bool input_grad) {
  nn::ParameterStore cpu_store(Device::cpu), gpu_store(Device::cuda);
  CpuLayer cpu_layer(cpu_store, "layer", options);
  GpuLayer gpu_layer(gpu_store, "layer", options);
  cpu_store.finalize(seed);
  gpu_store.finalize(seed);
  check_same_parameters(cpu_store, gpu_store);
  Rng rng(seed + 1);
  const Tensor input = random_tensor(input_shape, rng);
  const Tensor cpu_out = cpu_layer.forward(input);
  const Tensor gpu_out = gpu_layer.forward(on_gpu(input));
  check_close(cpu_out, gpu_out, kRtol, "forward");
  const Tensor grad = random_tensor(cpu_out.shape(), rng);
  const Tensor cpu_grad_in = cpu_layer.backward(grad, input_grad);
  const Tensor gpu_grad_in = gpu_layer.backward(on_gpu(grad), input_grad);
  if (input_grad) check_close(cpu_grad_in, gpu_grad_in, kGradRtol, "input gradient");
  CHECK(gpu_grad_in.defined() == input_grad);
  for (std::size_t i = 0; i < cpu_store.parameters().size(); ++i) {
    check_close(cpu_store.parameters()[i].grad, gpu_store.parameters()[i].grad, kGradRtol,
                "gradient of " + cpu_store.parameters()[i].name);
  }
}

}  // namespace

TEST_CASE("Linear: forward, input and parameter gradients, with and without bias, ReLU, tanh") {
  nn::LinearOptions plain{37, 19};
  check_layer<cpu::Linear, cuda::Linear>(plain, {13, 37}, 1, true);
  nn::LinearOptions relu{64, 128};
  relu.activation = nn::Activation::relu;
  check_layer<cpu::Linear, cuda::Linear>(relu, {256, 64}, 2, true);
  nn::LinearOptions tanh{17, 64};
  tanh.activation = nn::Activation::tanh;
  check_layer<cpu::Linear, cuda::Linear>(tanh, {40, 17}, 5, true);
  nn::LinearOptions no_bias{5, 3};
  no_bias.bias = false;
  check_layer<cpu::Linear, cuda::Linear>(no_bias, {1, 5}, 3, false);
}

TEST_CASE("Conv2d: MinAtar and Nature shapes, padding, stride, with and without input gradient") {
  nn::Conv2dOptions minatar{4, 16, 3, 1};
  minatar.activation = nn::Activation::relu;
  check_layer<cpu::Conv2d, cuda::Conv2d>(minatar, {32, 10, 10, 4}, 4, false);
  nn::Conv2dOptions nature1{4, 32, 8, 4};
  nature1.activation = nn::Activation::relu;
  check_layer<cpu::Conv2d, cuda::Conv2d>(nature1, {8, 84, 84, 4}, 5, false);
  nn::Conv2dOptions nature2{32, 64, 4, 2};
  check_layer<cpu::Conv2d, cuda::Conv2d>(nature2, {8, 20, 20, 32}, 6, true);
  nn::Conv2dOptions padded{3, 5, 3, 2, 1};
  padded.bias = false;
  check_layer<cpu::Conv2d, cuda::Conv2d>(padded, {2, 9, 7, 3}, 7, true);
}

TEST_CASE("LSTM: outputs, final state and gradients through time with resets and a given state") {
  const std::int64_t steps = 6, batch = 5, in = 7, hidden = 8;
  nn::ParameterStore cpu_store(Device::cpu), gpu_store(Device::cuda);
  cpu::LSTM cpu_lstm(cpu_store, "lstm", {in, hidden});
  cuda::LSTM gpu_lstm(gpu_store, "lstm", {in, hidden});
  cpu_store.finalize(11);
  gpu_store.finalize(11);
  Rng rng(12);
  const Tensor x = random_tensor({steps, batch, in}, rng);
  const nn::LstmState initial{random_tensor({batch, hidden}, rng),
                              random_tensor({batch, hidden}, rng)};
  Tensor resets = Tensor::zeros({steps, batch}, DType::u8);
  resets.data<std::uint8_t>()[2 * batch + 1] = 1;  // episode boundaries inside the unroll
  resets.data<std::uint8_t>()[4 * batch + 3] = 1;
  resets.data<std::uint8_t>()[0 * batch + 4] = 1;

  SUBCASE("resets given on the host") {
    check_close(cpu_lstm.forward(x, initial, resets),
                gpu_lstm.forward(on_gpu(x), {on_gpu(initial.h), on_gpu(initial.c)}, resets), kRtol,
                "outputs");
  }
  SUBCASE("resets given on the device") {
    check_close(cpu_lstm.forward(x, initial, resets),
                gpu_lstm.forward(on_gpu(x), {on_gpu(initial.h), on_gpu(initial.c)}, on_gpu(resets)),
                kRtol, "outputs");
  }
  check_close(cpu_lstm.final_state().h, gpu_lstm.final_state().h, kRtol, "final h");
  check_close(cpu_lstm.final_state().c, gpu_lstm.final_state().c, kRtol, "final c");
  const Tensor grad = random_tensor({steps, batch, hidden}, rng);
  const nn::LstmState grad_final{random_tensor({batch, hidden}, rng),
                                 random_tensor({batch, hidden}, rng)};
  check_close(cpu_lstm.backward(grad, grad_final, true),
              gpu_lstm.backward(on_gpu(grad), {on_gpu(grad_final.h), on_gpu(grad_final.c)}, true),
              kGradRtol, "input gradient");
  check_close(cpu_lstm.initial_state_grad().h, gpu_lstm.initial_state_grad().h, kGradRtol,
              "initial h gradient");
  check_close(cpu_lstm.initial_state_grad().c, gpu_lstm.initial_state_grad().c, kGradRtol,
              "initial c gradient");
  check_close(cpu_store.grads(), gpu_store.grads(), kGradRtol, "parameter gradients");

  // No initial state, no resets, gradient only from the outputs.
  check_close(cpu_lstm.forward(x), gpu_lstm.forward(on_gpu(x)), kRtol, "outputs from zeros");
  CHECK_FALSE(cpu_lstm.backward(grad, {}, false).defined());
  CHECK_FALSE(gpu_lstm.backward(on_gpu(grad), {}, false).defined());
  check_close(cpu_store.grads(), gpu_store.grads(), kGradRtol, "parameter gradients from zeros");
}

TEST_CASE("ReLU and Rescale") {
  Rng rng(21);
  const Tensor x = random_tensor({4, 3, 5}, rng);
  cpu::ReLU cpu_relu;
  cuda::ReLU gpu_relu;
  check_close(cpu_relu.forward(x), gpu_relu.forward(on_gpu(x)), 0.0, "relu forward");
  const Tensor g = random_tensor({4, 3, 5}, rng);
  check_close(cpu_relu.backward(g), gpu_relu.backward(on_gpu(g)), 0.0, "relu backward");

  const Tensor pixels = random_tensor({3, 4, 12, 9}, rng, DType::u8);  // NCHW u8
  cpu::Rescale cpu_scale({1.0f / 255.0f, true});
  cuda::Rescale gpu_scale({1.0f / 255.0f, true});
  check_close(cpu_scale.forward(pixels), gpu_scale.forward(on_gpu(pixels)), 1e-6, "u8 NCHW");
  const Tensor image = random_tensor({2, 6, 6, 3}, rng);  // NHWC f32
  cpu::Rescale cpu_double({2.0f, false});
  cuda::Rescale gpu_double({2.0f, false});
  check_close(cpu_double.forward(image), gpu_double.forward(on_gpu(image)), 1e-6, "f32 NHWC");
  cuda::Rescale identity({1.0f, false});
  const Tensor on_device = on_gpu(image);
  CHECK(identity.forward(on_device).shares_storage_with(on_device));
}

TEST_CASE(
    "Network: MLP (ReLU; tanh with a value torso), MinAtar with LSTM and dueling head, Nature "
    "CNN") {
  auto minatar = nn::NetworkOptions::minatar(4, 6);
  minatar.lstm_size = 32;
  minatar.q_head = true;
  minatar.dueling = true;
  auto nature = nn::NetworkOptions::nature(6);
  nature.q_head = true;
  auto two_torsos = nn::NetworkOptions::mlp(4, 2);
  two_torsos.mlp_activation = nn::Activation::tanh;
  two_torsos.separate_value_torso = true;
  for (auto config : {nn::NetworkOptions::mlp(4, 2), two_torsos, minatar, nature}) {
    config.seed = 31;
    CAPTURE(nn::describe(config));
    nn::Network<Cpu> cpu_net(config);
    nn::Network<Gpu> gpu_net(config);
    Rng rng(32);
    const DType dtype = config.torso == nn::Torso::nature ? DType::u8 : DType::f32;
    const Tensor obs = random_tensor(config.observation_shape.prepend({3, 4}), rng, dtype);
    Tensor resets = Tensor::zeros({3, 4}, DType::u8);
    resets.data<std::uint8_t>()[5] = 1;
    const auto& c = cpu_net.forward(obs, {}, resets);
    const auto& g = gpu_net.forward(on_gpu(obs), {}, on_gpu(resets));
    check_close(c.logits, g.logits, kRtol, "logits");
    check_close(c.values, g.values, kRtol, "values");
    if (config.q_head) check_close(c.q, g.q, kRtol, "q");
    const nn::NetworkGrads cpu_grads{
        .logits = random_tensor(c.logits.shape(), rng),
        .values = random_tensor(c.values.shape(), rng),
        .q = config.q_head ? random_tensor(c.q.shape(), rng) : Tensor()};
    cpu_net.backward(cpu_grads);
    gpu_net.backward({.logits = on_gpu(cpu_grads.logits),
                      .values = on_gpu(cpu_grads.values),
                      .q = config.q_head ? on_gpu(cpu_grads.q) : Tensor()});
    for (std::size_t i = 0; i < cpu_net.parameters().parameters().size(); ++i) {
      check_close(cpu_net.parameters().parameters()[i].grad,
                  gpu_net.parameters().parameters()[i].grad, kGradRtol,
                  "gradient of " + cpu_net.parameters().parameters()[i].name);
    }
  }
}

TEST_CASE("Network: a critic head Q(x, a), its gradients and its action gradient") {
  nn::NetworkOptions config = nn::NetworkOptions::mlp(5, 0, {16});
  config.action_critic(3, {32, 16});
  config.seed = 41;
  nn::Network<Cpu> cpu_net(config);
  nn::Network<Gpu> gpu_net(config);
  Rng rng(42);
  const Tensor obs = random_tensor({2, 4, 5}, rng);
  const Tensor action = random_tensor({2, 4, 3}, rng);
  const nn::NetworkInput cpu_inputs[] = {{"action", action}};
  const nn::NetworkInput gpu_inputs[] = {{"action", on_gpu(action)}};
  const auto& c = cpu_net.forward(obs, {}, {}, cpu_inputs);
  const auto& g = gpu_net.forward(on_gpu(obs), {}, {}, gpu_inputs);
  check_close(c.q, g.q, kRtol, "critic q");
  const Tensor grad = random_tensor(c.q.shape(), rng);
  cpu_net.backward({.q = grad});
  gpu_net.backward({.q = on_gpu(grad)});
  check_close(cpu_net.input_gradient("action"), gpu_net.input_gradient("action"), kGradRtol,
              "gradient of the action");
  for (std::size_t i = 0; i < cpu_net.parameters().parameters().size(); ++i) {
    check_close(cpu_net.parameters().parameters()[i].grad,
                gpu_net.parameters().parameters()[i].grad, kGradRtol,
                "gradient of " + cpu_net.parameters().parameters()[i].name);
  }
}

TEST_CASE("Optimizers and gradient clipping update identically") {
  for (auto kind : {nn::OptimizerKind::adam, nn::OptimizerKind::rmsprop, nn::OptimizerKind::sgd}) {
    nn::OptimizerOptions config;
    config.kind = kind;
    config.rmsprop.centered = true;
    config.rmsprop.momentum = 0.5f;
    config.sgd.momentum = 0.9f;
    nn::Network<Cpu> cpu_net(nn::NetworkOptions::mlp(6, 3));
    nn::Network<Gpu> gpu_net(nn::NetworkOptions::mlp(6, 3));
    auto cpu_opt = nn::make_optimizer<Cpu>(cpu_net.parameters(), config);
    auto gpu_opt = nn::make_optimizer<Gpu>(gpu_net.parameters(), config);
    CAPTURE(cpu_opt->name());
    Rng rng(41);
    for (int step = 0; step < 5; ++step) {
      const Tensor grads = random_tensor(cpu_net.parameters().grads().shape(), rng);
      cpu_net.parameters().grads().copy_from(grads);
      gpu_net.parameters().grads().copy_from(grads);
      const double cpu_norm = nn::clip_by_global_norm<Cpu>(cpu_net.parameters(), 1.5);
      const double gpu_norm = nn::clip_by_global_norm<Gpu>(gpu_net.parameters(), 1.5);
      CHECK(gpu_norm == doctest::Approx(cpu_norm).epsilon(1e-9));
      check_close(cpu_net.parameters().grads(), gpu_net.parameters().grads(), kRtol, "clipped");
      cpu_opt->step(0.01f);
      gpu_opt->step(0.01f);
      check_close(cpu_net.parameters().values(), gpu_net.parameters().values(), kRtol,
                  "parameters after a step");
    }
    for (std::size_t i = 0; i < cpu_opt->slots().size(); ++i) {
      check_close(cpu_opt->slots()[i].value, gpu_opt->slots()[i].value, kRtol,
                  cpu_opt->slots()[i].name);
    }
  }
}

TEST_CASE("Backend tensor operations: sum of squares, scale, add, dueling head") {
  Rng rng(51);
  const Tensor a = random_tensor({1000003}, rng);
  const Tensor b = random_tensor({1000003}, rng);
  CHECK(Gpu::sum_of_squares(on_gpu(a)) == doctest::Approx(Cpu::sum_of_squares(a)).epsilon(1e-9));
  const Tensor ga = on_gpu(a);
  Gpu::scale(ga, -0.5f);
  Gpu::add_to(ga, on_gpu(b));
  Cpu::scale(a, -0.5f);
  Cpu::add_to(a, b);
  check_close(a, ga, 1e-6, "scale and add");

  const Tensor v = random_tensor({7, 1}, rng), adv = random_tensor({7, 5}, rng);
  const Tensor q = Tensor::empty({7, 5}), gq = Tensor::empty({7, 5}, DType::f32, Device::cuda);
  Cpu::dueling_forward(v, adv, q);
  Gpu::dueling_forward(on_gpu(v), on_gpu(adv), gq);
  check_close(q, gq, 1e-6, "dueling forward");
  const Tensor dq = random_tensor({7, 5}, rng);
  const Tensor dv = Tensor::empty({7, 1}), dadv = Tensor::empty({7, 5});
  const Tensor gdv = Tensor::empty({7, 1}, DType::f32, Device::cuda),
               gdadv = Tensor::empty({7, 5}, DType::f32, Device::cuda);
  Cpu::dueling_backward(dq, dv, dadv);
  Gpu::dueling_backward(on_gpu(dq), gdv, gdadv);
  check_close(dv, gdv, 1e-6, "dueling value gradient");
  check_close(dadv, gdadv, 1e-6, "dueling advantage gradient");
  // With action branches of 3 and 2 (a branching dueling Q-network): each branch centred alone.
  const std::vector<std::int64_t> branches{3, 2};
  Cpu::dueling_forward(v, adv, q, branches);
  Gpu::dueling_forward(on_gpu(v), on_gpu(adv), gq, branches);
  check_close(q, gq, 1e-6, "branched dueling forward");
  Cpu::dueling_backward(dq, dv, dadv, branches);
  Gpu::dueling_backward(on_gpu(dq), gdv, gdadv, branches);
  check_close(dv, gdv, 1e-6, "branched dueling value gradient");
  check_close(dadv, gdadv, 1e-6, "branched dueling advantage gradient");
}

namespace {

// Unrolls of random 2-D observations over 3 actions with episode ends, as actors would send.
std::vector<std::unique_ptr<Unroll>> random_unrolls(const UnrollSpec& spec, int count,
                                                    std::uint64_t seed) {
  Rng rng(seed);
  UnrollStore store(count, spec);
  std::vector<std::unique_ptr<Unroll>> out;
  Tensor obs = Tensor::empty({2});
  std::vector<float> logits(3), state_h(static_cast<std::size_t>(spec.state_size)),
      state_c(static_cast<std::size_t>(spec.state_size));
  for (std::int64_t t = 0; t < spec.length + 5; ++t)
    for (int slot = 0; slot < count; ++slot) {
      obs.data<float>()[0] = static_cast<float>(rng.uniform(-1, 1));
      obs.data<float>()[1] = static_cast<float>(rng.uniform(-1, 1));
      for (float& l : logits) l = static_cast<float>(rng.uniform(-1, 1));
      for (float& v : state_h) v = static_cast<float>(rng.uniform(-0.5, 0.5));
      for (float& v : state_c) v = static_cast<float>(rng.uniform(-0.5, 0.5));
      UnrollStep step;
      step.observation = obs;
      step.reward = static_cast<float>(rng.uniform(0, 1));
      step.flags =
          t == 0 ? step_flags::kFirst : (rng.uniform() < 0.1 ? step_flags::kTerminated : 0);
      step.action = static_cast<std::int32_t>(rng.below(3));
      step.behaviour = spec.store_behaviour ? logits.data() : nullptr;
      step.state_h = spec.state_size > 0 ? state_h.data() : nullptr;
      step.state_c = spec.state_size > 0 ? state_c.data() : nullptr;
      if (auto u = store.append(slot, step)) out.push_back(std::move(u));
    }
  return out;
}

}  // namespace

TEST_CASE("V-trace learner: one step on the GPU equals the step on the CPU") {
  VTraceAgentOptions o;
  o.network = nn::NetworkOptions::mlp(2, 3, {16});
  o.network.lstm_size = 8;
  o.network.seed = 5;
  o.batch_size = 4;
  const VTraceAgent agent(o);
  InferenceServerOptions server;
  server.unroll_length = 6;
  const UnrollSpec spec = make_unroll_spec(agent, {{2}, DType::f32}, {3}, server);
  UnrollQueue cpu_queue(8), gpu_queue(8);
  Learner<VTraceAgent, Cpu> cpu_learner(agent, spec, cpu_queue);
  Learner<VTraceAgent, Gpu> gpu_learner(agent, spec, gpu_queue);
  const auto unrolls = random_unrolls(spec, 4, 61);
  REQUIRE(unrolls.size() >= 4);
  const std::span<const std::unique_ptr<Unroll>> batch(unrolls.data(), 4);
  const LearnerStepStats c = cpu_learner.train_on(batch);
  const LearnerStepStats g = gpu_learner.train_on(batch);
  CHECK(g.metrics["total_loss"] == doctest::Approx(c.metrics["total_loss"]).epsilon(1e-4));
  CHECK(g.metrics["entropy"] == doctest::Approx(c.metrics["entropy"]).epsilon(1e-4));
  CHECK(g.metrics["grad_norm"] == doctest::Approx(c.metrics["grad_norm"]).epsilon(1e-4));
  CHECK(g.metrics["transitions"] == c.metrics["transitions"]);
  check_close(cpu_learner.network().parameters().values(),
              gpu_learner.network().parameters().values(), kRtol, "parameters after the step");
}

TEST_CASE("R2D2 learner: losses and priorities on the GPU equal those on the CPU") {
  R2D2AgentOptions o;
  o.network = nn::NetworkOptions::mlp(2, 3, {16});
  o.network.lstm_size = 8;
  o.network.q_head = true;
  o.network.policy_value_heads = false;
  o.network.dueling = true;
  o.network.seed = 7;
  o.batch_size = 4;
  o.n_step = 2;
  const R2D2Agent agent(o);
  InferenceServerOptions server;
  server.unroll_length = 5;
  server.burn_in = 2;
  const UnrollSpec spec = make_unroll_spec(agent, {{2}, DType::f32}, {3}, server);
  UnrollQueue cpu_queue(8), gpu_queue(8);
  Learner<R2D2Agent, Cpu> cpu_learner(agent, spec, cpu_queue);
  Learner<R2D2Agent, Gpu> gpu_learner(agent, spec, gpu_queue);
  const auto unrolls = random_unrolls(spec, 4, 71);
  REQUIRE(unrolls.size() >= 4);
  const std::span<const std::unique_ptr<Unroll>> batch(unrolls.data(), 4);
  const std::vector<float> weights{1.0f, 0.5f, 0.25f, 2.0f};
  const R2D2Loss c = cpu_learner.loss_and_gradients(batch, weights);
  const R2D2Loss g = gpu_learner.loss_and_gradients(batch, weights);
  CHECK(g.loss == doctest::Approx(c.loss).epsilon(1e-4));
  REQUIRE(c.priorities.size() == g.priorities.size());
  for (Eigen::Index i = 0; i < c.priorities.size(); ++i)
    CHECK(g.priorities(i) == doctest::Approx(c.priorities(i)).epsilon(1e-4));
  check_close(cpu_learner.network().parameters().grads(),
              gpu_learner.network().parameters().grads(), kGradRtol, "gradients");
}

TEST_CASE("Policy: a recurrent checkpoint acts on the GPU as on the CPU") {
  R2D2AgentOptions o;
  o.network = nn::NetworkOptions::minatar(3, 4);
  o.network.lstm_size = 8;
  o.network.q_head = true;
  o.network.policy_value_heads = false;
  o.network.dueling = true;
  o.network.seed = 9;
  o.batch_size = 2;
  const R2D2Agent agent(o);
  InferenceServerOptions server;
  server.unroll_length = 4;
  server.burn_in = 2;
  const UnrollSpec spec = make_unroll_spec(agent, {{10, 10, 3}, DType::u8}, {4}, server);
  UnrollQueue queue(1);
  Learner<R2D2Agent, Cpu> learner(agent, spec, queue);
  const std::string path = "seedrl_cuda_policy_checkpoint.safetensors";
  learner.save_checkpoint(path, {});
  const PolicyOptions greedy{.acting = ActingOptions{ActionMode::greedy}};
  Policy<Cpu> on_cpu(path, greedy);
  Policy<Gpu> on_gpu_policy(path, greedy);
  Rng rng(5);
  for (int t = 0; t < 4; ++t) {
    const Tensor obs = random_tensor({3, 10, 10, 3}, rng, DType::u8);
    if (t == 2) {
      on_cpu.reset(1);
      on_gpu_policy.reset(1);
    }
    const std::vector<std::int32_t> a = on_cpu.act(obs);
    const std::vector<std::int32_t> b = on_gpu_policy.act(t % 2 ? on_gpu(obs) : obs);
    check_close(on_cpu.outputs().q, on_gpu_policy.outputs().q, kRtol, "Q-values");
    CHECK(a == b);
  }
  std::remove(path.c_str());
}

TEST_CASE("The whole runtime on the GPU: V-trace solves Catch") {
  const std::int64_t frames = 250000;
  const TrainingResult result = train_locally<VTraceAgent, Gpu>(
      VTraceAgent(test::example_vtrace_options(nn::NetworkOptions::mlp(50, 3), frames)),
      test::make_catch, test::example_run_options(frames));
  CAPTURE(result.mean_return);
  CHECK(result.mean_return > 0.9);  // random play averages about -0.6
}

TEST_CASE("Layers refuse tensors on the wrong device, naming both") {
  nn::ParameterStore store(Device::cuda);
  cuda::Linear layer(store, "head", {4, 2});
  store.finalize(0);
  CHECK_THROWS_WITH_AS(layer.forward(Tensor::zeros({3, 4})),
                       "head: input is on cpu, the layer on cuda", Error);
}

int main(int argc, char** argv) {
  if (!cuda::available()) {
    std::printf("skipped: no usable CUDA device (%s)\n", cuda::unavailable_reason().c_str());
    return 77;
  }
  std::printf("%s\n", cuda::device_info().describe().c_str());
  doctest::Context context(argc, argv);
  return context.run();
}
