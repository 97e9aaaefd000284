// MuJoCo locomotion (env/mujoco.hpp): each task's published observation size, action bounds and
// step length; observations made of the state as Gymnasium v4 makes them; reset noise; every
// reward term recomputed from the states before and after scripted steps; healthy-state
// termination, truncation, determinism per seed and clear errors.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "seedrl/env/mujoco.hpp"

namespace test_mujoco {

using namespace seedrl;

namespace {

struct Published {
  MujocoTask task;
  int observation_size, action_dims, skipped_positions;
  double dt, control_weight, healthy_reward;
};

const Published kTasks[] = {
    {MujocoTask::half_cheetah, 17, 6, 1, 0.05, 0.1, 0.0},
    {MujocoTask::hopper, 11, 3, 1, 0.008, 1e-3, 1.0},
    {MujocoTask::walker2d, 17, 6, 1, 0.008, 1e-3, 1.0},
    {MujocoTask::ant, 27, 8, 2, 0.05, 0.5, 1.0},
};

std::vector<float> scripted_action(int dims, int step) {
  std::vector<float> a(static_cast<std::size_t>(dims));
  for (int d = 0; d < dims; ++d) a[static_cast<std::size_t>(d)] = std::sin(0.7f * step + d) * 0.9f;
  return a;
}

}  // namespace

TEST_CASE("MujocoEnv: the published observation sizes, action bounds and step lengths") {
  for (const Published& p : kTasks) {
    CAPTURE(std::string(mujoco_task_name(p.task)));
    MujocoEnv env(p.task, 1);
    CHECK(env.observation_spec() == TensorSpec{{p.observation_size}, DType::f32});
    const ActionSpec spec = env.action_spec();
    CHECK(spec.is_box());
    CHECK(spec.dims() == p.action_dims);
    CHECK(spec.low == std::vector<float>(static_cast<std::size_t>(p.action_dims), -1.0f));
    CHECK(spec.high == std::vector<float>(static_cast<std::size_t>(p.action_dims), 1.0f));
    CHECK(env.dt() == doctest::Approx(p.dt));
    CHECK(parse_mujoco_task(mujoco_task_name(p.task)) == p.task);
  }
  CHECK(parse_mujoco_task("half_cheetah") == MujocoTask::half_cheetah);
  CHECK_THROWS_WITH_AS(parse_mujoco_task("humanoid"),
                       doctest::Contains("halfcheetah, hopper, walker2d or ant"), Error);
}

TEST_CASE("MujocoEnv: observations are the state, reset noise is Gymnasium's") {
  for (const Published& p : kTasks) {
    CAPTURE(std::string(mujoco_task_name(p.task)));
    MujocoEnv env(p.task, 2);
    Tensor obs = Tensor::zeros({p.observation_size});
    env.reset(obs);
    const std::vector<double> q = env.qpos(), v = env.qvel();
    int k = 0;
    for (std::size_t i = static_cast<std::size_t>(p.skipped_positions); i < q.size(); ++i)
      CHECK(obs.data<float>()[k++] == static_cast<float>(q[i]));
    for (double x : v) {
      const bool clipped = p.task == MujocoTask::hopper || p.task == MujocoTask::walker2d;
      CHECK(obs.data<float>()[k++] == static_cast<float>(clipped ? std::clamp(x, -10.0, 10.0) : x));
    }
    CHECK(k == p.observation_size);
    CHECK(env.healthy());
  }

  // Hopper: positions and velocities within +-0.005 of the initial state (torso 1.25 m up).
  MujocoEnv hopper(MujocoTask::hopper, 3);
  Tensor obs = Tensor::zeros({11});
  double largest = 0.0;
  for (int r = 0; r < 200; ++r) {
    hopper.reset(obs);
    const std::vector<double> q = hopper.qpos(), v = hopper.qvel();
    for (std::size_t i = 0; i < q.size(); ++i)
      largest = std::max(largest, std::abs(q[i] - (i == 1 ? 1.25 : 0.0)));
    for (double x : v) largest = std::max(largest, std::abs(x));
  }
  CHECK(largest <= 0.005);
  CHECK(largest > 0.004);

  // HalfCheetah: velocities 0.1 N(0, 1).
  MujocoEnv cheetah(MujocoTask::half_cheetah, 4);
  Tensor cheetah_obs = Tensor::zeros({17});
  double squares = 0.0;
  int n = 0;
  for (int r = 0; r < 300; ++r) {
    cheetah.reset(cheetah_obs);
    for (double x : cheetah.qvel()) {
      squares += x * x;
      ++n;
    }
  }
  CHECK(std::sqrt(squares / n) == doctest::Approx(0.1).epsilon(0.1));
}

TEST_CASE("MujocoEnv: every reward term, recomputed from the states around scripted steps") {
  for (const Published& p : kTasks) {
    CAPTURE(std::string(mujoco_task_name(p.task)));
    MujocoEnv env(p.task, 5);
    Tensor obs = Tensor::zeros({p.observation_size});
    env.reset(obs);
    for (int t = 0; t < 30; ++t) {
      CAPTURE(t);
      const std::vector<float> a = scripted_action(p.action_dims, t);
      const double x_before = env.qpos()[0];
      const StepResult r = env.step(a, obs);
      const double x_after = env.qpos()[0];
      double squares = 0.0;
      for (float x : a) squares += static_cast<double>(x) * x;
      const MujocoRewardTerms& terms = env.last_reward();
      CHECK(terms.x_velocity == doctest::Approx((x_after - x_before) / p.dt).epsilon(1e-9));
      CHECK(terms.forward == terms.x_velocity);
      CHECK(terms.control_cost == doctest::Approx(p.control_weight * squares));
      CHECK(terms.healthy == p.healthy_reward);
      CHECK(r.reward ==
            doctest::Approx(terms.x_velocity - p.control_weight * squares + p.healthy_reward)
                .epsilon(1e-5));
      if (r.episode_over()) break;
    }
  }
}

TEST_CASE("MujocoEnv: unhealthy states terminate Hopper, Walker2d and Ant; HalfCheetah never") {
  Tensor obs11 = Tensor::zeros({11}), obs17 = Tensor::zeros({17}), obs27 = Tensor::zeros({27});
  const std::vector<float> zero3(3, 0.0f), zero6(6, 0.0f), zero8(8, 0.0f);

  MujocoEnv hopper(MujocoTask::hopper, 1);
  hopper.reset(obs11);
  std::vector<double> q = hopper.qpos(), v = hopper.qvel();
  q[2] = 0.3;  // leaning past the 0.2 rad limit
  hopper.set_state(q, v, obs11);
  CHECK_FALSE(hopper.healthy());
  CHECK(hopper.step(zero3, obs11).terminated);
  hopper.reset(obs11);
  q = hopper.qpos();
  q[1] = 0.6;  // torso below 0.7 m
  hopper.set_state(q, v, obs11);
  CHECK(hopper.step(zero3, obs11).terminated);
  // Left alone, the hopper falls over.
  hopper.reset(obs11);
  bool fell = false;
  for (int t = 0; t < 1000 && !fell; ++t) fell = hopper.step(zero3, obs11).terminated;
  CHECK(fell);

  MujocoEnv walker(MujocoTask::walker2d, 1);
  walker.reset(obs17);
  q = walker.qpos();
  v = walker.qvel();
  q[2] = 1.2;  // |angle| >= 1
  walker.set_state(q, v, obs17);
  CHECK(walker.step(zero6, obs17).terminated);
  MujocoOptions keep_going;
  keep_going.terminate_when_unhealthy = false;
  MujocoEnv tolerant(MujocoTask::walker2d, 1, keep_going);
  tolerant.reset(obs17);
  tolerant.set_state(q, v, obs17);
  CHECK_FALSE(tolerant.step(zero6, obs17).terminated);

  MujocoEnv ant(MujocoTask::ant, 1);
  ant.reset(obs27);
  q = ant.qpos();
  v = ant.qvel();
  q[2] = 1.3;  // torso above 1 m
  ant.set_state(q, v, obs27);
  CHECK(ant.step(zero8, obs27).terminated);

  MujocoEnv cheetah(MujocoTask::half_cheetah, 1);
  cheetah.reset(obs17);
  q = cheetah.qpos();
  v = cheetah.qvel();
  q[2] = 3.0;  // upside down
  cheetah.set_state(q, v, obs17);
  for (int t = 0; t < 100; ++t) CHECK_FALSE(cheetah.step(zero6, obs17).terminated);
}

TEST_CASE("MujocoEnv: truncation, determinism per seed, clamped controls and clear errors") {
  MujocoEnv a(MujocoTask::half_cheetah, 9), b(MujocoTask::half_cheetah, 9);
  Tensor oa = Tensor::zeros({17}), ob = Tensor::zeros({17});
  a.reset(oa);
  b.reset(ob);
  for (int t = 1; t <= 1000; ++t) {
    const std::vector<float> act = scripted_action(6, t);
    const StepResult ra = a.step(act, oa);
    const StepResult rb = b.step(act, ob);
    REQUIRE(ra.reward == rb.reward);
    REQUIRE(ra.truncated == (t == 1000));
    REQUIRE_FALSE(ra.terminated);
  }
  CHECK(a.qpos() == b.qpos());
  CHECK_THROWS_WITH_AS(a.step(scripted_action(6, 0), oa), doctest::Contains("call reset()"), Error);

  // Controls beyond [-1, 1] move the body as the bound does (MuJoCo clamps them); the control
  // cost is that of the action given, as in Gymnasium.
  MujocoEnv c(MujocoTask::hopper, 4), d(MujocoTask::hopper, 4);
  Tensor oc = Tensor::zeros({11}), od = Tensor::zeros({11});
  c.reset(oc);
  d.reset(od);
  const std::vector<float> big{5.0f, -3.0f, 1.0f}, bound{1.0f, -1.0f, 1.0f};
  c.step(big, oc);
  d.step(bound, od);
  CHECK(c.qpos() == d.qpos());
  CHECK(c.last_reward().control_cost == doctest::Approx(1e-3 * 35.0));

  MujocoEnv e(MujocoTask::ant, 1);
  Tensor oe = Tensor::zeros({27});
  e.reset(oe);
  CHECK_THROWS_WITH_AS(e.step(std::vector<float>(3, 0.0f), oe),
                       doctest::Contains("an action is 8 values, got 3"), Error);
  std::vector<float> nan(8, 0.0f);
  nan[2] = std::nanf("");
  CHECK_THROWS_WITH_AS(e.step(nan, oe), doctest::Contains("action value 2 is not finite"), Error);
  Tensor wrong = Tensor::zeros({26});
  CHECK_THROWS_WITH_AS(e.reset(wrong), doctest::Contains("ant"), Error);
  CHECK_THROWS_WITH_AS(e.set_state(std::vector<double>(3), std::vector<double>(14), oe),
                       doctest::Contains("ant has 15 positions and 14 velocities"), Error);
}

}  // namespace test_mujoco
