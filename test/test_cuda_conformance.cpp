// The CUDA backend against the CPU backend: every layer, whole networks, the optimizers, gradient
// clipping and the backend's tensor operations run on both with the same parameters and the same
// random inputs, and must agree within the tolerances of support/cuda_conformance.hpp; the
// learners and whole runs are in test_cuda_learners. Needs a GPU: without one the program prints
// why and exits with 77, which CTest reports as skipped (SKIP_RETURN_CODE).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/backend/cuda/backend.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/inference/graphed_forward.hpp"
#include "seedrl/nn/gradient_clipping.hpp"
#include "seedrl/nn/network.hpp"
#include "seedrl/nn/optimizer.hpp"
#include "support/cuda_conformance.hpp"
#include "support/printing.hpp"

using namespace seedrl;
using Cpu = cpu::Backend;
using Gpu = cuda::Backend;
using namespace seedrl::test;

namespace {

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

TEST_CASE("LayerNorm: rows of a critic's width, rows wider than a block, one row") {
  check_layer<cpu::LayerNorm, cuda::LayerNorm>(nn::LayerNormOptions{256}, {256, 256}, 11, true);
  check_layer<cpu::LayerNorm, cuda::LayerNorm>(nn::LayerNormOptions{37}, {13, 37}, 12, false);
  check_layer<cpu::LayerNorm, cuda::LayerNorm>(nn::LayerNormOptions{700}, {3, 700}, 13, true);
  check_layer<cpu::LayerNorm, cuda::LayerNorm>(nn::LayerNormOptions{8}, {1, 8}, 14, true);
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

TEST_CASE(
    "Conv2d: heuristic algorithms for a new shape, measured ones at its Nth use, both exact") {
  struct Restore {
    int uses = cuda::conv_measure_after();
    ~Restore() { cuda::set_conv_measure_after(uses); }
  } restore;
  cuda::set_conv_measure_after(3);
  nn::Conv2dOptions options{32, 64, 4, 2};
  options.activation = nn::Activation::relu;
  nn::ParameterStore cpu_store(Device::cpu), gpu_store(Device::cuda);
  cpu::Conv2d cpu_layer(cpu_store, "layer", options);
  cuda::Conv2d gpu_layer(gpu_store, "layer", options);
  cpu_store.finalize(11);
  gpu_store.finalize(11);
  Rng rng(12);
  // One forward and backward (with the input gradient) on both, compared.
  auto use = [&](std::int64_t batch) {
    const Tensor input = random_tensor({batch, 12, 12, 32}, rng);
    const Tensor cpu_out = cpu_layer.forward(input);
    check_close(cpu_out, gpu_layer.forward(on_gpu(input)), kRtol, "forward");
    const Tensor grad = random_tensor(cpu_out.shape(), rng);
    const Tensor cpu_grad_in = cpu_layer.backward(grad, true);
    check_close(cpu_grad_in, gpu_layer.backward(on_gpu(grad), true), kGradRtol, "input gradient");
    check_close(cpu_store.parameters()[0].grad, gpu_store.parameters()[0].grad, kGradRtol,
                "weight gradient");
  };
  const std::int64_t before = cuda::conv_measurements();
  for (std::int64_t batch = 1; batch <= 4; ++batch) use(batch);  // new shapes: heuristics only
  use(5);
  use(5);
  CHECK(cuda::conv_measurements() == before);
  use(5);  // the third use of batch 5 measures its forward, filter and data passes
  CHECK(cuda::conv_measurements() == before + 3);
  use(5);
  use(1);
  use(1);  // batch 1's third use
  CHECK(cuda::conv_measurements() == before + 6);
  cuda::set_conv_measure_after(0);  // never measure
  for (int i = 0; i < 10; ++i) use(6);
  CHECK(cuda::conv_measurements() == before + 6);
  cuda::set_conv_measure_after(1);  // measure at first sight
  use(7);
  CHECK(cuda::conv_measurements() == before + 9);
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
    "Network: MLP (ReLU; tanh with a value torso; a Gaussian head), MinAtar with LSTM and dueling "
    "head, Nature CNN") {
  auto minatar = nn::NetworkOptions::minatar(4, 6);
  minatar.lstm_size = 32;
  minatar.q_head = true;
  minatar.dueling = true;
  auto nature = nn::NetworkOptions::nature(6);
  nature.q_head = true;
  auto two_torsos = nn::NetworkOptions::mlp(4, 2);
  two_torsos.mlp_activation = nn::Activation::tanh;
  two_torsos.separate_value_torso = true;
  auto gaussian = nn::NetworkOptions::mlp(3, 0, {16}).gaussian(2);
  gaussian.mlp_activation = nn::Activation::tanh;
  const auto board = nn::NetworkOptions::board({2, 6, 7}, 7);
  for (auto config :
       {nn::NetworkOptions::mlp(4, 2), two_torsos, gaussian, minatar, nature, board}) {
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
    // Every head the network has, and a random gradient for each.
    nn::NetworkGrads cpu_grads, gpu_grads;
    for (const std::string_view head : nn::kHeadNames) {
      CHECK(c.head(head).defined() == g.head(head).defined());
      if (!c.head(head).defined()) continue;
      check_close(c.head(head), g.head(head), kRtol, std::string(head));
      cpu_grads.head(head) = random_tensor(c.head(head).shape(), rng);
      gpu_grads.head(head) = on_gpu(cpu_grads.head(head));
    }
    cpu_net.backward(cpu_grads);
    gpu_net.backward(gpu_grads);
    for (std::size_t i = 0; i < cpu_net.parameters().parameters().size(); ++i) {
      check_close(cpu_net.parameters().parameters()[i].grad,
                  gpu_net.parameters().parameters()[i].grad, kGradRtol,
                  "gradient of " + cpu_net.parameters().parameters()[i].name);
    }
  }
}

// A graph replays into the buffers of the forward it captured, reading the input's address: new
// inputs written there give the plain forward's new outputs, bit for bit.
TEST_CASE("Graph: a captured forward replays like the plain forward; a capture that waits fails") {
  auto config = nn::NetworkOptions::minatar(6, 6);
  config.seed = 41;
  nn::Network<Gpu> net(config);
  Rng rng(42);
  const Shape shape = config.observation_shape.prepend({1, 8});
  const Tensor a = random_tensor(shape, rng, DType::u8), b = random_tensor(shape, rng, DType::u8);
  const Tensor input = on_gpu(a);
  const auto host = [](const Tensor& t) { return t.clone(Device::cpu); };
  for (int i = 0; i < 10; ++i) net.forward(input);  // past the convolutions' measuring
  const Tensor logits_a = host(net.forward(input).logits);
  input.copy_from(b);
  const Tensor logits_b = host(net.forward(input).logits);
  const Tensor values_b = host(net.forward(input).values);

  cuda::Graph graph;
  CHECK_FALSE(graph.captured());
  CHECK_THROWS_AS(graph.replay(), Error);
  nn::NetworkOutputs replayed;
  graph.capture([&] { replayed = net.forward(input); });
  REQUIRE(graph.captured());
  CHECK(graph.nodes() >= 4);  // at least the two convolutions and two heads' matrix products
  input.copy_from(a);
  graph.replay();
  check_close(logits_a, replayed.logits, 0.0, "logits replayed on input a");
  input.copy_from(b);
  graph.replay();
  check_close(logits_b, replayed.logits, 0.0, "logits replayed on input b");
  check_close(values_b, replayed.values, 0.0, "values replayed on input b");

  cuda::Graph waits;
  CHECK_THROWS_AS(waits.capture([&] {
    net.forward(input);
    cuda::synchronize();
  }),
                  Error);
  CHECK_FALSE(waits.captured());
  check_close(logits_b, net.forward(input).logits, 0.0, "the stream after a failed capture");
}

// The server's graphed forward (inference/graphed_forward.hpp) against the CPU network, through
// captures at two batch sizes, new inputs at the same address and parameters changed in place.
TEST_CASE("GraphedForward: replays match the plain forward as inputs and parameters change") {
  auto config = nn::NetworkOptions::minatar(6, 6);
  config.seed = 51;
  nn::Network<Gpu> net(config);
  nn::Network<Cpu> reference(config);
  GraphedForward<Gpu> forward;
  ScratchBuffer buffer(Device::cuda);
  Rng rng(52);
  const auto input_of = [&](std::int64_t batch) {
    const Tensor host = random_tensor(config.observation_shape.prepend({1, batch}), rng, DType::u8);
    const Tensor device = buffer.view(host.shape(), DType::u8);
    device.copy_from(host);
    return std::pair{host, device};
  };
  {  // The largest batch first: smaller ones keep its addresses (and no buffer grows later).
    const auto [host, device] = input_of(64);
    forward(net, device);
    reference.forward(host);
  }
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    for (const std::int64_t batch : {8, 32}) {
      for (int i = 0; i < Gpu::graph_capture_after() + 3; ++i) {
        const auto [host, device] = input_of(batch);
        const nn::NetworkOutputs& got = forward(net, device);
        const nn::NetworkOutputs& want = reference.forward(host);
        check_close(want.logits, got.logits, kRtol, "logits at batch " + std::to_string(batch));
        check_close(want.values, got.values, kRtol, "values at batch " + std::to_string(batch));
      }
    }
    // The learner's update: new values in place (the convolutions repack them at each replay).
    const Tensor values = reference.parameters().values();
    for (std::int64_t i = 0; i < values.numel(); ++i)
      values.data<float>()[i] += static_cast<float>(rng.uniform(-0.05, 0.05));
    reference.parameters().bump_version();
    net.parameters().copy_values_from(reference.parameters());
  }
  INFO(forward.stats().last_failure);
  CHECK(forward.stats().failures == 0);
  CHECK(forward.stats().captures == 2);
  // Per batch size: 3 replays in the first round (after its plain uses and the capture), then
  // every use of the next two rounds.
  const int uses = Gpu::graph_capture_after() + 3;
  CHECK(forward.stats().replays == 2 * (3 + 2 * uses));
  CHECK(forward.stats().drops == 0);
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

TEST_CASE("Layers refuse tensors on the wrong device, naming both") {
  nn::ParameterStore store(Device::cuda);
  cuda::Linear layer(store, "head", {4, 2});
  store.finalize(0);
  CHECK_THROWS_WITH_AS(layer.forward(Tensor::zeros({3, 4})),
                       "head: input is on cpu, the layer on cuda", Error);
}

int main(int argc, char** argv) {
  return seedrl::test::run_on_gpu(argc, argv);
}
