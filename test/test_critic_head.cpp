// The critic head Q(x, a) (nn/heads/critic.hpp): its forward against a naive double-precision
// loop over the parameters, its gradients (every parameter and the action input) against central
// differences, its description words, its options refused by name, and its ONNX nodes against
// seedrl's forward in ONNX Runtime. Also the head kinds as a list: every kind's outputs are found
// by name, and what a network of each kind describes reads back.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "seedrl/algo/sac_loss.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/io/onnx.hpp"
#include "seedrl/nn/network.hpp"
#include "support/onnxruntime.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_critic_head {

using namespace seedrl;
using Backend = cpu::Backend;
using Net = nn::Network<Backend>;

namespace {

Tensor random_tensor(const Shape& shape, Rng& rng, double scale = 1.0) {
  Tensor t = Tensor::empty(shape);
  for (std::int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = static_cast<float>(rng.uniform(-scale, scale));
  return t;
}

// Parameter `name` as a row-major double matrix [rows, cols] (a vector: [n, 1]).
Eigen::MatrixXd parameter(Net& net, const std::string& name) {
  for (const nn::Parameter& p : net.parameters().parameters()) {
    if (p.name != name) continue;
    const std::int64_t rows = p.shape[0], cols = p.shape.rank() > 1 ? p.shape[1] : 1;
    Eigen::MatrixXd m(rows, cols);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) m(r, c) = p.value.data<float>()[r * cols + c];
    return m;
  }
  FAIL("no parameter " << name);
  return {};
}

// A critic on an MLP torso of one hidden layer: observations [5], actions [2], hidden [6, 4].
nn::NetworkOptions critic_options(bool layer_norm = false) {
  nn::NetworkOptions o = nn::NetworkOptions::mlp(5, 0, {7});
  o.action_critic(2, {6, 4});
  o.critic_layer_norm = layer_norm;
  o.seed = 11;
  return o;
}

// Random biases (initialised at small uniform values) so that every parameter matters.
void randomise(Net& net, Rng& rng) {
  for (nn::Parameter& p : net.parameters().parameters())
    for (std::int64_t i = 0; i < p.shape.numel(); ++i)
      p.value.data<float>()[i] = static_cast<float>(rng.uniform(-0.6, 0.6));
  net.parameters().bump_version();
}

// The forward against a naive loop in double: with layer_norm each hidden layer is normalised
// over its features (biased variance, epsilon 1e-5) and scaled and shifted before its ReLU.
void check_forward(bool layer_norm) {
  CAPTURE(layer_norm);
  Net net(critic_options(layer_norm));
  Rng rng(3);
  randomise(net, rng);
  const std::int64_t steps = 2, batch = 3;
  const Tensor obs = random_tensor({steps, batch, 5}, rng);
  const Tensor action = random_tensor({steps, batch, 2}, rng);
  const nn::NetworkInput inputs[] = {{"action", action}};
  const nn::NetworkOutputs& out = net.forward(obs, {}, {}, inputs);
  REQUIRE(out.q.shape() == Shape{steps, batch});
  CHECK_FALSE(out.logits.defined());
  CHECK_FALSE(out.values.defined());

  const Eigen::MatrixXd w_torso = parameter(net, "torso.fc1.weight"),
                        b_torso = parameter(net, "torso.fc1.bias"),
                        w_x = parameter(net, "critic.fc1.weight"),
                        b_1 = parameter(net, "critic.fc1.bias"),
                        w_a = parameter(net, "critic.action.weight"),
                        w_2 = parameter(net, "critic.fc2.weight"),
                        b_2 = parameter(net, "critic.fc2.bias"),
                        w_q = parameter(net, "critic.q.weight"),
                        b_q = parameter(net, "critic.q.bias");
  auto relu = [](Eigen::VectorXd v) { return v.cwiseMax(0.0); };
  auto norm = [&](Eigen::VectorXd v, int layer) -> Eigen::VectorXd {
    if (!layer_norm) return v;
    const std::string name = "critic.ln" + std::to_string(layer);
    const Eigen::VectorXd scale = parameter(net, name + ".weight"),
                          shift = parameter(net, name + ".bias");
    const double mean = v.mean();
    const double variance = (v.array() - mean).square().mean();
    const Eigen::VectorXd normalised = (v.array() - mean) / std::sqrt(variance + 1e-5);
    return normalised.cwiseProduct(scale) + shift;
  };
  for (std::int64_t i = 0; i < steps * batch; ++i) {
    Eigen::VectorXd x(5), a(2);
    for (int k = 0; k < 5; ++k) x(k) = obs.data<float>()[5 * i + k];
    for (int k = 0; k < 2; ++k) a(k) = action.data<float>()[2 * i + k];
    const Eigen::VectorXd features = relu(w_torso * x + b_torso);
    const Eigen::VectorXd h1 = relu(norm(w_x * features + w_a * a + b_1, 1));
    const Eigen::VectorXd h2 = relu(norm(w_2 * h1 + b_2, 2));
    const double q = (w_q * h2 + b_q)(0);
    CAPTURE(i);
    CHECK(out.q.data<float>()[i] == doctest::Approx(q).epsilon(1e-5));
  }
  // Without the action it says what it needs.
  CHECK_THROWS_WITH_AS(net.forward(obs),
                       doctest::Contains("the critic head needs the input 'action' (f32 [T, B, 2]"),
                       Error);
  const Tensor wrong = random_tensor({steps, batch, 3}, rng);
  const nn::NetworkInput wrong_inputs[] = {{"action", wrong}};
  CHECK_THROWS_WITH_AS(net.forward(obs, {}, {}, wrong_inputs),
                       doctest::Contains("the critic head's input 'action'"), Error);
}

// Every parameter's gradient (every third value) and the action's against central differences.
void check_gradients(bool layer_norm) {
  CAPTURE(layer_norm);
  Net net(critic_options(layer_norm));
  Rng rng(5);
  randomise(net, rng);
  const Tensor obs = random_tensor({2, 2, 5}, rng);
  Tensor action = random_tensor({2, 2, 2}, rng);
  const Tensor w = random_tensor({2, 2}, rng);
  auto loss = [&] {
    const nn::NetworkInput inputs[] = {{"action", action}};
    const nn::NetworkOutputs& out = net.forward(obs, {}, {}, inputs);
    double s = 0.0;
    for (std::int64_t i = 0; i < w.numel(); ++i)
      s += static_cast<double>(w.data<float>()[i]) * out.q.data<float>()[i];
    return s;
  };
  loss();
  net.backward({.q = w});
  const Tensor analytic = net.parameters().grads().clone();
  const Tensor grad_action = net.input_gradient("action").clone();
  REQUIRE(grad_action.shape() == Shape{2, 2, 2});
  CHECK_FALSE(net.input_gradient("goal").defined());
  const double h = 1e-3;
  int checked = 0;
  for (const nn::Parameter& p : net.parameters().parameters()) {
    for (std::int64_t i = 0; i < p.shape.numel(); i += 3) {
      float& value = p.value.data<float>()[i];
      const float saved = value;
      value = static_cast<float>(saved + h);
      net.parameters().bump_version();
      const double up = loss();
      value = static_cast<float>(saved - h);
      net.parameters().bump_version();
      const double down = loss();
      value = saved;
      net.parameters().bump_version();
      CAPTURE(p.name);
      CAPTURE(i);
      CHECK(analytic.data<float>()[p.offset + i] ==
            doctest::Approx((up - down) / (2 * h)).epsilon(2e-2).scale(1.0));
      ++checked;
    }
  }
  CHECK(checked > 30);
  for (std::int64_t i = 0; i < action.numel(); ++i) {
    float& value = action.data<float>()[i];
    const float saved = value;
    value = static_cast<float>(saved + h);
    const double up = loss();
    value = static_cast<float>(saved - h);
    const double down = loss();
    value = saved;
    CAPTURE(i);
    CHECK(grad_action.data<float>()[i] ==
          doctest::Approx((up - down) / (2 * h)).epsilon(2e-2).scale(1.0));
  }
}

}  // namespace

