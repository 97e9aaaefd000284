"""CartPole-v1 in the standard library, with Gymnasium's API: an environment to train a seedrl
learner from Python (`distributed_learner --env cartpole` serves its spec: f32 [4], 2 actions).

    python -m seedrl.actor --path python/examples --env cartpole:make --num-envs 8

The dynamics are Gymnasium's CartPole-v1 (Barto, Sutton and Anderson's cart-pole, Euler steps of
20 ms): reward 1 a step, terminated when the pole leans past 12 degrees or the cart leaves
[-2.4, 2.4], truncated at 500 steps.
"""

import math
import random


class Space:
    """The little of Gymnasium's spaces the actor reads."""

    def __init__(self, **attributes):
        self.__dict__.update(attributes)


class CartPole:
    gravity, cart_mass, pole_mass, half_length, force, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
    theta_limit = 12 * 2 * math.pi / 360
    x_limit = 2.4
    max_steps = 500

    def __init__(self, seed=None):
        self.observation_space = Space(shape=(4,), dtype="float32")
        self.action_space = Space(n=2)
        self.rng = random.Random(seed)
        self.state = [0.0] * 4
        self.steps = 0

    def reset(self, seed=None, options=None):
        if seed is not None:
            self.rng.seed(seed)
        self.state = [self.rng.uniform(-0.05, 0.05) for _ in range(4)]
        self.steps = 0
        return list(self.state), {}

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = self.force if int(action) == 1 else -self.force
        cos, sin = math.cos(theta), math.sin(theta)
        total = self.cart_mass + self.pole_mass
        pole_moment = self.pole_mass * self.half_length
        temp = (force + pole_moment * theta_dot * theta_dot * sin) / total
        theta_acc = (self.gravity * sin - cos * temp) / (
            self.half_length * (4.0 / 3.0 - self.pole_mass * cos * cos / total))
        x_acc = temp - pole_moment * theta_acc * cos / total
        x += self.tau * x_dot
        x_dot += self.tau * x_acc
        theta += self.tau * theta_dot
        theta_dot += self.tau * theta_acc
        self.state = [x, x_dot, theta, theta_dot]
        self.steps += 1
        terminated = abs(x) > self.x_limit or abs(theta) > self.theta_limit
        truncated = not terminated and self.steps >= self.max_steps
        return list(self.state), 1.0, terminated, truncated, {}


def make(seed=None):
    return CartPole(seed)
