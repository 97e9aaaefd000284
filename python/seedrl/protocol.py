"""The actor <-> inference wire protocol, version 4 (docs/protocol.md), in Python.

A second implementation of the contract whose reference codec is src/transport/protocol.cpp:
the same frames byte for byte (test/test_python_protocol.py checks every frame type against
golden bytes the C++ codec writes). Standard library only; nothing here does I/O.

    spec = StepSpec(Tensor("f32", (4,)), ActionSpec.discrete(2))
    frame = encode_hello(Hello("token", run_id=7, num_envs=8, evaluation=False, spec=spec))
    header = decode_header(frame[:HEADER_BYTES], MAX_HANDSHAKE_FRAME_BYTES)

Decoders raise ProtocolError with the code the C++ server would answer with (MALFORMED, ...)
and a message naming the problem.
"""

import math
import re
import struct
from dataclasses import dataclass, field
from typing import List, Tuple

VERSION = 4
MAGIC = b"SEEDRL01"
HEADER_BYTES = 12
MAX_TOKEN_BYTES = 1024
MAX_ENVS = 65535
MAX_MESSAGE_BYTES = 1024
MAX_ACTION_DIMS = 256
MAX_BRANCHES = 64
MAX_FIELDS = 8
MAX_FIELD_NAME_BYTES = 32
MAX_FIELD_RANK = 4
MAX_FIELD_BYTES = 1 << 20
MAX_OBSERVATION_RANK = 6
MAX_HANDSHAKE_FRAME_BYTES = 4096
DEFAULT_MAX_FRAME_BYTES = 64 << 20
ACTION_MASK_FIELD = "action_mask"

# Frame types.
HELLO, WELCOME, ERROR, STEP, ACTIONS, GOODBYE = 1, 2, 3, 4, 5, 6
FRAME_NAMES = {HELLO: "HELLO", WELCOME: "WELCOME", ERROR: "ERROR", STEP: "STEP",
               ACTIONS: "ACTIONS", GOODBYE: "GOODBYE"}

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

# Step flags (bit 0 first).
FIRST, TERMINATED, TRUNCATED, WAITING = 1, 2, 4, 8

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


# ---- frames ----

@dataclass
class Header:
    length: int
    version: int
    type: int
    sequence: int

    @property
    def payload_bytes(self):
        return self.length - 8

    @property
    def frame_bytes(self):
        return self.length + 4


def encode_header(frame_type, sequence, payload_bytes, version=VERSION):
    return struct.pack("<IBBHI", 8 + payload_bytes, version, frame_type, 0, sequence)


def decode_header(data, max_frame_bytes):
    """The header of the HEADER_BYTES at `data`, checked as a server checks it."""
    if len(data) < HEADER_BYTES:
        _fail(MALFORMED, "frame header: truncated")
    length, version, frame_type, reserved, sequence = struct.unpack("<IBBHI", data[:HEADER_BYTES])
    header = Header(length, version, frame_type, sequence)
    if length < 8:
        _fail(MALFORMED, f"frame header: length {length} is below 8")
    if length + 4 > max_frame_bytes:
        _fail(FRAME_TOO_LARGE, f"frame of {length + 4} bytes is above the limit of "
                               f"{max_frame_bytes}")
    if version != VERSION:
        error = ProtocolError(UNSUPPORTED_VERSION, f"protocol version {version} is not supported: "
                                                   f"this peer speaks version {VERSION}")
        error.header = header
        raise error
    if frame_type not in FRAME_NAMES or reserved:
        _fail(MALFORMED, f"frame header: type {frame_type}, reserved {reserved}")
    return header


@dataclass
class Hello:
    token: bytes
    run_id: int
    num_envs: int
    evaluation: bool
    spec: StepSpec


