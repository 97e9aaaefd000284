"""Environments with Gymnasium's API as the rows of one connection (`seedrl.actor`): row e is
environment e, every step of every environment sent together.

The API is duck-typed (gymnasium need not be installed): `reset(seed=) -> (obs, info)`,
`step(action) -> (obs, reward, terminated, truncated, info)`, `observation_space` (a Box: `shape`,
`dtype`) and `action_space` (Discrete: `n`; MultiDiscrete: `nvec`, the protocol's action
branches; Box: `low`, `high`). A declared field (an action mask) is read from `info` by its name.
"""

import inspect
import math

from seedrl import protocol as p


def dtype_name(dtype):
    """The protocol's element type ("f32", "u8" or "i32") for a space's or an array's dtype."""
    text = str(getattr(dtype, "name", dtype)).lower()
    if "float" in text or text == "f32":
        return "f32"
    if text in ("uint8", "u8", "bool"):
        return "u8"
    if "int" in text or text == "i32":
        return "i32"
    raise ValueError(f"observation dtype {dtype!r} is not float32, uint8 or an integer type")


def action_spec_of(space):
    """The action spec of a Discrete (`n`), MultiDiscrete (`nvec`) or Box (`low`, `high`)."""
    if hasattr(space, "nvec"):
        return p.ActionSpec.branched([int(n) for n in flat(space.nvec)])
    if hasattr(space, "n"):
        return p.ActionSpec.discrete(int(space.n))
    if hasattr(space, "low") and hasattr(space, "high"):
        return p.ActionSpec.box([float(x) for x in flat(space.low)],
                                [float(x) for x in flat(space.high)])
    raise ValueError(f"action space {space!r} is neither Discrete (n), MultiDiscrete (nvec) nor "
                     "Box (low, high)")


def observation_spec_of(space, dtype=None):
    """The observation a Box describes; `dtype` ("f32", "u8", "i32") sends it as that type
    instead of the space's (an int8 board as the f32 an MLP takes)."""
    shape = tuple(int(d) for d in getattr(space, "shape", ()) or ())
    return p.Tensor(dtype or dtype_name(getattr(space, "dtype", "float32")), shape)


def declared_fields(fields):
    """`fields` (name -> FieldSpec, a Tensor, or a size n for u8 [n]) as field specs."""
    declared = []
    for name, what in (fields or {}).items():
        if isinstance(what, p.FieldSpec):
            declared.append(what)
        elif isinstance(what, p.Tensor):
            declared.append(p.FieldSpec(name, what))
        else:
            declared.append(p.FieldSpec(name, p.Tensor("u8", (int(what),))))
    return tuple(declared)


def spec_of(env, fields=None, observation_dtype=None):
    """The step spec an environment's spaces describe (`fields`: see declared_fields)."""
    return p.StepSpec(observation_spec_of(env.observation_space, observation_dtype),
                      action_spec_of(env.action_space), declared_fields(fields))


def flat(values):
    """A nested sequence (or an array, or a number) as a flat list."""
    if hasattr(values, "tolist"):
        values = values.tolist()
    if isinstance(values, (int, float)):
        return [values]
    out = []
    for v in values:
        if isinstance(v, (int, float)):
            out.append(v)
        else:
            out.extend(flat(v))
    return out


def action_value(spec, values, e):
    """Row e's action as an environment takes it: an int, or an array (a list without numpy)."""
    d = spec.dims
    if spec.kind == 0:
        return values[e]
    row = list(values[e * d:(e + 1) * d])
    try:
        import numpy
        return numpy.asarray(row, dtype=numpy.float32 if spec.kind == 1 else numpy.int64)
    except ImportError:
        return row


def field_values(spec, source):
    """The bytes of each declared field of `spec`, read from the mapping `source` by name."""
    out = []
    for f in spec.fields:
        if f.name not in source:
            raise ValueError(f"the environment's info has no {f.name!r}, a declared field")
        value = source[f.name]
        if f.as_bits:  # a mask: its u8 values; any non-zero value is legal
            value = bytes(1 if v else 0 for v in flat(value))
            if len(value) != f.spec.numel:
                raise ValueError(f"{f.name}: {len(value)} values, {f.spec} holds {f.spec.numel}")
            out.append(value)
        else:
            out.append(p.tensor_bytes(value, f.spec, f.name))
    return out


def takes_argument(factory):
    """Whether `factory` takes a positional argument (a seed)."""
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD, q.VAR_POSITIONAL)
               for q in params)


class Rows:
    """What an actor sends at each step: `num_rows` rows of `spec`, their `observations` (bytes a
    row), `fields` (a list of bytes a row), `rewards` and `flags`; `start()` begins every episode
    afresh (a new connection), `advance(actions)` plays the learner's answer. `episodes`,
    `returns` (the last 100 episodes') say how it goes."""

    spec = None
    num_rows = 0

    def __init__(self):
        self.episodes = 0
        self.returns = []

    def end_episode(self, total):
        self.episodes += 1
        self.returns = (self.returns + [total])[-100:]

    def mean_return(self):
        return sum(self.returns) / len(self.returns) if self.returns else math.nan

    def summary(self):
        return {"episodes": self.episodes, "mean_return": round(self.mean_return(), 4)
                if self.returns else None}


