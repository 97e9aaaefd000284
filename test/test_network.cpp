// Network: shapes, FLOP counts, gradient wiring (heads, LSTM core, resets), overfitting.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/math/softmax.hpp"
#include "seedrl/nn/network.hpp"
#include "seedrl/nn/optimizer.hpp"
#include "support/reference_nn.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_network {

using namespace seedrl;
using namespace seedrl::test;
using Backend = cpu::Backend;
using Net = nn::Network<Backend>;

namespace {

Tensor random_observations(const Shape& shape, DType dtype, Rng& rng) {
  Tensor t = Tensor::empty(shape, dtype);
  for (Index i = 0; i < t.numel(); ++i) {
    if (dtype == DType::u8) {
      t.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(rng.below(256));
    } else {
      t.data<float>()[i] = static_cast<float>(rng.uniform(-1, 1));
    }
  }
  return t;
}

// Loss = <wl, logits> + <wv, values> + <wq, q> with fixed random weights (an undefined weight
// skips its output); returns it in double.
struct LinearLoss {
  Tensor wl, wv, wq, wm, ws;
  double operator()(const nn::NetworkOutputs& out) const {
    double s = 0.0;
    for (Index i = 0; wm.defined() && i < wm.numel(); ++i)
      s += static_cast<double>(wm.data<float>()[i]) * out.mean.data<float>()[i];
    for (Index i = 0; ws.defined() && i < ws.numel(); ++i)
      s += static_cast<double>(ws.data<float>()[i]) * out.log_std.data<float>()[i];
    for (Index i = 0; wq.defined() && i < wq.numel(); ++i)
      s += static_cast<double>(wq.data<float>()[i]) * out.q.data<float>()[i];
    for (Index i = 0; wl.defined() && i < wl.numel(); ++i)
      s += static_cast<double>(wl.data<float>()[i]) * out.logits.data<float>()[i];
    for (Index i = 0; wv.defined() && i < wv.numel(); ++i)
      s += static_cast<double>(wv.data<float>()[i]) * out.values.data<float>()[i];
    return s;
  }
};

// Compares the analytic gradient of a few parameter coordinates with central differences of the
// f32 network (step h; the bound 2e-2 covers f32 rounding over a whole network). A network whose
// biases each shift many ReLU units (a convolution's) takes a smaller step, within which no unit
// crosses its kink.
void check_network_gradients(Net& net, const Tensor& obs, const Tensor& resets, std::uint64_t seed,
                             double h = 1e-2) {
  Rng rng(seed);
  const Index steps = obs.dim(0), batch = obs.dim(1), actions = net.config().num_actions;
  LinearLoss loss;
  const Index dims = net.config().action_dims;
  if (net.config().policy_value_heads && dims > 0) {
    loss.wm = random_observations({steps, batch, dims}, DType::f32, rng);
    loss.ws = random_observations({steps, batch, dims}, DType::f32, rng);
    loss.wv = random_observations({steps, batch}, DType::f32, rng);
  } else if (net.config().policy_value_heads) {
    loss.wl = random_observations({steps, batch, actions}, DType::f32, rng);
    loss.wv = random_observations({steps, batch}, DType::f32, rng);
  }
  if (net.config().q_head) loss.wq = random_observations({steps, batch, actions}, DType::f32, rng);
  net.forward(obs, {}, resets);
  net.backward(
      {.logits = loss.wl, .mean = loss.wm, .log_std = loss.ws, .values = loss.wv, .q = loss.wq});
  const Tensor analytic = net.parameters().grads().clone();
  int checked = 0;
  for (const nn::Parameter& p : net.parameters().parameters()) {
    for (int k = 0; k < 3; ++k) {
      const Index i = static_cast<Index>(rng.below(static_cast<std::uint64_t>(p.shape.numel())));
      float& value = p.value.data<float>()[i];
      const float saved = value;
      value = static_cast<float>(saved + h);
      net.parameters().bump_version();
      const double up = loss(net.forward(obs, {}, resets));
      value = static_cast<float>(saved - h);
      net.parameters().bump_version();
      const double down = loss(net.forward(obs, {}, resets));
      value = saved;
      net.parameters().bump_version();
      const double numeric = (up - down) / (2 * h);
      const double got = analytic.data<float>()[p.offset + i];
      CAPTURE(p.name);
      CAPTURE(i);
      CHECK(std::abs(got - numeric) <= 2e-2 * std::max(1.0, std::abs(numeric)));
      ++checked;
    }
  }
  CHECK(checked >= 9);
}

}  // namespace