TEST_CASE("Critic head: Q(x, a) is the MLP on [features, action], as a naive loop computes it") {
  check_forward(false);
}

TEST_CASE("Critic head: gradients of every parameter and of the action match finite differences") {
  check_gradients(false);
}

TEST_CASE(
    "Critic head with layer normalisation: forward by a naive loop, gradients by differences") {
  check_forward(true);
  check_gradients(true);
  Net net(critic_options(true));
  std::vector<std::string> names;
  for (const nn::Parameter& p : net.parameters().parameters()) names.push_back(p.name);
  for (const char* name :
       {"critic.ln1.weight", "critic.ln1.bias", "critic.ln2.weight", "critic.ln2.bias"}) {
    CAPTURE(name);
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
  }
  CHECK(names.size() == 2 + 3 + 2 + 2 + 4);  // torso, fc1 and action, fc2, q, the norms
}

TEST_CASE("Critic head: its words in a description, and its options refused by name") {
  nn::NetworkOptions o = critic_options();
  const std::string text = nn::describe(o);
  CHECK(text == "mlp observation [5] box 2 lstm 0 hidden [7] critic [6,4]");
  const nn::NetworkOptions back = nn::parse_description(text, "ckpt");
  CHECK(nn::describe(back) == text);
  CHECK(back.critic);
  CHECK(back.critic_hidden == std::vector<std::int64_t>{6, 4});
  CHECK_FALSE(back.policy_value_heads);
  // No hidden layer: Q = W_x x + W_a a + b (CleanRL's Q-network on an empty torso, but linear).
  nn::NetworkOptions linear = nn::NetworkOptions::mlp(3, 0, {});
  linear.action_critic(1, {});
  CHECK(nn::parse_description(nn::describe(linear), "ckpt").critic_hidden.empty());
  Net small(linear);
  CHECK(small.parameters().parameters().size() == 3);  // critic.q.weight, .bias, action weight

  nn::NetworkOptions with_policy = critic_options();
  with_policy.policy_value_heads = true;
  CHECK_THROWS_WITH_AS(with_policy.validate(),
                       doctest::Contains("a critic (critic) takes actions of action_dims > 0 "
                                         "values and is the network's only head"),
                       Error);
  nn::NetworkOptions zero = critic_options();
  zero.critic_hidden = {6, 0};
  CHECK_THROWS_WITH_AS(zero.validate(), doctest::Contains(".critic_hidden sizes must be positive"),
                       Error);

  const std::string normed = nn::describe(critic_options(true));
  CHECK(normed == "mlp observation [5] box 2 lstm 0 hidden [7] critic [6,4] critic_layernorm");
  CHECK(nn::parse_description(normed, "ckpt").critic_layer_norm);
  CHECK_FALSE(back.critic_layer_norm);
  nn::NetworkOptions no_hidden = linear;
  no_hidden.critic_layer_norm = true;
  CHECK_THROWS_WITH_AS(no_hidden.validate(),
                       doctest::Contains(".critic_layer_norm normalises a critic's hidden layers"),
                       Error);
  nn::NetworkOptions not_critic = nn::NetworkOptions::mlp(4, 3);
  not_critic.critic_layer_norm = true;
  CHECK_THROWS_AS(not_critic.validate(), Error);
}

