"""Turret: action branches with a legal-action mask, in the standard library and Gymnasium's API
(a small cousin of seedrl's C++ Gunner). A turret on a rail of 3 positions shoots at a target
that appears at one of them; each step it moves (branch 0: left, stay, right) and pulls its
trigger or not (branch 1: hold, fire) together.

    distributed_learner --env custom --observation f32[7] --actions 3,2 --mask ...
    python -m seedrl.actor --path python/examples --env turret:make --num-envs 8 --mask 5

Observation f32[7]: the turret's position and the target's, one-hot each, and 1 when the gun is
loaded. The legal-action mask u8[5] (info["action_mask"]: the branches side by side) forbids
moving off the rail and firing an empty gun; an illegal action raises, so a learner that honours
the mask is the only one that trains it. A hit scores +1 (the target moves, the gun is empty for
one step), a miss -0.1 (the gun empties); an episode is 20 steps (truncated). Best play scores
10 an episode, a uniform legal policy about 1.6.
"""

import random


class Space:
    """The little of Gymnasium's spaces the actor reads."""

    def __init__(self, **attributes):
        self.__dict__.update(attributes)


class Turret:
    steps = 20

    def __init__(self, seed=None):
        self.observation_space = Space(shape=(7,), dtype="float32")
        self.action_space = Space(nvec=[3, 2])
        self.rng = random.Random(seed)
        self.reset(seed)

    def _observation(self):
        obs = [0.0] * 7
        obs[self.position] = 1.0
        obs[3 + self.target] = 1.0
        obs[6] = 1.0 if self.loaded else 0.0
        return obs

    def _info(self):
        mask = [1 if self.position > 0 else 0, 1, 1 if self.position < 2 else 0,
                1, 1 if self.loaded else 0]
        return {"action_mask": mask}

    def reset(self, seed=None, options=None):
        if seed is not None:
            self.rng.seed(seed)
        self.position, self.target = self.rng.randrange(3), self.rng.randrange(3)
        self.loaded, self.t = True, 0
        return self._observation(), self._info()

    def step(self, action):
        move, fire = int(action[0]), int(action[1])
        legal = self._info()["action_mask"]
        if not legal[move] or not legal[3 + fire]:
            raise ValueError(f"illegal action {move, fire} at position {self.position}, "
                             f"{'loaded' if self.loaded else 'empty'}")
        self.position += move - 1
        reward = 0.0
        if fire:
            if self.position == self.target:
                reward = 1.0
                self.target = self.rng.randrange(3)
            else:
                reward = -0.1
            self.loaded = False
        else:
            self.loaded = True
        self.t += 1
        return self._observation(), reward, False, self.t >= self.steps, self._info()


def make(seed=None):
    return Turret(seed)
