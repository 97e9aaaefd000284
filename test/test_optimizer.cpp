// Optimizers against hand-computed steps, gradient clipping, learning-rate decay.
#include <doctest/doctest.h>

#include <cmath>
#include <thread>
#include <vector>

#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/nn/gradient_clipping.hpp"
#include "seedrl/nn/learning_rate.hpp"
#include "seedrl/nn/optimizer.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_optimizer {

using namespace seedrl;
using Backend = cpu::Backend;

namespace {

// A store with one parameter of two elements, values p0, gradients set per step.
struct Fixture {
  nn::ParameterStore store;
  nn::Parameter* p;
  Fixture(float a, float b) {
    p = &store.add("p", {2}, nn::Init::zeros(), 1, 1);
    store.finalize(0);
    p->value.data<float>()[0] = a;
    p->value.data<float>()[1] = b;
  }
  void set_grad(float a, float b) {
    p->grad.data<float>()[0] = a;
    p->grad.data<float>()[1] = b;
  }
  float value(int i) const { return p->value.data<float>()[i]; }
};

}  // namespace

TEST_CASE("Adam: first step moves by the learning rate; second step as computed by hand") {
  Fixture f(1.0f, -2.0f);
  nn::Adam<Backend> adam(f.store, {0.9f, 0.999f, 1e-8f});
  f.set_grad(0.5f, -3.0f);
  adam.step(0.1f);
  // m_hat = g and v_hat = g^2 after one step, so the update is lr * g / |g|.
  CHECK(f.value(0) == doctest::Approx(0.9).epsilon(1e-6));
  CHECK(f.value(1) == doctest::Approx(-1.9).epsilon(1e-6));
  f.set_grad(1.0f, 1.0f);
  adam.step(0.1f);
  // Element 0: m = 0.9*0.05 + 0.1*1 = 0.145, v = 0.999*0.00025 + 0.001*1 = 0.00124975,
  // m_hat = 0.145/0.19 = 0.763157894..., v_hat = 0.00124975/0.001999 = 0.625187593...,
  // step = 0.1 * 0.763157894 / (0.790688... + 1e-8) = 0.0965182...
  CHECK(f.value(0) == doctest::Approx(0.9 - 0.0965182).epsilon(1e-5));
  CHECK(adam.steps() == 2);
  CHECK(adam.slots().size() == 2);
  CHECK(adam.slots()[0].name == "adam.m");
}

TEST_CASE("RMSProp: plain, epsilon placement, centered with momentum") {
  {
    Fixture f(1.0f, 1.0f);
    nn::RmsProp<Backend> rms(f.store, {0.9f, 0.0f, 0.01f, false, true});
    f.set_grad(2.0f, 0.0f);
    rms.step(0.1f);
    // ms = 0.1 * 4 = 0.4;  p -= 0.1 * 2 / sqrt(0.41)
    CHECK(f.value(0) == doctest::Approx(1.0 - 0.2 / std::sqrt(0.41)).epsilon(1e-6));
    CHECK(f.value(1) == 1.0f);
  }
  {
    Fixture f(1.0f, 1.0f);
    nn::RmsProp<Backend> rms(f.store, {0.9f, 0.0f, 0.01f, false, false});
    f.set_grad(2.0f, 0.0f);
    rms.step(0.1f);
    CHECK(f.value(0) == doctest::Approx(1.0 - 0.2 / (std::sqrt(0.4) + 0.01)).epsilon(1e-6));
  }
  {
    Fixture f(0.0f, 0.0f);
    nn::RmsProp<Backend> rms(f.store, {0.5f, 0.9f, 1e-3f, true, true});
    f.set_grad(1.0f, 0.0f);
    rms.step(0.1f);
    // ms = 0.5, mg = 0.5, denom = 0.25; mom = 0.1 / sqrt(0.251)
    const double mom1 = 0.1 / std::sqrt(0.251);
    CHECK(f.value(0) == doctest::Approx(-mom1).epsilon(1e-6));
    f.set_grad(-1.0f, 0.0f);
    rms.step(0.1f);
    // ms = 0.25 + 0.5 = 0.75, mg = 0.25 - 0.5 = -0.25, denom = 0.6875;
    // mom = 0.9 mom1 - 0.1 / sqrt(0.6885)
    const double mom2 = 0.9 * mom1 - 0.1 / std::sqrt(0.6885);
    CHECK(f.value(0) == doctest::Approx(-mom1 - mom2).epsilon(1e-6));
  }
}

TEST_CASE("SGD: plain and with momentum") {
  Fixture f(1.0f, 2.0f);
  nn::Sgd<Backend> sgd(f.store, {0.5f});
  f.set_grad(1.0f, -1.0f);
  sgd.step(0.1f);
  CHECK(f.value(0) == doctest::Approx(0.9));
  CHECK(f.value(1) == doctest::Approx(2.1));
  f.set_grad(2.0f, 0.0f);
  sgd.step(0.1f);
  // buf = 0.5 * 1 + 2 = 2.5
  CHECK(f.value(0) == doctest::Approx(0.65));
  CHECK(f.value(1) == doctest::Approx(2.15));
}

TEST_CASE("make_optimizer builds the named kind; step bumps the store version") {
  Fixture f(0.0f, 0.0f);
  nn::OptimizerOptions config;
  for (auto [kind, name] : {std::pair{nn::OptimizerKind::adam, "adam"},
                            std::pair{nn::OptimizerKind::rmsprop, "rmsprop"},
                            std::pair{nn::OptimizerKind::sgd, "sgd"}}) {
    config.kind = kind;
    auto opt = nn::make_optimizer<Backend>(f.store, config);
    CHECK(std::string(opt->name()) == name);
    const auto version = f.store.version();
    opt->step(0.01f);
    CHECK(f.store.version() == version + 1);
  }
}