TEST_CASE("Head kinds: every kind's outputs by name, and every description reads back") {
  std::vector<nn::NetworkOptions> kinds;
  kinds.push_back(nn::NetworkOptions::mlp(4, 3));  // policy logits, value
  kinds.push_back(nn::NetworkOptions::mlp(4, 0).gaussian(2));
  kinds.back().state_dependent_log_std = true;
  nn::NetworkOptions q = nn::NetworkOptions::mlp(4, 3);
  q.policy_value_heads = false;
  q.q_head = true;
  kinds.push_back(q);
  q.dueling = true;
  kinds.push_back(q);
  kinds.push_back(critic_options());
  nn::NetworkOptions scalars = nn::NetworkOptions::mlp(4, 0, {});
  scalars.policy_value_heads = false;
  scalars.scalars = 2;
  kinds.push_back(scalars);
  for (const nn::NetworkOptions& o : kinds) {
    const std::string text = nn::describe(o);
    CAPTURE(text);
    CHECK(nn::describe(nn::parse_description(text, "test")) == text);
    Net net(o);
    Rng rng(1);
    const Tensor obs = random_tensor({1, 2, 4}, rng);
    const Tensor action = random_tensor({1, 2, 2}, rng);
    const nn::NetworkInput inputs[] = {{"action", action}};
    const Tensor critic_obs = random_tensor({1, 2, 5}, rng);
    const nn::NetworkOutputs& out =
        o.critic ? net.forward(critic_obs, {}, {}, inputs) : net.forward(obs);
    int defined = 0;
    for (std::string_view name : nn::kHeadNames) defined += out.head(name).defined() ? 1 : 0;
    CHECK(defined == (o.policy_value_heads ? 2 + (o.box_actions() ? 1 : 0) : 1));
  }
}

TEST_CASE("Scalars head: learned values broadcast to every frame, their gradient summed") {
  nn::NetworkOptions o = nn::NetworkOptions::mlp(1, 0, {});
  o.policy_value_heads = false;
  o.scalars = 2;
  o.initial_scalar = -0.5f;
  CHECK(nn::describe(o) == "mlp observation [1] actions 0 lstm 0 hidden [] scalars 2");
  Net net(o);
  const nn::NetworkOutputs& out = net.forward(Tensor::zeros({2, 3, 1}));
  REQUIRE(out.scalars.shape() == Shape{2, 3, 2});
  for (std::int64_t i = 0; i < out.scalars.numel(); ++i)
    CHECK(out.scalars.data<float>()[i] == -0.5f);
  Tensor grad = Tensor::empty({2, 3, 2});
  for (std::int64_t i = 0; i < grad.numel(); ++i)
    grad.data<float>()[i] = static_cast<float>(i % 2 + 1);
  net.backward({.scalars = grad});
  for (const nn::Parameter& p : net.parameters().parameters()) {
    CAPTURE(p.name);
    if (p.name == "scalars.bias") {
      CHECK(p.grad.data<float>()[0] == doctest::Approx(6.0));   // 6 frames x 1
      CHECK(p.grad.data<float>()[1] == doctest::Approx(12.0));  // 6 frames x 2
    } else {
      CHECK(p.grad.data<float>()[0] == 0.0f);  // the zero input reaches no weight
    }
  }

  std::string why;
  test::OnnxRuntime* ort = test::OnnxRuntime::get(why);
  if (ort == nullptr) {
    std::printf("SEEDRL_SKIPPED: %s\n", why.c_str());
    return;
  }
  test::OnnxRuntime::Session session(*ort, io::encode_onnx(net.config(), net.parameters()));
  const std::vector<Tensor> theirs =
      session.run({io::OnnxNames::observations}, {Tensor::zeros({4, 1})}, {"scalars"});
  REQUIRE(theirs[0].shape() == Shape{4, 2});
  for (std::int64_t i = 0; i < 8; ++i) CHECK(theirs[0].data<float>()[i] == -0.5f);
}