def encode_hello(hello, sequence=0):
    token = hello.token.encode() if isinstance(hello.token, str) else bytes(hello.token)
    if len(token) > MAX_TOKEN_BYTES:
        raise ValueError(f"the token has {len(token)} bytes, at most {MAX_TOKEN_BYTES}")
    if not 1 <= hello.num_envs <= MAX_ENVS:
        raise ValueError(f"num_envs must be in [1, {MAX_ENVS}], got {hello.num_envs}")
    payload = b"".join([MAGIC, struct.pack("<H", len(token)), token,
                        struct.pack("<QIB", hello.run_id, hello.num_envs,
                                    1 if hello.evaluation else 0),
                        encode_step_spec(hello.spec)])
    return encode_header(HELLO, sequence, len(payload)) + payload


def decode_hello(payload):
    r = _Reader(payload, "HELLO")
    if bytes(r.take(len(MAGIC), "magic")) != MAGIC:
        _fail(MALFORMED, "HELLO: not a seedrl actor (wrong magic)")
    (t,) = r.unpack("H", "token length")
    if t > MAX_TOKEN_BYTES:
        _fail(MALFORMED, f"HELLO: a token of {t} bytes (at most {MAX_TOKEN_BYTES})")
    token = bytes(r.take(t, "token"))
    run_id, num_envs, evaluation = r.unpack("QIB", "HELLO")
    if not 1 <= num_envs <= MAX_ENVS:
        _fail(MALFORMED, f"HELLO: num_envs {num_envs} is out of [1, {MAX_ENVS}]")
    if evaluation > 1:
        _fail(MALFORMED, f"HELLO: evaluation is {evaluation}, not 0 or 1")
    spec = _read_step_spec(r)
    r.done()
    return Hello(token, run_id, num_envs, evaluation == 1, spec)


@dataclass
class Welcome:
    spec: StepSpec
    first_slot: int
    max_frame_bytes: int


def encode_welcome(welcome, sequence=0):
    payload = encode_step_spec(welcome.spec) + struct.pack("<II", welcome.first_slot,
                                                           welcome.max_frame_bytes)
    return encode_header(WELCOME, sequence, len(payload)) + payload


def decode_welcome(payload):
    r = _Reader(payload, "WELCOME")
    spec = _read_step_spec(r)
    first_slot, max_frame_bytes = r.unpack("II", "WELCOME")
    r.done()
    return Welcome(spec, first_slot, max_frame_bytes)


def encode_error(code, message, sequence=0, version=VERSION):
    text = message.encode("utf-8")[:MAX_MESSAGE_BYTES]
    payload = struct.pack("<HH", code, len(text)) + text
    return encode_header(ERROR, sequence, len(payload), version) + payload


def decode_error(payload):
    """(code, message) of an ERROR payload."""
    r = _Reader(payload, "ERROR")
    code, m = r.unpack("HH", "ERROR")
    if m > MAX_MESSAGE_BYTES:
        _fail(MALFORMED, f"ERROR: a message of {m} bytes (at most {MAX_MESSAGE_BYTES})")
    message = bytes(r.take(m, "message")).decode("utf-8", "replace")
    r.done()
    return code, message


def encode_goodbye(sequence=0):
    return encode_header(GOODBYE, sequence, 0)


# ---- STEP ----

def _pad8(n):
    return (8 - n % 8) % 8


@dataclass
class StepLayout:
    """Where the parts of a STEP payload lie (offsets from the payload's start)."""
    num_envs: int
    observation_bytes: int
    rewards_offset: int
    flags_offset: int
    observations_offset: int
    field_bytes: List[int]
    field_offsets: List[int]
    field_bits: List[int]
    payload_bytes: int

    @property
    def frame_bytes(self):
        return HEADER_BYTES + self.payload_bytes


def step_layout(num_envs, spec):
    if not 1 <= num_envs <= MAX_ENVS:
        raise ValueError(f"num_envs must be in [1, {MAX_ENVS}], got {num_envs}")
    prefix = 4 + 5 * num_envs
    observations_offset = prefix + _pad8(prefix)
    end = observations_offset + num_envs * spec.observation.nbytes
    field_bytes, field_offsets, field_bits = [], [], []
    for f in spec.fields:
        offset = end + _pad8(end)
        field_bytes.append(f.wire_bytes)
        field_offsets.append(offset)
        field_bits.append(f.spec.numel if f.as_bits else 0)
        end = offset + num_envs * f.wire_bytes
    return StepLayout(num_envs, spec.observation.nbytes, 4, 4 + 4 * num_envs, observations_offset,
                      field_bytes, field_offsets, field_bits, end)