TEST_CASE("Network: output shapes for every torso, with and without an LSTM core") {
  Rng rng(1);
  struct Case {
    nn::NetworkOptions config;
    DType dtype;
  };
  for (Case c : {Case{nn::NetworkOptions::mlp(4, 2), DType::f32},
                 Case{nn::NetworkOptions::minatar(6, 6), DType::u8},
                 Case{nn::NetworkOptions::nature(18), DType::u8},
                 Case{nn::NetworkOptions::board({2, 6, 7}, 7), DType::f32}}) {
    for (Index lstm : {0, 32}) {
      c.config.lstm_size = lstm;
      c.config.q_head = true;
      Net net(c.config);
      const Index steps = 2, batch = 3;
      const auto& out = net.forward(
          random_observations(c.config.observation_shape.prepend({steps, batch}), c.dtype, rng));
      CHECK(out.logits.shape() == Shape{steps, batch, c.config.num_actions});
      CHECK(out.values.shape() == Shape{steps, batch});
      CHECK(out.q.shape() == Shape{steps, batch, c.config.num_actions});
      CHECK(net.recurrent() == (lstm > 0));
      if (lstm > 0) CHECK(out.final_state.h.shape() == Shape{batch, lstm});
      CHECK(std::isfinite(out.values.flat<float>().sum()));
    }
  }
}

TEST_CASE("Network: outputs and gradients are found by head name") {
  Rng rng(2);
  nn::NetworkOptions config = nn::NetworkOptions::mlp(4, 3);
  config.q_head = true;
  Net net(config);
  const auto& out = net.forward(random_observations({2, 5, 4}, DType::f32, rng));
  CHECK(out.head("logits").raw_data() == out.logits.raw_data());
  CHECK(out.head("values").raw_data() == out.values.raw_data());
  CHECK(out.head("q").raw_data() == out.q.raw_data());
  CHECK_FALSE(out.head("mean").defined());  // no Gaussian head
  CHECK_THROWS_WITH_AS(out.head("policy"), doctest::Contains("no network head named 'policy'"),
                       Error);
  // A gradient set by name is the one backward() takes: the same as set by field.
  nn::NetworkGrads by_name, by_field;
  const Tensor grad_q = random_observations({2, 5, 3}, DType::f32, rng);
  by_name.head("q") = grad_q;
  by_field.q = grad_q;
  net.backward(by_name);
  const Tensor first = net.parameters().grads().clone();
  net.backward(by_field);
  CHECK((first.flat<float>() == net.parameters().grads().flat<float>()).all());
  CHECK(first.flat<float>().abs().sum() > 0.0f);
}

TEST_CASE("Network: useful FLOPs of the Nature CNN as counted by hand") {
  Net net(nn::NetworkOptions::nature(18));
  // Multiply-accumulates per frame: conv1 32*20*20*(4*8*8), conv2 64*9*9*(32*4*4),
  // conv3 64*7*7*(64*3*3), fc 3136*512; heads 512*(18+1).
  const double torso = 2.0 * (32 * 400 * 256 + 64 * 81 * 512 + 64 * 49 * 576 + 3136 * 512);
  const double heads = 2.0 * 512 * 19;
  CHECK(net.forward_flops_per_frame() == doctest::Approx(torso + heads));
  CHECK(torso == doctest::Approx(18.686e6).epsilon(1e-4));
  // Backward: every weight gradient, every input gradient except the first convolution's.
  const double conv1 = 2.0 * 32 * 400 * 256;
  CHECK(net.train_flops_per_frame() == doctest::Approx(3 * (torso + heads) - conv1));
  CHECK(net.parameters().num_parameters() == 8 * 8 * 4 * 32 + 32 + 4 * 4 * 32 * 64 + 64 +
                                                 3 * 3 * 64 * 64 + 64 + 3136 * 512 + 512 +
                                                 512 * 18 + 18 + 512 + 1);
}