TEST_CASE("An update split into ranges (the learner's workers) gives the same bits as a whole") {
  // 5000 elements in uneven ranges, each range on its own thread at the same time.
  auto make_store = [](nn::ParameterStore& store) {
    store.add("w", {5000}, nn::Init::uniform(1.0), 1, 1);
    store.finalize(3);
    Rng rng(11);
    float* g = store.grads().data<float>();
    for (std::int64_t i = 0; i < store.flat_size(); ++i)
      g[i] = static_cast<float>(rng.uniform(-1.0, 1.0));
  };
  const nn::Optimizer::Splitter split = [](std::int64_t n, const nn::Optimizer::Range& range) {
    const std::int64_t cuts[] = {0, 7, 2048, 2049, 4096, n};
    std::vector<std::thread> threads;
    for (std::size_t k = 0; k + 1 < std::size(cuts); ++k)
      threads.emplace_back([&range, &cuts, k] { range(cuts[k], cuts[k + 1]); });
    for (std::thread& t : threads) t.join();
  };
  for (const nn::OptimizerKind kind :
       {nn::OptimizerKind::adam, nn::OptimizerKind::rmsprop, nn::OptimizerKind::sgd}) {
    CAPTURE(static_cast<int>(kind));
    nn::ParameterStore whole_store, split_store;
    make_store(whole_store);
    make_store(split_store);
    nn::OptimizerOptions config;
    config.kind = kind;
    config.sgd.momentum = 0.9f;
    auto whole = nn::make_optimizer<Backend>(whole_store, config);
    auto parts = nn::make_optimizer<Backend>(split_store, config);
    for (int step = 0; step < 3; ++step) {
      whole->step(0.01f);
      parts->step(0.01f, split);
    }
    const float* a = whole_store.values().data<float>();
    const float* b = split_store.values().data<float>();
    std::int64_t differing = 0;
    for (std::int64_t i = 0; i < whole_store.flat_size(); ++i) differing += a[i] != b[i];
    CHECK(differing == 0);
    CHECK(split_store.version() == whole_store.version());
    CHECK(parts->steps() == 3);
  }
}

TEST_CASE("Invalid optimizer settings throw naming the setting") {
  Fixture f(0.0f, 0.0f);
  CHECK_THROWS_WITH_AS(nn::Adam<Backend>(f.store, {1.0f, 0.999f, 1e-8f}),
                       doctest::Contains("AdamOptions.beta1"), Error);
  CHECK_THROWS_WITH_AS(nn::Adam<Backend>(f.store, {0.9f, 0.999f, 0.0f}),
                       doctest::Contains("AdamOptions.epsilon"), Error);
  CHECK_THROWS_WITH_AS(nn::RmsProp<Backend>(f.store, {1.5f}),
                       doctest::Contains("RmsPropOptions.decay"), Error);
  CHECK_THROWS_WITH_AS(nn::Sgd<Backend>(f.store, {-0.1f}), doctest::Contains("SgdOptions.momentum"),
                       Error);
  nn::Sgd<Backend> sgd(f.store);
  CHECK_THROWS_WITH_AS(sgd.step(-1.0f),
                       doctest::Contains("sgd: learning rate must be finite and >= 0"), Error);
  CHECK_THROWS_WITH_AS(sgd.step(NAN), doctest::Contains("learning rate"), Error);
  nn::ParameterStore unfinished;
  CHECK_THROWS_WITH_AS(nn::Sgd<Backend>{unfinished}, doctest::Contains("not finalised"), Error);
}

TEST_CASE("clip_by_global_norm scales all gradients together and returns the norm before") {
  nn::ParameterStore store;
  auto& a = store.add("a", {1}, nn::Init::zeros(), 1, 1);
  auto& b = store.add("b", {1}, nn::Init::zeros(), 1, 1);
  store.finalize(0);
  a.grad.data<float>()[0] = 3.0f;
  b.grad.data<float>()[0] = 4.0f;
  CHECK(nn::clip_by_global_norm<Backend>(store, 10.0) == doctest::Approx(5.0));
  CHECK(a.grad.data<float>()[0] == 3.0f);
  CHECK(nn::clip_by_global_norm<Backend>(store, 1.0) == doctest::Approx(5.0));
  CHECK(a.grad.data<float>()[0] == doctest::Approx(0.6));
  CHECK(b.grad.data<float>()[0] == doctest::Approx(0.8));
  CHECK(nn::global_grad_norm<Backend>(store) == doctest::Approx(1.0));
  CHECK_THROWS_WITH_AS(nn::clip_by_global_norm<Backend>(store, 0.0),
                       doctest::Contains("max_norm must be positive"), Error);
}

TEST_CASE("LinearDecay goes from the initial to the final rate, then stays") {
  const nn::LinearDecay decay{1e-3, 100, 0.0};
  CHECK(decay.at(0) == doctest::Approx(1e-3));
  CHECK(decay.at(50) == doctest::Approx(5e-4));
  CHECK(decay.at(100) == doctest::Approx(0.0));
  CHECK(decay.at(1000) == doctest::Approx(0.0));
  CHECK(nn::LinearDecay{2e-4, 0}.at(12345) == doctest::Approx(2e-4));
  CHECK_THROWS_WITH_AS((nn::LinearDecay{1e-3, -1}.validate()),
                       doctest::Contains("LinearDecay.decay_steps"), Error);
}

}  // namespace test_optimizer
