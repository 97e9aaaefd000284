// Pendulum: Gymnasium Pendulum-v1's dynamics, reward and limits on scripted steps (expected
// values computed here from the published equations), torque and speed clipping, the 200-step
// truncation, the start distribution, and clear errors for bad actions.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "seedrl/env/pendulum.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_pendulum {

using namespace seedrl;

namespace {

StepResult step(Pendulum& env, float torque, const Tensor& obs) {
  const float action[] = {torque};
  return env.step(action, obs);
}

}  // namespace

TEST_CASE("Pendulum: specs of Pendulum-v1") {
  const Pendulum env;
  CHECK(env.observation_spec() == TensorSpec{{3}, DType::f32});
  const ActionSpec spec = env.action_spec();
  CHECK(spec.is_box());
  CHECK(spec.dims() == 1);
  CHECK(spec.low == std::vector<float>{-2.0f});
  CHECK(spec.high == std::vector<float>{2.0f});
  CHECK(spec.to_string() == "box of 1 in [-2, 2]");
  spec.validate("Pendulum");
}

TEST_CASE("Pendulum: one step follows the published equations") {
  Pendulum env(1);
  Tensor obs = Tensor::zeros({3});
  env.reset(obs);
  const double pi = std::numbers::pi;
  // Hanging down at rest, torque 1: the cost uses the state before the step.
  env.set_state(pi, 0.0, obs);
  StepResult r = step(env, 1.0f, obs);
  const double thdot = (15.0 * std::sin(pi) + 3.0) * 0.05;
  const double th = pi + thdot * 0.05;
  CHECK(r.reward == doctest::Approx(-(pi * pi + 0.001)).epsilon(1e-6));
  CHECK_FALSE(r.terminated);
  CHECK_FALSE(r.truncated);
  CHECK(env.theta_dot() == doctest::Approx(thdot));
  CHECK(env.theta() == doctest::Approx(th));
  CHECK(obs.data<float>()[0] == doctest::Approx(std::cos(th)));
  CHECK(obs.data<float>()[1] == doctest::Approx(std::sin(th)));
  CHECK(obs.data<float>()[2] == doctest::Approx(thdot));

  // A state with every reward term non-zero: angle 1 rad past upright after winding twice.
  env.set_state(1.0 + 4 * pi, -2.5, obs);
  r = step(env, -0.5f, obs);
  CHECK(r.reward == doctest::Approx(-(1.0 + 0.1 * 6.25 + 0.001 * 0.25)).epsilon(1e-6));
  CHECK(env.theta_dot() == doctest::Approx(-2.5 + (15.0 * std::sin(1.0) - 1.5) * 0.05));

  // Upright at rest with no torque stays there with reward 0.
  env.set_state(0.0, 0.0, obs);
  r = step(env, 0.0f, obs);
  CHECK(r.reward == 0.0f);
  CHECK(env.theta() == 0.0);
  CHECK(obs.data<float>()[0] == 1.0f);
}

TEST_CASE("Pendulum: torques and speeds are clipped as in Pendulum-v1") {
  Tensor a = Tensor::zeros({3}), b = Tensor::zeros({3});
  Pendulum clipped(1), limit(1);
  clipped.reset(a);
  limit.reset(b);
  clipped.set_state(0.7, 1.0, a);
  limit.set_state(0.7, 1.0, b);
  const StepResult r1 = step(clipped, 5.0f, a);
  const StepResult r2 = step(limit, 2.0f, b);
  CHECK(r1.reward == r2.reward);  // the cost sees the clipped torque
  CHECK(clipped.theta_dot() == limit.theta_dot());
  clipped.set_state(0.7, 1.0, a);
  limit.set_state(0.7, 1.0, b);
  step(clipped, -7.0f, a);
  step(limit, -2.0f, b);
  CHECK(clipped.theta() == limit.theta());

  // 7.9 + (15 sin(pi/2) + 3 * 2) * 0.05 = 8.95, clipped to 8.
  clipped.set_state(std::numbers::pi / 2, 7.9, a);
  step(clipped, 2.0f, a);
  CHECK(clipped.theta_dot() == 8.0);
  CHECK(clipped.theta() == doctest::Approx(std::numbers::pi / 2 + 8.0 * 0.05));
}