TEST_CASE("Network: analytic gradients of a recurrent MLP with resets match finite differences") {
  auto config = nn::NetworkOptions::mlp(3, 4, {6});
  config.lstm_size = 5;
  config.seed = 3;
  Net net(config);
  Rng rng(3);
  const Tensor obs = random_observations({4, 2, 3}, DType::f32, rng);
  Tensor resets = Tensor::zeros({4, 2}, DType::u8);
  resets.data<std::uint8_t>()[2 * 2 + 1] = 1;
  check_network_gradients(net, obs, resets, 4);
}

TEST_CASE("Network: analytic gradients of the MinAtar net match finite differences") {
  auto config = nn::NetworkOptions::minatar(3, 5);
  config.seed = 5;
  Net net(config);
  Rng rng(5);
  check_network_gradients(net, random_observations({1, 3, 10, 10, 3}, DType::f32, rng), {}, 6);
}

TEST_CASE(
    "Network: the board torso keeps the board's size; its gradients match finite differences") {
  // Two 3x3 convolutions of padding 1 on [2, 4, 5] planes keep 4x5: the fc sees 4*5*3 features.
  auto config = nn::NetworkOptions::board({2, 4, 5}, 5, {4, 3}, {6});
  Net counted(config);
  CHECK(counted.parameters().num_parameters() ==
        (9 * 2 * 4 + 4) + (9 * 4 * 3 + 3) + (60 * 6 + 6) + (6 * 5 + 5) + (6 + 1));
  CHECK(counted.forward_flops_per_frame() ==
        doctest::Approx(2.0 * (20 * 9 * 2 * 4 + 20 * 9 * 4 * 3 + 60 * 6 + 6 * 6)));
  CHECK(nn::describe(config) ==
        "board observation [2, 4, 5] actions 5 lstm 0 conv [4,3] hidden [6]");
  // The biases start at zero, and a unit whose inputs are all zero (the padding, a ReLU's zeros)
  // would sit on its kink, where central differences see half a slope: random biases first. Each
  // conv bias moves 60 units: the step is 2e-3 (at 1e-2 one of them crosses its kink).
  config.seed = 9;
  Net net(config);
  Rng rng(9);
  for (nn::Parameter& p : net.parameters().parameters())
    if (p.name.ends_with("bias"))
      for (Index i = 0; i < p.shape.numel(); ++i)
        p.value.data<float>()[i] = static_cast<float>(rng.uniform(-0.5, 0.5));
  net.parameters().bump_version();
  const Tensor obs = random_observations({1, 3, 2, 4, 5}, DType::f32, rng);
  check_network_gradients(net, obs, {}, 6, 2e-3);
}

TEST_CASE("Network: a partial backward leaves zero gradients in the heads it did not reach") {
  Net net(nn::NetworkOptions::mlp(3, 2));
  Rng rng(7);
  const Tensor obs = random_observations({1, 4, 3}, DType::f32, rng);
  net.forward(obs);
  net.backward({.logits = random_observations({1, 4, 2}, DType::f32, rng),
                .values = random_observations({1, 4}, DType::f32, rng)});
  net.forward(obs);
  net.backward({.logits = random_observations({1, 4, 2}, DType::f32, rng)});
  CHECK(net.parameters().find("value.weight").grad.flat<float>().abs().maxCoeff() == 0.0f);
  CHECK(net.parameters().find("policy.weight").grad.flat<float>().abs().maxCoeff() > 0.0f);
}