TEST_CASE("ONNX export: a critic takes the action as an input and matches seedrl's forward") {
  std::string why;
  test::OnnxRuntime* ort = test::OnnxRuntime::get(why);
  if (ort == nullptr) {
    std::printf("SEEDRL_SKIPPED: %s\n", why.c_str());
    return;
  }
  for (const bool layer_norm : {false, true}) {
    CAPTURE(layer_norm);
    Net net(critic_options(layer_norm));
    Rng rng(9);
    randomise(net, rng);
    test::OnnxRuntime::Session session(*ort, io::encode_onnx(net.config(), net.parameters()));
    const Tensor obs = random_tensor({4, 5}, rng);
    const Tensor action = random_tensor({4, 2}, rng);
    const nn::NetworkInput inputs[] = {{"action", action.reshape({1, 4, 2})}};
    const nn::NetworkOutputs& ours = net.forward(obs.reshape({1, 4, 5}), {}, {}, inputs);
    const std::vector<Tensor> theirs = session.run(
        {io::OnnxNames::observations, io::OnnxNames::action}, {obs, action}, {io::OnnxNames::q});
    REQUIRE(theirs[0].shape() == Shape{4});
    for (std::int64_t i = 0; i < 4; ++i)
      CHECK(theirs[0].data<float>()[i] == doctest::Approx(ours.q.data<float>()[i]).epsilon(1e-4));
  }
}

TEST_CASE("ONNX export: SAC's actor also gives the greedy action squashed into the box") {
  std::string why;
  test::OnnxRuntime* ort = test::OnnxRuntime::get(why);
  if (ort == nullptr) {
    std::printf("SEEDRL_SKIPPED: %s\n", why.c_str());
    return;
  }
  nn::NetworkOptions o = nn::NetworkOptions::mlp(3, 0, {8});
  o.gaussian(2);
  o.state_dependent_log_std = true;
  o.seed = 4;
  Net actor(o);
  Rng rng(6);
  randomise(actor, rng);
  const ActionSpec box = ActionSpec::box({-2.0f, 0.0f}, {2.0f, 1.0f});
  io::OnnxExportOptions options;
  options.squashed_box = box;
  test::OnnxRuntime::Session session(*ort, io::encode_onnx(o, actor.parameters(), options));
  const Tensor obs = random_tensor({5, 3}, rng, 2.0);
  const std::vector<Tensor> theirs =
      session.run({io::OnnxNames::observations}, {obs}, {io::OnnxNames::action});
  const nn::NetworkOutputs& ours = actor.forward(obs.reshape({1, 5, 3}));
  const SacMatrix mean = ours.mean.reshape({5, 2}).matrix<float>().array();
  const SacMatrix raw = ours.log_std.reshape({5, 2}).matrix<float>().array();
  const SacMatrix zeros = SacMatrix::Zero(5, 2);
  const Eigen::ArrayXf scale = (Eigen::ArrayXf(2) << 2.0f, 0.5f).finished();
  const Eigen::ArrayXf bias = (Eigen::ArrayXf(2) << 0.0f, 0.5f).finished();
  const SacSample greedy = sac_sample(mean, raw, scale, bias, {}, nullptr, &zeros);
  REQUIRE(theirs[0].shape() == Shape{5, 2});
  for (std::int64_t i = 0; i < 5; ++i)
    for (std::int64_t j = 0; j < 2; ++j)
      CHECK(theirs[0].data<float>()[i * 2 + j] ==
            doctest::Approx(greedy.action(i, j)).epsilon(1e-5));
  // Only a Gaussian policy of as many dimensions can be squashed.
  options.squashed_box = ActionSpec::box(3, -1.0f, 1.0f);
  CHECK_THROWS_WITH_AS(io::encode_onnx(o, actor.parameters(), options),
                       doctest::Contains("squashed_box box of 3"), Error);
}

}  // namespace test_critic_head