def pack_bits(values, width):
    """Rows of `width` values (non-zero: 1) into rows of ceil(width / 8) bytes, value j at bit
    j % 8 of byte j // 8."""
    values = bytes(1 if v else 0 for v in values)
    row = (width + 7) // 8
    out = bytearray(row * (len(values) // width if width else 0))
    for i, v in enumerate(values):
        if v:
            e, j = divmod(i, width)
            out[e * row + j // 8] |= 1 << (j % 8)
    return bytes(out)


def unpack_bits(bits, width, rows):
    row = (width + 7) // 8
    return bytes((bits[e * row + j // 8] >> (j % 8)) & 1 for e in range(rows)
                 for j in range(width))


def encode_step(sequence, layout, rewards, flags, observations, fields=()):
    """A whole STEP frame. `rewards`: num_envs floats; `flags`: num_envs step-flag bytes;
    `observations`: the num_envs observations' bytes (row-major, environment 0 first); `fields[k]`:
    declared field k's values for every environment as bytes (a legal-action mask as its u8
    values, 0 or not: it is packed here)."""
    n = layout.num_envs
    if len(rewards) != n or len(flags) != n:
        raise ValueError(f"a STEP of {n} environments needs {n} rewards and flags")
    observations = bytes(observations)
    if len(observations) != n * layout.observation_bytes:
        raise ValueError(f"observations: {len(observations)} bytes, expected "
                         f"{n * layout.observation_bytes}")
    if len(fields) != len(layout.field_bytes):
        raise ValueError(f"{len(fields)} fields given, the spec declares "
                         f"{len(layout.field_bytes)}")
    out = bytearray(encode_header(STEP, sequence, layout.payload_bytes))
    out += struct.pack(f"<I{n}f", n, *rewards) + bytes(flags)
    out += bytes(layout.observations_offset - (4 + 5 * n)) + observations
    for k, value in enumerate(fields):
        out += bytes(layout.field_offsets[k] - (len(out) - HEADER_BYTES))
        value = bytes(value)
        if layout.field_bits[k]:
            value = pack_bits(value, layout.field_bits[k])
        if len(value) != n * layout.field_bytes[k]:
            raise ValueError(f"field {k}: {len(value)} bytes on the wire, expected "
                             f"{n * layout.field_bytes[k]}")
        out += value
    return bytes(out)


@dataclass
class Step:
    rewards: Tuple[float, ...]
    flags: bytes
    observations: bytes
    fields: List[bytes] = field(default_factory=list)  # masks unpacked to u8 0 / 1


def decode_step(payload, layout):
    """A STEP payload checked as a server checks it; masks unpacked."""
    n = layout.num_envs
    if len(payload) != layout.payload_bytes:
        _fail(INVALID_REQUEST, f"STEP frame: {len(payload)} payload bytes, the handshake's "
                               f"{n} environments take {layout.payload_bytes}")
    (count,) = struct.unpack_from("<I", payload, 0)
    if count != n:
        _fail(INVALID_REQUEST, f"STEP frame: {count} environments, the handshake said {n}")
    rewards = struct.unpack_from(f"<{n}f", payload, 4)
    for e, reward in enumerate(rewards):
        if not math.isfinite(reward):
            _fail(MALFORMED, f"STEP frame: environment {e}'s reward is {reward}")
    flags = bytes(payload[4 + 4 * n:4 + 5 * n])
    for e, f in enumerate(flags):
        if f & ~0xF or (f & WAITING and f != WAITING):
            _fail(MALFORMED, f"STEP frame: environment {e}'s flags are {f:#x}")
    if any(payload[4 + 5 * n:layout.observations_offset]):
        _fail(MALFORMED, "STEP frame: nonzero padding before the observations")
    end = layout.observations_offset + n * layout.observation_bytes
    observations = bytes(payload[layout.observations_offset:end])
    fields = []
    for k, offset in enumerate(layout.field_offsets):
        if any(payload[end:offset]):
            _fail(MALFORMED, f"STEP frame: nonzero padding before declared field {k}")
        end = offset + n * layout.field_bytes[k]
        value = bytes(payload[offset:end])
        bits = layout.field_bits[k]
        if bits:
            row = layout.field_bytes[k]
            spare = 0xFF & ~((1 << (bits % 8)) - 1) if bits % 8 else 0
            for e in range(n):
                if value[e * row + row - 1] & spare:
                    _fail(MALFORMED, f"STEP frame: environment {e}'s declared field {k} (a "
                                     f"legal-action mask of {bits} actions, sent as bits) sets "
                                     "bits beyond its actions")
            value = unpack_bits(value, bits, n)
        fields.append(value)
    return Step(rewards, flags, observations, fields)


# ---- ACTIONS ----

def encode_actions(sequence, actions, spec):
    """An ACTIONS frame: discrete actions as ints (with branches, num_envs rows of K side by
    side), box actions as floats (num_envs rows of D)."""
    count = len(actions)
    if spec.kind == 1:
        payload = struct.pack(f"<I{count}f", count // spec.dims, *actions)
    else:
        payload = struct.pack(f"<I{count}i", count, *actions)
    return encode_header(ACTIONS, sequence, len(payload)) + payload


def decode_actions(payload, spec, num_envs):
    """The actions of an ACTIONS payload answering a STEP of `num_envs`, checked as RemoteClient
    checks them: exactly num_envs x dims values, each legal for its spec."""
    d = spec.dims
    expected = 4 + 4 * num_envs * d
    if len(payload) != expected:
        _fail(MALFORMED, f"ACTIONS frame: {len(payload)} payload bytes, expected {expected}")
    (count,) = struct.unpack_from("<I", payload, 0)
    if spec.kind == 1:
        if count != num_envs:
            _fail(MALFORMED, f"ACTIONS frame: {count} rows, expected {num_envs}")
        values = struct.unpack_from(f"<{num_envs * d}f", payload, 4)
        for i, v in enumerate(values):
            lo, hi = spec.low[i % d], spec.high[i % d]
            if not (math.isfinite(v) and lo <= v <= hi):
                _fail(MALFORMED, f"ACTIONS frame: environment {i // d}'s dimension {i % d} is "
                                 f"{v}, outside [{lo}, {hi}]")
        return values
    if count != num_envs * d:
        _fail(MALFORMED, f"ACTIONS frame: {count} actions, expected {num_envs * d}")
    values = struct.unpack_from(f"<{count}i", payload, 4)
    for i, v in enumerate(values):
        limit = spec.branches[i % d] if spec.kind == 2 else spec.num_actions
        if not 0 <= v < limit:
            _fail(MALFORMED, f"ACTIONS frame: action {v} of environment {i // d} is outside "
                             f"0 .. {limit - 1}")
    return values


def tensor_bytes(values, tensor, what="value"):
    """`values` (bytes, an object with tobytes(), or a flat or nested sequence of numbers) as
    the bytes of one value of `tensor`."""
    if isinstance(values, (bytes, bytearray, memoryview)):
        data = bytes(values)
    elif hasattr(values, "tobytes") and hasattr(values, "dtype"):
        import numpy  # only ever reached with a numpy array in hand
        data = numpy.ascontiguousarray(values, dtype=_NUMPY_DTYPES[tensor.dtype]).tobytes()
    else:
        flat = list(_flatten(values))
        if len(flat) != tensor.numel:
            raise ValueError(f"{what}: {len(flat)} values, {tensor} holds {tensor.numel}")
        data = struct.pack(f"<{len(flat)}{DTYPES[tensor.dtype][2]}", *flat)
    if len(data) != tensor.nbytes:
        raise ValueError(f"{what}: {len(data)} bytes, {tensor} takes {tensor.nbytes}")
    return data


_NUMPY_DTYPES = {"f32": "<f4", "u8": "u1", "i32": "<i4"}


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
    "math", "re", "struct", "dataclass", "field", "List", "Tuple")]
