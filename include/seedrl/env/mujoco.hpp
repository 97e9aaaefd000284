// MuJoCo locomotion: HalfCheetah, Hopper, Walker2d and Ant with the semantics of Gymnasium's v4
// tasks (observations, reward terms, healthy-state termination, reset noise, frame skip, the
// 1000-step time limit), simulated by MuJoCo 2.2 (Debian's libmujoco-dev) on seedrl's own model
// files (src/env/mujoco_models.cpp). Built as the optional library seedrl::mujoco when CMake
// finds MuJoCo; this header includes nothing from MuJoCo.
//
// clang-format off
// | task         | observation                    | actions     | frame skip (dt) | reset noise                     |
// |--------------|--------------------------------|-------------|-----------------|---------------------------------|
// | half_cheetah | 17: qpos[1:], qvel             | 6 in [-1,1] | 5 (0.05 s)      | qpos U(+-0.1), qvel 0.1 N(0,1)  |
// | hopper       | 11: qpos[1:], clip(qvel, +-10) | 3 in [-1,1] | 4 (0.008 s)     | U(+-0.005) both                 |
// | walker2d     | 17: qpos[1:], clip(qvel, +-10) | 6 in [-1,1] | 4 (0.008 s)     | U(+-0.005) both                 |
// | ant          | 27: qpos[2:], qvel             | 8 in [-1,1] | 5 (0.05 s)      | qpos U(+-0.1), qvel 0.1 N(0,1)  |
// clang-format on
//
// Reward per step: forward = (x after - x before) / dt (the torso's x: qpos[0], or for Ant the
// torso body's position), minus control cost = weight * sum(action^2) (0.1 HalfCheetah, 0.001
// Hopper and Walker2d, 0.5 Ant), plus a healthy reward of 1 (Hopper, Walker2d, Ant). Healthy:
// Hopper z > 0.7, |angle| < 0.2 and every state value past qpos[1] within (-100, 100); Walker2d
// 0.8 < z < 2 and |angle| < 1; Ant 0.2 <= z <= 1 and a finite state. An unhealthy state
// terminates the episode; HalfCheetah never terminates. Episodes are truncated at 1000 steps.
// (Gymnasium's frame skips are 5 for HalfCheetah and Ant, 4 for Hopper and Walker2d; "frames" in
// seedrl's counters are agent steps, as Gymnasium counts them.)
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/core/random.hpp"
#include "seedrl/env/environment.hpp"

namespace seedrl {

enum class MujocoTask { half_cheetah, hopper, walker2d, ant };

/// "halfcheetah" (or "half_cheetah"), "hopper", "walker2d", "ant"; throws naming the choices.
MujocoTask parse_mujoco_task(std::string_view name);
std::string_view mujoco_task_name(MujocoTask task);
/// The task's MJCF model text.
std::string_view mujoco_model_xml(MujocoTask task);

struct MujocoOptions {
  std::int32_t max_episode_steps = 1000;  ///< truncation (Gymnasium: 1000)
  bool terminate_when_unhealthy = true;   ///< Hopper, Walker2d, Ant
};

/// The reward of the last step, term by term.
struct MujocoRewardTerms {
  double x_velocity = 0.0;    ///< (x after - x before) / dt
  double forward = 0.0;       ///< forward_reward_weight (1) * x_velocity
  double control_cost = 0.0;  ///< ctrl_cost_weight * sum(action^2)
  double healthy = 0.0;       ///< healthy_reward (1), 0 for HalfCheetah
  double total() const { return forward - control_cost + healthy; }
};

class MujocoEnv {
 public:
  MujocoEnv(MujocoTask task, std::uint64_t seed = 0, const MujocoOptions& options = {});
  MujocoEnv(MujocoEnv&&) noexcept;
  MujocoEnv& operator=(MujocoEnv&&) noexcept;
  ~MujocoEnv();

  MujocoTask task() const;
  TensorSpec observation_spec() const;
  ActionSpec action_spec() const;

  void reset(const Tensor& observation);
  /// Applies the action (ActionSpec::dims() values; MuJoCo clamps them to the control range) for
  /// the task's frame skip. Throws naming the problem for another number of values or a
  /// non-finite one, and for a step after the episode ended.
  StepResult step(std::span<const float> action, const Tensor& observation);

  /// The simulation time between two agent steps (timestep x frame skip).
  double dt() const;
  /// Generalised positions and velocities (MuJoCo's qpos and qvel).
  std::vector<double> qpos() const;
  std::vector<double> qvel() const;
  /// Puts the simulation in a state (tests, demonstrations) and writes its observation.
  void set_state(std::span<const double> qpos, std::span<const double> qvel,
                 const Tensor& observation);
  /// Whether the current state is healthy (always true for HalfCheetah).
  bool healthy() const;
  const MujocoRewardTerms& last_reward() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

static_assert(Environment<MujocoEnv>);

}  // namespace seedrl