TEST_CASE("Network: a tanh MLP with a separate value torso, against a reference and by gradient") {
  for (const bool box : {true, false}) {
    CAPTURE(box);
    auto config = box ? nn::NetworkOptions::mlp(4, 0, {8, 5}).gaussian(2)
                      : nn::NetworkOptions::mlp(4, 3, {8, 5});
    config.mlp_activation = nn::Activation::tanh;
    config.separate_value_torso = true;
    config.seed = 21;
    Net net(config);
    Rng rng(21);
    const Tensor obs = random_observations({2, 3, 4}, DType::f32, rng);
    const nn::NetworkOutputs& out = net.forward(obs);

    // The reference: two tanh MLPs on the same observations, the policy on one, V on the other.
    const auto param = [&](const std::string& name) {
      return to_vec(net.parameters().find(name).value);
    };
    const auto mlp = [&](const std::string& prefix) {
      const Vec w1 = param(prefix + ".fc1.weight"), b1 = param(prefix + ".fc1.bias");
      const Vec w2 = param(prefix + ".fc2.weight"), b2 = param(prefix + ".fc2.bias");
      const Vec h = linear_ref(to_vec(obs), 6, 4, 8, w1, &b1, nn::Activation::tanh);
      return linear_ref(h, 6, 8, 5, w2, &b2, nn::Activation::tanh);
    };
    const Vec policy_features = mlp("torso"), value_features = mlp("value_torso");
    const std::string head = box ? "policy_mean" : "policy";
    const Vec wp = param(head + ".weight"), bp = param(head + ".bias");
    const Vec wv = param("value.weight"), bv = param("value.bias");
    const Vec policy =
        linear_ref(policy_features, 6, 5, box ? 2 : 3, wp, &bp, nn::Activation::none);
    const Vec values = linear_ref(value_features, 6, 5, 1, wv, &bv, nn::Activation::none);
    CHECK(relative_error(to_vec(box ? out.mean : out.logits), policy) < 1e-5);
    CHECK(relative_error(to_vec(out.values), values) < 1e-5);
    // The two torsos start from different parameters, so a shared one would not match.
    CHECK(relative_error(policy_features, value_features) > 0.1);

    check_network_gradients(net, obs, {}, 22);

    // The value loss reaches the value torso only; the policy loss the policy torso only.
    net.forward(obs);
    net.backward({.values = random_observations({2, 3}, DType::f32, rng)});
    CHECK(net.parameters().find("torso.fc1.weight").grad.flat<float>().abs().maxCoeff() == 0.0f);
    CHECK(net.parameters().find("value_torso.fc1.weight").grad.flat<float>().abs().maxCoeff() >
          0.0f);
    net.forward(obs);
    if (box) {
      net.backward({.mean = random_observations({2, 3, 2}, DType::f32, rng),
                    .log_std = random_observations({2, 3, 2}, DType::f32, rng)});
    } else {
      net.backward({.logits = random_observations({2, 3, 3}, DType::f32, rng)});
    }
    CHECK(net.parameters().find("value_torso.fc1.weight").grad.flat<float>().abs().maxCoeff() ==
          0.0f);
    CHECK(net.parameters().find("torso.fc1.weight").grad.flat<float>().abs().maxCoeff() > 0.0f);

    const std::string text = nn::describe(config);
    CHECK(text == std::string("mlp observation [4] ") + (box ? "box 2" : "actions 3") +
                      " lstm 0 hidden [8,5] tanh value_torso");
    const nn::NetworkOptions back = nn::parse_description(text, "test");
    CHECK(back.mlp_activation == nn::Activation::tanh);
    CHECK(back.separate_value_torso);
    CHECK(nn::describe(back) == text);
    CHECK(net.forward_flops_per_frame() ==
          doctest::Approx(2.0 * (2 * (4 * 8 + 8 * 5) + 5 * (box ? 2 : 3) + 5)));
  }
  auto minatar_tanh = nn::NetworkOptions::minatar(3, 4);
  minatar_tanh.mlp_activation = nn::Activation::tanh;
  CHECK_THROWS_WITH_AS(Net{minatar_tanh},
                       doctest::Contains("mlp_activation must be relu, or tanh with the mlp torso"),
                       Error);
  auto recurrent = nn::NetworkOptions::mlp(3, 2);
  recurrent.separate_value_torso = true;
  recurrent.lstm_size = 8;
  CHECK_THROWS_WITH_AS(Net{recurrent},
                       doctest::Contains("separate_value_torso needs the policy and value heads"),
                       Error);
  // A separate MinAtar value torso is allowed: its layers are named value_torso.*.
  auto minatar = nn::NetworkOptions::minatar(3, 4);
  minatar.separate_value_torso = true;
  Net two(minatar);
  CHECK(two.parameters().find("value_torso.conv.weight").shape ==
        two.parameters().find("torso.conv.weight").shape);
}

