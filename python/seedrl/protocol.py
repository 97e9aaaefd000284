"""The actor <-> inference wire protocol, version 4 (docs/protocol.md), in Python.

A second implementation of the contract whose reference codec is src/transport/protocol.cpp:
the same frames byte for byte (test/python/test_protocol.py checks every frame type against
golden bytes the C++ codec writes). Standard library only; nothing here does I/O.

    spec = StepSpec(Tensor("f32", (4,)), ActionSpec.discrete(2))
    frame = encode_hello(Hello("token", run_id=7, num_envs=8, evaluation=False, spec=spec))
    header = decode_header(frame[:HEADER_BYTES], MAX_HANDSHAKE_FRAME_BYTES)

Decoders raise ProtocolError with the code the C++ server would answer with (MALFORMED, ...)
and a message naming the problem.
"""

import math
import struct
from dataclasses import dataclass, field
from typing import List, Tuple

from seedrl.wire import *  # noqa: F401,F403  (the specs, the errors: part of this module's names)
from seedrl.wire import _Reader, _fail, _read_step_spec

VERSION = 4
MAGIC = b"SEEDRL01"
HEADER_BYTES = 12
MAX_TOKEN_BYTES = 1024
MAX_ENVS = 65535
MAX_MESSAGE_BYTES = 1024
MAX_HANDSHAKE_FRAME_BYTES = 4096
DEFAULT_MAX_FRAME_BYTES = 64 << 20

# Frame types.
HELLO, WELCOME, ERROR, STEP, ACTIONS, GOODBYE = 1, 2, 3, 4, 5, 6
FRAME_NAMES = {HELLO: "HELLO", WELCOME: "WELCOME", ERROR: "ERROR", STEP: "STEP",
               ACTIONS: "ACTIONS", GOODBYE: "GOODBYE"}

# Step flags (bit 0 first).
FIRST, TERMINATED, TRUNCATED, WAITING = 1, 2, 4, 8


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


_BIT_DIGITS = b"0" + b"1" * 255  # a value's byte to its bit as an ASCII digit


def pack_bits(values, width):
    """Rows of `width` values (non-zero: 1) into rows of ceil(width / 8) bytes, value j at bit
    j % 8 of byte j // 8. A row is one int: its digits, last value first, read in base 2 (an
    actor packs its masks every step: eight rows of 9 take 9 us, a loop over the bits 22 us)."""
    if isinstance(values, (bytes, bytearray, memoryview)):
        digits = bytes(values).translate(_BIT_DIGITS)
    else:
        digits = bytes(49 if v else 48 for v in values)
    if not width:
        if digits:
            raise ValueError(f"{len(digits)} values in rows of 0")
        return b""
    if len(digits) % width:
        raise ValueError(f"{len(digits)} values are not whole rows of {width}")
    row = (width + 7) // 8
    return b"".join(int(digits[e:e + width][::-1], 2).to_bytes(row, "little")
                    for e in range(0, len(digits), width))


def unpack_bits(bits, width, rows):
    row = (width + 7) // 8
    return bytes((bits[e * row + j // 8] >> (j % 8)) & 1 for e in range(rows)
                 for j in range(width))


def encode_step(sequence, layout, rewards, flags, observations, fields=()):
    """A whole STEP frame (a bytearray). `rewards`: num_envs floats; `flags`: num_envs step-flag bytes;
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
    return out  # a bytearray: the frame is built once, not copied again to be sent


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


__all__ = [name for name in dir() if not name.startswith("_") and name not in (
    "math", "struct", "dataclass", "field", "List", "Tuple")]