TEST_CASE("Pendulum: episodes are truncated after 200 steps and never terminate") {
  Pendulum env(3);
  Tensor obs = Tensor::zeros({3});
  env.reset(obs);
  for (int t = 1; t <= 200; ++t) {
    const StepResult r = step(env, t % 2 ? 2.0f : -2.0f, obs);
    CHECK_FALSE(r.terminated);
    CHECK(r.truncated == (t == 200));
    CHECK(r.reward <= 0.0f);
    CHECK(r.reward >= -(std::numbers::pi * std::numbers::pi + 0.1 * 64 + 0.004) - 1e-4);
  }
  CHECK_THROWS_WITH_AS(step(env, 0.0f, obs), doctest::Contains("call reset()"), Error);
  env.reset(obs);
  CHECK_FALSE(step(env, 0.0f, obs).truncated);
}

TEST_CASE("Pendulum: starts uniform in angle [-pi, pi] and velocity [-1, 1], per seed") {
  Pendulum env(5), same(5), other(6);
  Tensor obs = Tensor::zeros({3});
  double min_theta = 10, max_theta = -10, min_dot = 10, max_dot = -10, sum = 0;
  for (int k = 0; k < 2000; ++k) {
    env.reset(obs);
    min_theta = std::min(min_theta, env.theta());
    max_theta = std::max(max_theta, env.theta());
    min_dot = std::min(min_dot, env.theta_dot());
    max_dot = std::max(max_dot, env.theta_dot());
    sum += env.theta();
    CHECK(obs.data<float>()[2] == static_cast<float>(env.theta_dot()));
  }
  CHECK(min_theta >= -std::numbers::pi);
  CHECK(min_theta < -3.0);
  CHECK(max_theta <= std::numbers::pi);
  CHECK(max_theta > 3.0);
  CHECK(min_dot >= -1.0);
  CHECK(min_dot < -0.99);
  CHECK(max_dot <= 1.0);
  CHECK(max_dot > 0.99);
  CHECK(std::abs(sum / 2000) < 0.2);
  same.reset(obs);
  other.reset(obs);
  Pendulum first(5);
  first.reset(obs);
  CHECK(first.theta() == same.theta());
  CHECK(first.theta() != other.theta());
}

TEST_CASE("Pendulum: angle normalisation and bad actions") {
  const double pi = std::numbers::pi;
  CHECK(Pendulum::normalize_angle(0.5) == doctest::Approx(0.5));
  CHECK(Pendulum::normalize_angle(3 * pi) == doctest::Approx(-pi));
  CHECK(Pendulum::normalize_angle(-3 * pi / 2) == doctest::Approx(pi / 2));
  CHECK(Pendulum::normalize_angle(7.0) == doctest::Approx(7.0 - 2 * pi));

  Pendulum env;
  Tensor obs = Tensor::zeros({3});
  env.reset(obs);
  const float two[] = {1.0f, 1.0f};
  CHECK_THROWS_WITH_AS(env.step(two, obs), doctest::Contains("1 torque value, got 2"), Error);
  CHECK_THROWS_WITH_AS(step(env, std::nanf(""), obs), doctest::Contains("not finite"), Error);
  Tensor wrong = Tensor::zeros({4});
  CHECK_THROWS_WITH_AS(env.reset(wrong), doctest::Contains("Pendulum"), Error);
}

TEST_CASE("ActionSpec: discrete or box, validated with clear errors") {
  CHECK(ActionSpec{6} == ActionSpec::discrete(6));
  CHECK_FALSE(ActionSpec{6}.is_box());
  CHECK(ActionSpec{6}.dims() == 1);
  CHECK(ActionSpec{6}.to_string() == "6 discrete actions");
  const ActionSpec box = ActionSpec::box({-1.0f, 0.0f}, {1.0f, 2.0f});
  CHECK(box.dims() == 2);
  CHECK(box.to_string() == "box of 2 in [-1, 1] x [0, 2]");
  CHECK_FALSE(box == ActionSpec::box(2, -1.0f, 1.0f));
  box.validate("test");
  CHECK_THROWS_WITH_AS(ActionSpec{0}.validate("env"),
                       doctest::Contains("env: an action spec is N > 0 discrete actions or a box"),
                       Error);
  CHECK_THROWS_WITH_AS(ActionSpec::box({0.0f}, {0.0f}).validate("env"),
                       doctest::Contains("box dimension 0 has bounds [0, 0]"), Error);
  CHECK_THROWS_WITH_AS(ActionSpec::box({0.0f, 1.0f}, {1.0f}).validate("env"),
                       doctest::Contains("2 lower bounds but 1 upper bounds"), Error);
  CHECK_THROWS_WITH_AS(ActionSpec::box({-INFINITY}, {1.0f}).validate("env"),
                       doctest::Contains("finite, low < high"), Error);
}

}  // namespace test_pendulum