TEST_CASE("Network: overfits a tiny supervised batch (loss falls by orders of magnitude)") {
  auto check_overfits = [](nn::NetworkOptions config, DType dtype, float lr, int steps_to_train) {
    config.seed = 11;
    Net net(config);
    nn::Adam<Backend> adam(net.parameters());
    Rng rng(11);
    const Index steps = 2, batch = 4, actions = config.num_actions;
    const Tensor obs =
        random_observations(config.observation_shape.prepend({steps, batch}), dtype, rng);
    std::vector<int> labels;
    std::vector<float> targets;
    for (Index i = 0; i < steps * batch; ++i) {
      labels.push_back(static_cast<int>(rng.below(static_cast<std::uint64_t>(actions))));
      targets.push_back(static_cast<float>(rng.uniform(-1, 1)));
    }
    Tensor grad_logits = Tensor::zeros({steps, batch, actions});
    Tensor grad_values = Tensor::zeros({steps, batch});
    double first = 0.0, last = 0.0;
    for (int step = 0; step < steps_to_train; ++step) {
      const auto& out = net.forward(obs);
      const RowMatrixXf log_probs =
          math::log_softmax(out.logits.reshape({steps * batch, actions}).matrix<float>());
      double loss = 0.0;
      auto gl = grad_logits.reshape({steps * batch, actions}).matrix<float>();
      for (Index i = 0; i < steps * batch; ++i) {
        const auto n = static_cast<float>(steps * batch);
        loss -= log_probs(i, labels[static_cast<std::size_t>(i)]) / n;
        gl.row(i) = log_probs.row(i).array().exp().matrix() / n;
        gl(i, labels[static_cast<std::size_t>(i)]) -= 1.0f / n;
        const float error = out.values.data<float>()[i] - targets[static_cast<std::size_t>(i)];
        loss += 0.5 * error * error / n;
        grad_values.data<float>()[i] = error / n;
      }
      if (step == 0) first = loss;
      last = loss;
      net.backward({.logits = grad_logits, .values = grad_values});
      adam.step(lr);
    }
    CAPTURE(first);
    CAPTURE(last);
    CHECK(last < first / 100.0);
  };
  check_overfits(nn::NetworkOptions::mlp(4, 3), DType::f32, 1e-2f, 300);
  auto recurrent = nn::NetworkOptions::mlp(4, 3);
  recurrent.lstm_size = 16;
  check_overfits(recurrent, DType::f32, 1e-2f, 300);
  check_overfits(nn::NetworkOptions::minatar(4, 6), DType::f32, 3e-3f, 200);
  check_overfits(nn::NetworkOptions::nature(6), DType::u8, 1e-3f, 60);
}

TEST_CASE("Network: bad configuration and inputs throw naming the setting") {
  CHECK_THROWS_WITH_AS(Net(nn::NetworkOptions::mlp(4, 0)),
                       doctest::Contains("NetworkOptions.num_actions"), Error);
  auto bad = nn::NetworkOptions::minatar(4, 6);
  bad.observation_shape = {4, 10, 10};
  CHECK_NOTHROW(Net{bad});  // [H, W, C] = [4, 10, 10] is a legal (odd) image
  bad.observation_shape = {10, 10};
  CHECK_THROWS_WITH_AS(
      Net{bad}, doctest::Contains("NetworkOptions.observation_shape for the minatar torso"), Error);
  auto board = nn::NetworkOptions::board({2, 6, 7}, 7);
  board.observation_shape = {84};
  CHECK_THROWS_WITH_AS(Net{board}, doctest::Contains("observation_shape for the board torso"),
                       Error);
  board.observation_shape = {2, 6, 7};
  board.conv_channels.clear();
  CHECK_THROWS_WITH_AS(Net{board}, doctest::Contains("conv_channels for the board torso"), Error);
  Net net(nn::NetworkOptions::mlp(4, 2));
  CHECK_THROWS_WITH_AS(net.forward(Tensor::zeros({8, 4})),
                       doctest::Contains("Network: observations must be [T, B, 4]"), Error);
  net.forward(Tensor::zeros({1, 8, 4}));
  CHECK_THROWS_WITH_AS(
      net.backward({.logits = Tensor::zeros({1, 8, 3})}),
      doctest::Contains("gradient of logits: expected f32[1, 8, 2], got f32[1, 8, 3]"), Error);
  CHECK_THROWS_WITH_AS(net.backward({}), doctest::Contains("no gradient given"), Error);
}