class EnvRows(Rows):
    """`num_envs` environments from `make_env(seed)` (or `make_env()`), row e environment e."""

    def __init__(self, make_env, num_envs, seed, fields=None, observation_dtype=None):
        super().__init__()
        takes_seed = takes_argument(make_env)
        self.envs = [make_env(seed * 1009 + e) if takes_seed else make_env()
                     for e in range(num_envs)]
        self.spec = spec_of(self.envs[0], fields, observation_dtype)
        self.num_rows = num_envs
        self._episode_seed = seed

    def start(self):
        n = self.num_rows
        self.observations, self.fields = [None] * n, [None] * n
        self.rewards, self.flags, self._totals = [0.0] * n, [p.FIRST] * n, [0.0] * n
        for e in range(n):
            self._reset(e)

    def advance(self, actions):
        for e, env in enumerate(self.envs):
            if self.flags[e] & (p.TERMINATED | p.TRUNCATED):
                # The ending step's action is not executed: the episode starts again.
                self.end_episode(self._totals[e])
                self._reset(e)
                continue
            obs, reward, terminated, truncated, info = env.step(
                action_value(self.spec.actions, actions, e))
            reward = float(reward)
            self._totals[e] += reward
            self.observations[e] = p.tensor_bytes(obs, self.spec.observation, "observation")
            self.fields[e] = field_values(self.spec, info)
            self.rewards[e] = reward
            self.flags[e] = (p.TERMINATED if terminated else 0) | (
                p.TRUNCATED if truncated and not terminated else 0)

    def _reset(self, e):
        self._episode_seed += 1
        obs, info = self.envs[e].reset(seed=self._episode_seed)
        self.observations[e] = p.tensor_bytes(obs, self.spec.observation, "observation")
        self.fields[e] = field_values(self.spec, info)
        self.rewards[e], self.flags[e], self._totals[e] = 0.0, p.FIRST, 0.0


class VectorEnvRows(Rows):
    """One vector environment of Gymnasium's VectorEnv API (`num_envs`, `single_observation_space`,
    `single_action_space`, `reset(seed=) -> (obs[n, ...], infos)`, `step(actions) -> (obs,
    rewards, terminations, truncations, infos)`), whose every environment resets itself on the
    step after the one that ended it, ignoring that step's action (Gymnasium's "next-step"
    autoreset, its default): the protocol's own order, so the batch travels as the arrays the
    environment returns, with no loop over environments here. Declared fields come from `infos`
    (an array of num_envs rows each)."""

    def __init__(self, env, seed, fields=None, observation_dtype=None):
        super().__init__()
        self.env = env
        self.num_rows = int(env.num_envs)
        self.spec = p.StepSpec(observation_spec_of(env.single_observation_space, observation_dtype),
                               action_spec_of(env.single_action_space), declared_fields(fields))
        self._seed = seed
        import numpy  # a vector environment hands arrays
        self._np = numpy
        self._dtype = {"f32": "<f4", "u8": "u1", "i32": "<i4"}[self.spec.observation.dtype]

    def start(self):
        n = self.num_rows
        self._seed += 1
        obs, infos = self.env.reset(seed=self._seed)
        self._take(obs, infos)
        self.rewards, self.flags = [0.0] * n, bytes([p.FIRST]) * n
        self._totals = self._np.zeros(n)

    def advance(self, actions):
        np = self._np
        spec = self.spec.actions
        acts = np.asarray(actions, dtype=np.float32 if spec.kind == 1 else np.int64)
        if spec.dims > 1:
            acts = acts.reshape(self.num_rows, spec.dims)
        ended = np.frombuffer(bytes(self.flags), dtype=np.uint8) & (p.TERMINATED | p.TRUNCATED)
        obs, rewards, terminated, truncated, infos = self.env.step(acts)
        rewards = np.asarray(rewards, dtype=np.float64)
        restarted = ended != 0
        rewards = np.where(restarted, 0.0, rewards)
        for total in self._totals[restarted]:
            self.end_episode(float(total))
        self._totals = np.where(restarted, 0.0, self._totals + rewards)
        terminated = np.asarray(terminated, dtype=bool)
        truncated = np.asarray(truncated, dtype=bool) & ~terminated
        flags = np.where(restarted, p.FIRST,
                         terminated * p.TERMINATED + truncated * p.TRUNCATED).astype(np.uint8)
        self.rewards, self.flags = rewards.tolist(), flags.tobytes()
        self._take(obs, infos)

    def _take(self, obs, infos):
        # One row-major buffer of every observation; observations is a list of one item, so the
        # actor's join is no copy.
        self.observations = [self._np.ascontiguousarray(obs, dtype=self._dtype).tobytes()]
        values = []
        for f in self.spec.fields:
            if f.name not in infos:
                raise ValueError(f"the environment's infos has no {f.name!r}, a declared field")
            dtype = "u1" if f.as_bits else {"f32": "<f4", "u8": "u1", "i32": "<i4"}[f.spec.dtype]
            v = self._np.asarray(infos[f.name])
            values.append(((v != 0) if f.as_bits else v).astype(dtype).tobytes())
        self.fields = [values]
