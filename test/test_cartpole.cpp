// CartPole against trajectories computed independently from the published equations of motion
// (Barto, Sutton & Anderson 1983, in the corrected form of Florian 2007, which Gymnasium uses).
#include <doctest/doctest.h>

#include <array>
#include <cmath>

#include "seedrl/env/cartpole.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_cartpole {

using namespace seedrl;

namespace {

using State = std::array<double, 4>;

// Independent reference: the derivative of the state from the equations of motion
//   theta'' = (g sin th + cos th (-F - m_p l th'^2 sin th) / (m_c + m_p)) / (l (4/3 - m_p cos^2 th
//   / (m_c + m_p))) x''     = (F + m_p l (th'^2 sin th - theta'' cos th)) / (m_c + m_p)
// and one explicit Euler step s + tau * f(s).
State reference_step(const State& s, int action) {
  const double g = 9.8, mc = 1.0, mp = 0.1, l = 0.5, tau = 0.02;
  const double f = action == 1 ? 10.0 : -10.0;
  const double th = s[2], thd = s[3];
  const double theta_acc =
      (g * std::sin(th) + std::cos(th) * (-f - mp * l * thd * thd * std::sin(th)) / (mc + mp)) /
      (l * (4.0 / 3.0 - mp * std::cos(th) * std::cos(th) / (mc + mp)));
  const double x_acc =
      (f + mp * l * (thd * thd * std::sin(th) - theta_acc * std::cos(th))) / (mc + mp);
  const State derivative{s[1], x_acc, s[3], theta_acc};
  State next;
  for (int i = 0; i < 4; ++i)
    next[static_cast<std::size_t>(i)] =
        s[static_cast<std::size_t>(i)] + tau * derivative[static_cast<std::size_t>(i)];
  return next;
}

}  // namespace

TEST_CASE("CartPole: the first steps from rest, computed by hand") {
  CartPole env(1);
  Tensor obs = Tensor::empty({4});
  env.reset(obs);
  env.set_state({0, 0, 0, 0});
  env.step(1, obs);
  CHECK(env.state()[0] == 0.0);
  CHECK(env.state()[1] == doctest::Approx(0.1951219512195122).epsilon(1e-14));
  CHECK(env.state()[3] == doctest::Approx(-0.2926829268292683).epsilon(1e-14));
  env.step(0, obs);  // the positions move with the old velocities (explicit Euler)
  CHECK(env.state()[0] == doctest::Approx(0.0039024390243902443).epsilon(1e-14));
  CHECK(env.state()[2] == doctest::Approx(-0.005853658536585366).epsilon(1e-14));
  CHECK(std::abs(env.state()[1]) < 1e-15);
  CHECK(obs.data<float>()[2] == static_cast<float>(env.state()[2]));
}

TEST_CASE("CartPole: trajectories match the independent reference") {
  CartPole env(7);
  Tensor obs = Tensor::empty({4});
  for (int episode = 0; episode < 5; ++episode) {
    env.reset(obs);
    State reference = env.state();
    for (int i = 0; i < 4; ++i)
      CHECK(obs.data<float>()[i] == static_cast<float>(reference[static_cast<std::size_t>(i)]));
    int action = episode % 2;
    for (int t = 0; t < 60; ++t) {
      action = (t * 7 + episode) % 3 == 0 ? 1 - action : action;  // a scripted, irregular policy
      const StepResult r = env.step(action, obs);
      reference = reference_step(reference, action);
      for (int i = 0; i < 4; ++i) {
        REQUIRE(env.state()[static_cast<std::size_t>(i)] ==
                doctest::Approx(reference[static_cast<std::size_t>(i)]).epsilon(1e-9));
        REQUIRE(obs.data<float>()[i] ==
                static_cast<float>(env.state()[static_cast<std::size_t>(i)]));
      }
      CHECK(r.reward == 1.0f);  // every step is rewarded, the terminating one included
      const bool out =
          std::abs(reference[0]) > 2.4 || std::abs(reference[2]) > 12.0 * 2.0 * M_PI / 360.0;
      CHECK(r.terminated == out);
      if (r.terminated) break;
    }
  }
}

TEST_CASE("CartPole: termination thresholds are |x| > 2.4 and |theta| > 12 degrees") {
  CartPole env(3);
  Tensor obs = Tensor::empty({4});
  env.reset(obs);
  const double limit = 12.0 * 2.0 * M_PI / 360.0;
  // theta moves by tau * theta_dot: land just inside, then just outside.
  env.set_state({0, 0, limit - 0.001, 0.04});
  CHECK_FALSE(env.step(1, obs).terminated);
  env.set_state({0, 0, limit - 0.001, 0.06});
  CHECK(env.step(1, obs).terminated);
  env.set_state({2.4 - 0.001, 0.04, 0, 0});
  CHECK_FALSE(env.step(0, obs).terminated);
  env.set_state({-2.4 + 0.001, -0.06, 0, 0});
  CHECK(env.step(1, obs).terminated);
}

TEST_CASE("CartPole: a balanced pole is truncated, not terminated, at 500 steps") {
  CartPole env(11);
  Tensor obs = Tensor::empty({4});
  env.reset(obs);
  StepResult r;
  int steps = 0;
  do {
    const float* s = obs.data<float>();
    r = env.step(s[2] + 0.5f * s[3] + 0.01f * s[0] + 0.1f * s[1] > 0.0f ? 1 : 0,
                 obs);  // a balancing controller
    ++steps;
  } while (!r.episode_over());
  CHECK(steps == 500);
  CHECK(r.truncated);
  CHECK_FALSE(r.terminated);
  CHECK_THROWS_WITH_AS(env.step(0, obs), doctest::Contains("step after the episode ended"), Error);
  env.reset(obs);
  CHECK(env.episode_steps() == 0);
}

TEST_CASE("CartPole: reset draws each variable in [-0.05, 0.05) from the seed") {
  CartPole a(5), b(5), c(6);
  Tensor oa = Tensor::empty({4}), ob = Tensor::empty({4}), oc = Tensor::empty({4});
  double lo = 1, hi = -1;
  for (int i = 0; i < 2000; ++i) {
    a.reset(oa);
    b.reset(ob);
    c.reset(oc);
    for (double v : a.state()) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    REQUIRE(a.state() == b.state());
  }
  CHECK(lo >= -0.05);
  CHECK(hi < 0.05);
  CHECK(lo < -0.049);
  CHECK(hi > 0.049);
  CHECK(a.state() != c.state());
}

TEST_CASE("CartPole: invalid use is an error") {
  CartPole env(1);
  Tensor obs = Tensor::empty({4});
  env.reset(obs);
  CHECK_THROWS_WITH_AS(env.step(2, obs),
                       doctest::Contains("CartPole: action 2 out of range [0, 2)"), Error);
  Tensor wrong = Tensor::empty({5});
  CHECK_THROWS_WITH_AS(env.reset(wrong),
                       doctest::Contains("CartPole: observation: expected f32[4], got f32[5]"),
                       Error);
  CHECK_THROWS_WITH_AS(CartPole(1, {0}), doctest::Contains("max_episode_steps must be positive"),
                       Error);
}

}  // namespace test_cartpole