TEST_CASE("Network: the dueling Q head (Q = V + A - mean A) and its gradients") {
  Rng rng(11);
  nn::NetworkOptions c = nn::NetworkOptions::mlp(3, 4, {8});
  c.lstm_size = 5;
  c.policy_value_heads = false;
  c.q_head = true;
  c.dueling = true;
  c.seed = 3;
  Net net(c);
  std::vector<std::string> names;
  for (const nn::Parameter& p : net.parameters().parameters()) names.push_back(p.name);
  CHECK(std::find(names.begin(), names.end(), "q_value.weight") != names.end());
  CHECK(std::find(names.begin(), names.end(), "q_advantage.weight") != names.end());
  CHECK(std::find(names.begin(), names.end(), "q.weight") == names.end());

  const Tensor obs = random_observations({3, 2, 3}, DType::f32, rng);
  // A constant added to every advantage (its bias) leaves Q unchanged: the mean removes it.
  const Tensor q0 = net.forward(obs).q.clone();
  for (const nn::Parameter& p : net.parameters().parameters()) {
    if (p.name != "q_advantage.bias") continue;
    for (Index a = 0; a < 4; ++a) p.value.data<float>()[a] += 0.75f;
  }
  net.parameters().bump_version();
  const Tensor q1 = net.forward(obs).q;
  for (Index i = 0; i < q0.numel(); ++i)
    CHECK(q1.data<float>()[i] == doctest::Approx(q0.data<float>()[i]).epsilon(1e-5));
  check_network_gradients(net, obs, {}, 12);

  nn::NetworkOptions bad = c;
  bad.q_head = false;
  bad.policy_value_heads = true;
  CHECK_THROWS_WITH_AS(Net{bad}, doctest::Contains("dueling needs q_head"), Error);
}

TEST_CASE("Network: Gaussian policy heads (free or state-dependent log std) and their gradients") {
  for (const bool head : {false, true}) {
    CAPTURE(head);
    auto config = nn::NetworkOptions::mlp(3, 0, {6}).gaussian(2);
    config.state_dependent_log_std = head;
    config.initial_log_std = -0.5f;
    config.lstm_size = 4;
    config.seed = 8;
    Net net(config);
    Rng rng(8);
    const Tensor obs = random_observations({3, 2, 3}, DType::f32, rng);
    const nn::NetworkOutputs& out = net.forward(obs);
    CHECK(out.mean.shape() == Shape{3, 2, 2});
    CHECK(out.log_std.shape() == Shape{3, 2, 2});
    CHECK(out.values.shape() == Shape{3, 2});
    CHECK_FALSE(out.logits.defined());
    if (!head) {  // one free value per dimension, the same in every row, starting where asked
      for (Index i = 0; i < out.log_std.numel(); ++i) CHECK(out.log_std.data<float>()[i] == -0.5f);
    }
    // Train the log std away from its start so that the free one differs per dimension.
    Tensor resets = Tensor::zeros({3, 2}, DType::u8);
    resets.data<std::uint8_t>()[3] = 1;
    nn::Parameter& bias = net.parameters().find("policy_log_std.bias");
    bias.value.data<float>()[1] = 0.3f;
    net.parameters().bump_version();
    check_network_gradients(net, obs, resets, 9);
    if (!head) {  // the free log std's layer weight never gets a gradient
      CHECK(net.parameters().find("policy_log_std.weight").grad.flat<float>().abs().maxCoeff() ==
            0.0f);
      // Any batch size: every row holds the parameter (a larger batch, then a smaller one).
      for (const Index n : {7, 1}) {
        const nn::NetworkOutputs& o = net.forward(random_observations({1, n, 3}, DType::f32, rng));
        REQUIRE(o.log_std.shape() == Shape{1, n, 2});
        for (Index i = 0; i < n; ++i) {
          CHECK(o.log_std.data<float>()[2 * i] == bias.value.data<float>()[0]);
          CHECK(o.log_std.data<float>()[2 * i + 1] == 0.3f);
        }
      }
    }
    const std::string text = nn::describe(config);
    CHECK(text == std::string("mlp observation [3] box 2 lstm 4 hidden [6]") +
                      (head ? " log_std_head" : ""));
    const nn::NetworkOptions back = nn::parse_description(text, "test");
    CHECK(back.action_dims == 2);
    CHECK(back.num_actions == 0);
    CHECK(back.state_dependent_log_std == head);
  }
  auto both = nn::NetworkOptions::mlp(3, 4);
  both.action_dims = 2;
  CHECK_THROWS_WITH_AS(Net{both}, doctest::Contains("num_actions and action_dims are exclusive"),
                       Error);
  auto with_q = nn::NetworkOptions::mlp(3, 0).gaussian(2);
  with_q.q_head = true;
  CHECK_THROWS_WITH_AS(Net{with_q}, doctest::Contains("no Q head"), Error);
}

}  // namespace test_network
