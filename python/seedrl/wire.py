"""The protocol's ground below its frames (docs/protocol.md): the errors a decoder raises, the
step spec (observation, actions, declared fields) and its bytes, and one value's bytes. Standard
library only; `seedrl.protocol` builds the frames on it and re-exports every name here.
"""

import functools
import math
import re
import struct
from dataclasses import dataclass
from typing import Tuple

MAX_ACTION_DIMS = 256
MAX_BRANCHES = 64
MAX_FIELDS = 8
MAX_FIELD_NAME_BYTES = 32
MAX_FIELD_RANK = 4
MAX_FIELD_BYTES = 1 << 20
MAX_OBSERVATION_RANK = 6
ACTION_MASK_FIELD = "action_mask"

# Error codes (docs/protocol.md, ERROR).
MALFORMED, UNSUPPORTED_VERSION, UNAUTHORIZED, INVALID_REQUEST = 1, 2, 3, 4
UNAVAILABLE, SHUTTING_DOWN, IDLE_TIMEOUT, INTERNAL, FINISHED, FRAME_TOO_LARGE = 5, 6, 7, 8, 9, 10
ERROR_NAMES = {MALFORMED: "malformed", UNSUPPORTED_VERSION: "unsupported_version",
               UNAUTHORIZED: "unauthorized", INVALID_REQUEST: "invalid_request",
               UNAVAILABLE: "unavailable", SHUTTING_DOWN: "shutting_down",
               IDLE_TIMEOUT: "idle_timeout", INTERNAL: "internal", FINISHED: "finished",
               FRAME_TOO_LARGE: "frame_too_large"}
# What an actor does on each code: retry the connection, stop, or give up.
RETRY_CODES = frozenset({UNAVAILABLE, SHUTTING_DOWN, IDLE_TIMEOUT, INTERNAL})

DTYPES = {"f32": (0, 4, "f"), "u8": (1, 1, "B"), "i32": (2, 4, "i")}
DTYPE_BY_CODE = {code: name for name, (code, _, _) in DTYPES.items()}
RESERVED_FIELD_NAMES = frozenset({"observation", "observations", "reward", "rewards", "flags",
                                  "terminated", "truncated", "action", "actions"})
_FIELD_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")


class ProtocolError(Exception):
    """A frame that does not decode: `code` is the ERROR code a server answers with."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def _fail(code, message):
    raise ProtocolError(code, message)


# ---- specs ----

@dataclass(frozen=True)
class Tensor:
    """An element type ("f32", "u8" or "i32") and a shape (outermost first)."""
    dtype: str
    shape: Tuple[int, ...]

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of f32, u8, i32, got {self.dtype!r}")

    @property
    def numel(self):
        return math.prod(self.shape)

    @property
    def nbytes(self):
        return self.numel * DTYPES[self.dtype][1]

    def __str__(self):
        return f"{self.dtype}[{', '.join(str(d) for d in self.shape)}]"


@dataclass(frozen=True)
class ActionSpec:
    """Discrete actions (kind 0: `num_actions`), a box (kind 1: `low` and `high`, one bound a
    dimension) or K >= 2 discrete branches (kind 2: `branches`, their sizes)."""
    kind: int
    num_actions: int = 0
    low: Tuple[float, ...] = ()
    high: Tuple[float, ...] = ()
    branches: Tuple[int, ...] = ()

    @staticmethod
    def discrete(n):
        return ActionSpec(0, num_actions=int(n))

    @staticmethod
    def box(low, high):
        return ActionSpec(1, low=tuple(float(x) for x in low), high=tuple(float(x) for x in high))

    @staticmethod
    def branched(sizes):
        sizes = tuple(int(s) for s in sizes)
        return ActionSpec(2, num_actions=sum(sizes), branches=sizes)

    @property
    def dims(self):
        """Values an environment's action has on the wire: 1, D or K."""
        return len(self.low) if self.kind == 1 else len(self.branches) if self.kind == 2 else 1

    def __str__(self):
        if self.kind == 0:
            return f"{self.num_actions} discrete actions"
        if self.kind == 1:
            return f"a box of {len(self.low)} dimensions"
        return f"branches {' + '.join(str(s) for s in self.branches)}"


@dataclass(frozen=True)
class FieldSpec:
    """A field the environments declare beside the observation (an action mask, say)."""
    name: str
    spec: Tensor

    @property
    def as_bits(self):
        """A legal-action mask travels as bits (docs/protocol.md, masks as bits)."""
        return self.name == ACTION_MASK_FIELD and self.spec.dtype == "u8"

    @property
    def wire_bytes(self):
        return (self.spec.numel + 7) // 8 if self.as_bits else self.spec.nbytes


