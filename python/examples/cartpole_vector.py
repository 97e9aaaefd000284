"""CartPole-v1 for N environments at once in numpy, with Gymnasium's VectorEnv API and its
"next-step" autoreset: the environment that python/examples/cartpole.py is, stepped as arrays,
for an actor whose environments are cheap (seedrl.vector.VectorEnvRows). Needs numpy.

    python -m seedrl.actor --path python/examples --vector-env cartpole_vector:make --num-envs 64

Each environment's step after the one that ended its episode ignores its action and returns the
first observation of a new episode (reward 0, neither terminated nor truncated).
"""

import math

import numpy as np


class Space:
    """The little of Gymnasium's spaces the actor reads."""

    def __init__(self, **attributes):
        self.__dict__.update(attributes)


class CartPoleVector:
    gravity, cart_mass, pole_mass, half_length, force, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
    theta_limit = 12 * 2 * math.pi / 360
    x_limit = 2.4
    max_steps = 500

    def __init__(self, num_envs, seed=None):
        self.num_envs = num_envs
        self.single_observation_space = Space(shape=(4,), dtype="float32")
        self.single_action_space = Space(n=2)
        self.rng = np.random.default_rng(seed)
        self.state = np.zeros((num_envs, 4))
        self.steps = np.zeros(num_envs, dtype=np.int64)
        self.ended = np.zeros(num_envs, dtype=bool)

    def reset(self, seed=None, options=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.state = self.rng.uniform(-0.05, 0.05, (self.num_envs, 4))
        self.steps[:] = 0
        self.ended[:] = False
        return self.state.astype(np.float32), {}

    def step(self, actions):
        x, x_dot, theta, theta_dot = self.state.T
        force = np.where(np.asarray(actions) == 1, self.force, -self.force)
        total_mass = self.cart_mass + self.pole_mass
        pole_mass_length = self.pole_mass * self.half_length
        cos, sin = np.cos(theta), np.sin(theta)
        temp = (force + pole_mass_length * theta_dot ** 2 * sin) / total_mass
        theta_acc = (self.gravity * sin - cos * temp) / (
            self.half_length * (4.0 / 3.0 - self.pole_mass * cos ** 2 / total_mass))
        x_acc = temp - pole_mass_length * theta_acc * cos / total_mass
        stepped = np.stack([x + self.tau * x_dot, x_dot + self.tau * x_acc,
                            theta + self.tau * theta_dot, theta_dot + self.tau * theta_acc], 1)
        self.steps += 1
        terminated = (np.abs(stepped[:, 0]) > self.x_limit) | (
            np.abs(stepped[:, 2]) > self.theta_limit)
        truncated = (self.steps >= self.max_steps) & ~terminated
        rewards = np.ones(self.num_envs)
        # Next-step autoreset: the environments that ended at the previous step start again.
        restart = self.ended
        if restart.any():
            stepped[restart] = self.rng.uniform(-0.05, 0.05, (int(restart.sum()), 4))
            self.steps[restart] = 0
            rewards[restart] = 0.0
            terminated[restart] = False
            truncated[restart] = False
        self.state = stepped
        self.ended = terminated | truncated
        return self.state.astype(np.float32), rewards, terminated, truncated, {}


def make(num_envs, seed=None):
    return CartPoleVector(num_envs, seed)