@dataclass(frozen=True)
class StepSpec:
    observation: Tensor
    actions: ActionSpec
    fields: Tuple[FieldSpec, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "fields", tuple(self.fields))


def _f32(x):
    """`x` as the wire carries it: rounded to binary32."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def encode_tensor_spec(t, max_rank):
    if len(t.shape) > max_rank:
        raise ValueError(f"rank {len(t.shape)} is above {max_rank}")
    if any(d < 1 or d > 0xFFFFFFFF for d in t.shape):
        raise ValueError(f"every dimension must be in [1, 2^32), got {t}")
    return struct.pack("<BB", DTYPES[t.dtype][0], len(t.shape)) + b"".join(
        struct.pack("<I", d) for d in t.shape)


def encode_action_spec(a):
    if a.kind == 0:
        if not 1 <= a.num_actions <= 0x7FFFFFFF:
            raise ValueError(f"num_actions must be in [1, 2^31), got {a.num_actions}")
        return struct.pack("<BI", 0, a.num_actions)
    if a.kind == 1:
        d = len(a.low)
        if not 1 <= d <= MAX_ACTION_DIMS or len(a.high) != d:
            raise ValueError(f"a box has 1 to {MAX_ACTION_DIMS} dimensions, low and high alike")
        for i, (lo, hi) in enumerate(zip(a.low, a.high)):
            lo32, hi32 = _f32(lo), _f32(hi)
            if not (math.isfinite(lo32) and math.isfinite(hi32) and lo32 < hi32):
                raise ValueError(f"box dimension {i}: bounds must be finite with low < high, got "
                                 f"[{lo}, {hi}]")
        return struct.pack(f"<BI{d}f{d}f", 1, d, *a.low, *a.high)
    if a.kind == 2:
        k = len(a.branches)
        if not 2 <= k <= MAX_BRANCHES or any(s < 1 for s in a.branches) or \
                sum(a.branches) > 0x7FFFFFFF:
            raise ValueError(f"branches: 2 to {MAX_BRANCHES} of at least 1 action each, got "
                             f"{a.branches}")
        return struct.pack(f"<BI{k}I", 2, k, *a.branches)
    raise ValueError(f"action kind must be 0, 1 or 2, got {a.kind}")


def encode_step_spec(spec):
    if len(spec.fields) > MAX_FIELDS:
        raise ValueError(f"at most {MAX_FIELDS} declared fields, got {len(spec.fields)}")
    out = [encode_tensor_spec(spec.observation, MAX_OBSERVATION_RANK),
           encode_action_spec(spec.actions), struct.pack("<B", len(spec.fields))]
    for f in spec.fields:
        name = f.name.encode("ascii")
        out += [struct.pack("<B", len(name)), name, encode_tensor_spec(f.spec, MAX_FIELD_RANK)]
    return b"".join(out)


class _Reader:
    """Reads a payload from the front; every shortfall is MALFORMED, naming `what`."""

    def __init__(self, data, what):
        self.data, self.pos, self.what = memoryview(data), 0, what

    def take(self, n, part):
        if self.pos + n > len(self.data):
            _fail(MALFORMED, f"{self.what}: truncated in its {part}")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt, part):
        size = struct.calcsize("<" + fmt)
        return struct.unpack("<" + fmt, self.take(size, part))

    def left(self):
        return len(self.data) - self.pos

    def done(self):
        if self.left():
            _fail(MALFORMED, f"{self.what}: {self.left()} bytes after its end")


def _read_tensor(r, max_rank, part):
    dtype, rank = r.unpack("BB", part)
    if dtype not in DTYPE_BY_CODE:
        _fail(MALFORMED, f"{r.what}: {part} dtype {dtype} is not 0 (f32), 1 (u8) or 2 (i32)")
    if rank > max_rank:
        _fail(MALFORMED, f"{r.what}: {part} rank {rank} is above {max_rank}")
    dims = r.unpack(f"{rank}I", part) if rank else ()
    if any(d < 1 for d in dims):
        _fail(MALFORMED, f"{r.what}: {part} has a dimension of 0")
    return Tensor(DTYPE_BY_CODE[dtype], dims)


def _read_action_spec(r):
    (kind,) = r.unpack("B", "action kind")
    if kind == 0:
        (n,) = r.unpack("I", "action spec")
        if not 1 <= n <= 0x7FFFFFFF:
            _fail(MALFORMED, f"{r.what}: num_actions {n} is out of [1, 2^31)")
        return ActionSpec.discrete(n)
    if kind == 1:
        (d,) = r.unpack("I", "action spec")
        if not 1 <= d <= MAX_ACTION_DIMS:
            _fail(MALFORMED, f"{r.what}: a box of {d} dimensions (1 to {MAX_ACTION_DIMS})")
        values = r.unpack(f"{2 * d}f", "box bounds")
        low, high = values[:d], values[d:]
        for i, (lo, hi) in enumerate(zip(low, high)):
            if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
                _fail(MALFORMED, f"{r.what}: box dimension {i} has bounds [{lo}, {hi}]")
        return ActionSpec(1, low=tuple(low), high=tuple(high))
    if kind == 2:
        (k,) = r.unpack("I", "action spec")
        if not 2 <= k <= MAX_BRANCHES:
            _fail(MALFORMED, f"{r.what}: {k} action branches (2 to {MAX_BRANCHES})")
        sizes = r.unpack(f"{k}I", "branch sizes")
        for i, s in enumerate(sizes):
            if s < 1:
                _fail(MALFORMED, f"{r.what}: action branch {i} has no actions")
        if sum(sizes) > 0x7FFFFFFF:
            _fail(MALFORMED, f"{r.what}: the branches' actions sum to {sum(sizes)}")
        return ActionSpec.branched(sizes)
    _fail(MALFORMED, f"{r.what}: action kind {kind} is not 0, 1 or 2")


def _read_step_spec(r):
    observation = _read_tensor(r, MAX_OBSERVATION_RANK, "observation spec")
    actions = _read_action_spec(r)
    (count,) = r.unpack("B", "field count")
    if count > MAX_FIELDS:
        _fail(MALFORMED, f"{r.what}: {count} declared fields (at most {MAX_FIELDS})")
    fields = []
    for k in range(count):
        (m,) = r.unpack("B", f"field {k}'s name length")
        name = bytes(r.take(m, f"field {k}'s name")).decode("ascii", "replace")
        if not 1 <= m <= MAX_FIELD_NAME_BYTES or not _FIELD_NAME.match(name) or \
                name in RESERVED_FIELD_NAMES or any(f.name == name for f in fields):
            _fail(MALFORMED, f"{r.what}: field {k}'s name {name!r} is not allowed")
        spec = _read_tensor(r, MAX_FIELD_RANK, f"field {name}")
        if spec.nbytes > MAX_FIELD_BYTES:
            _fail(MALFORMED, f"{r.what}: field {name} holds {spec.nbytes} bytes a value")
        fields.append(FieldSpec(name, spec))
    return StepSpec(observation, actions, tuple(fields))


# ---- values ----

def tensor_bytes(values, tensor, what="value"):
    """`values` (bytes, an object with tobytes(), or a flat or nested sequence of numbers) as
    the bytes of one value of `tensor`."""
    if isinstance(values, (bytes, bytearray, memoryview)):
        data = bytes(values)
    elif hasattr(values, "tobytes") and hasattr(values, "dtype"):
        import numpy  # only ever reached with a numpy array in hand
        data = numpy.ascontiguousarray(values, dtype=_NUMPY_DTYPES[tensor.dtype]).tobytes()
    else:
        packer = _packer(tensor.dtype, tensor.numel)
        try:  # a flat sequence of numbers: packed as it is
            return packer.pack(*values)
        except (struct.error, TypeError):
            pass
        flat = list(_flatten(values))
        if len(flat) != tensor.numel:
            raise ValueError(f"{what}: {len(flat)} values, {tensor} holds {tensor.numel}")
        data = packer.pack(*flat)
    if len(data) != tensor.nbytes:
        raise ValueError(f"{what}: {len(data)} bytes, {tensor} takes {tensor.nbytes}")
    return data


_NUMPY_DTYPES = {"f32": "<f4", "u8": "u1", "i32": "<i4"}


@functools.lru_cache(maxsize=64)
def _packer(dtype, numel):
    return struct.Struct(f"<{numel}{DTYPES[dtype][2]}")


def _flatten(values):
    if isinstance(values, (int, float, bool)):
        yield values
        return
    for v in values:
        if isinstance(v, (int, float, bool)):
            yield v
        else:
            yield from _flatten(v)


def spec_differences(ours, theirs):
    """What differs between two step specs, for a message ('' when they are equal)."""
    parts = []
    if ours.observation != theirs.observation:
        parts.append(f"observations {ours.observation} here, {theirs.observation} there")
    if ours.actions != theirs.actions:
        parts.append(f"actions {ours.actions} here, {theirs.actions} there")
    if ours.fields != theirs.fields:
        def names(spec):
            return ", ".join(f"{f.name} {f.spec}" for f in spec.fields) or "none"
        parts.append(f"fields {names(ours)} here, {names(theirs)} there")
    return "; ".join(parts)


__all__ = [name for name in dir() if not name.startswith("_") and name not in (
    "functools", "math", "re", "struct", "dataclass", "Tuple")]
