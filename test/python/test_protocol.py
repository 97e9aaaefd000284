#!/usr/bin/env python3
"""The Python codec (python/seedrl/protocol.py) against the reference codec's bytes.

    test_protocol.py PATH/protocol_golden

protocol_golden (test/python/protocol_golden.cpp) writes frames of every type with the C++ codec;
each case here builds the frame of the same name with the Python encoders and must give the same
bytes, and the Python decoders must read the golden frame back to the values it was made of; the
hex examples of docs/protocol.md must be those bytes too. Then what the decoders refuse, with the code a server answers with. Standard library only.
"""

import json
import math
import os
import random
import re
import struct
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from seedrl import protocol as p  # noqa: E402

GOLDEN_PROGRAM = None
PROTOCOL_MD = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "protocol.md")

CARTPOLE = p.StepSpec(p.Tensor("f32", (4,)), p.ActionSpec.discrete(2))
PENDULUM = p.StepSpec(p.Tensor("f32", (3,)), p.ActionSpec.box([-2.0], [2.0]))
GUNNER = p.StepSpec(p.Tensor("f32", (16,)), p.ActionSpec.branched([3, 2]),
                    (p.FieldSpec("action_mask", p.Tensor("u8", (5,))),))
PIXELS = p.StepSpec(p.Tensor("u8", (2, 3, 3)), p.ActionSpec.discrete(10),
                    (p.FieldSpec("action_mask", p.Tensor("u8", (10,))),
                     p.FieldSpec("goal", p.Tensor("i32", (2,)))))

GUNNER_OBS = [i * 0.5 - 3.0 for i in range(3 * 16)]
GUNNER_MASK = bytes([1, 1, 0, 1, 0, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1])
PIXELS_OBS = bytes((i * 7) & 0xFF for i in range(2 * 18))
PIXELS_MASK = bytes(1 if i % 3 == 0 else 0 for i in range(20))
PIXELS_GOAL = struct.pack("<4i", 3, -4, 100000, 0)


def python_frames():
    """The Python encoders' frames, by the names protocol_golden gives them."""
    f32 = lambda values: struct.pack(f"<{len(values)}f", *values)  # noqa: E731
    return {
        "hello_cartpole": p.encode_hello(p.Hello(b"s3cret", 0x0102030405060708, 2, False,
                                                 CARTPOLE), 1),
        "hello_pendulum_evaluation": p.encode_hello(p.Hello(b"", 42, 1, True, PENDULUM), 0),
        "hello_gunner": p.encode_hello(p.Hello(b"tok", 9, 3, False, GUNNER), 5),
        "hello_pixels_fields": p.encode_hello(p.Hello(b"tok", 10, 2, False, PIXELS), 6),
        "welcome_cartpole": p.encode_welcome(p.Welcome(CARTPOLE, 16, 1 << 20), 1),
        "welcome_gunner": p.encode_welcome(p.Welcome(GUNNER, 0, p.DEFAULT_MAX_FRAME_BYTES), 5),
        "error_unauthorized": p.encode_error(p.UNAUTHORIZED, "wrong token", 1),
        "error_finished": p.encode_error(p.FINISHED, "training is over", 0),
        "step_cartpole": p.encode_step(7, p.step_layout(2, CARTPOLE), [0.0, 1.0], [1, 2],
                                       f32([0.5, -0.25, 1.0, 2.0, -1.0, 0.125, 3.0, -4.0])),
        "step_gunner": p.encode_step(8, p.step_layout(3, GUNNER), [0.5, -1.0, 2.0], [0, 4, 8],
                                     f32(GUNNER_OBS), [GUNNER_MASK]),
        "step_pixels_fields": p.encode_step(9, p.step_layout(2, PIXELS), [0.0, 0.0], [1, 0],
                                            PIXELS_OBS, [PIXELS_MASK, PIXELS_GOAL]),
        "actions_cartpole": p.encode_actions(7, [1, 0], CARTPOLE.actions),
        "actions_gunner": p.encode_actions(8, [2, 1, 0, 0, 1, 1], GUNNER.actions),
        "actions_pendulum": p.encode_actions(3, [-1.5, 2.0], PENDULUM.actions),
        "goodbye": p.encode_goodbye(11),
    }


def golden_frames():
    out = subprocess.run([GOLDEN_PROGRAM], check=True, capture_output=True, text=True).stdout
    frames = {}
    for line in out.splitlines():
        record = json.loads(line)
        frames[record["name"]] = bytes.fromhex(record["hex"])
    return frames


class Golden(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.golden = golden_frames()

    def payload(self, name, frame_type):
        frame = self.golden[name]
        header = p.decode_header(frame[:p.HEADER_BYTES], p.DEFAULT_MAX_FRAME_BYTES)
        self.assertEqual(header.type, frame_type, name)
        self.assertEqual(header.frame_bytes, len(frame), name)
        return header, frame[p.HEADER_BYTES:]

    def test_every_frame_encodes_to_the_reference_bytes(self):
        ours = python_frames()
        self.assertEqual(sorted(ours), sorted(self.golden), "the same cases on both sides")
        for name, frame in ours.items():
            with self.subTest(name=name):
                self.assertEqual(frame.hex(), self.golden[name].hex())

    def test_the_examples_of_protocol_md_are_the_reference_bytes(self):
        # docs/protocol.md, "Examples, byte for byte": a block after <!-- golden:NAME --> is
        # the frame NAME, a field a line, '#' starting a comment.
        with open(PROTOCOL_MD, encoding="utf-8") as f:
            text = f.read()
        blocks = re.findall(r"<!-- golden:(\w+) -->\n```\n(.*?)```", text, re.S)
        self.assertGreaterEqual(len(blocks), 8)
        for name, body in blocks:
            with self.subTest(frame=name):
                hex_text = "".join(line.split("#")[0] for line in body.splitlines())
                self.assertEqual(bytes.fromhex(hex_text), self.golden[name])

    def test_handshakes_decode_to_their_values(self):
        header, payload = self.payload("hello_cartpole", p.HELLO)
        hello = p.decode_hello(payload)
        self.assertEqual((header.sequence, hello.token, hello.run_id, hello.num_envs),
                         (1, b"s3cret", 0x0102030405060708, 2))
        self.assertFalse(hello.evaluation)
        self.assertEqual(hello.spec, CARTPOLE)
        self.assertTrue(p.decode_hello(self.payload("hello_pendulum_evaluation", p.HELLO)[1])
                        .evaluation)
        self.assertEqual(p.decode_hello(self.payload("hello_gunner", p.HELLO)[1]).spec, GUNNER)
        self.assertEqual(p.decode_hello(self.payload("hello_pixels_fields", p.HELLO)[1]).spec,
                         PIXELS)
        welcome = p.decode_welcome(self.payload("welcome_gunner", p.WELCOME)[1])
        self.assertEqual((welcome.spec, welcome.first_slot, welcome.max_frame_bytes),
                         (GUNNER, 0, p.DEFAULT_MAX_FRAME_BYTES))
        code, message = p.decode_error(self.payload("error_unauthorized", p.ERROR)[1])
        self.assertEqual((code, message), (p.UNAUTHORIZED, "wrong token"))
        self.assertEqual(self.payload("goodbye", p.GOODBYE)[0].sequence, 11)

    def test_steps_decode_with_their_masks_unpacked(self):
        step = p.decode_step(self.payload("step_gunner", p.STEP)[1], p.step_layout(3, GUNNER))
        self.assertEqual(step.rewards, (0.5, -1.0, 2.0))
        self.assertEqual(step.flags, bytes([0, 4, 8]))
        self.assertEqual(struct.unpack("<48f", step.observations), tuple(GUNNER_OBS))
        self.assertEqual(step.fields, [GUNNER_MASK])
        step = p.decode_step(self.payload("step_pixels_fields", p.STEP)[1],
                             p.step_layout(2, PIXELS))
        self.assertEqual(step.observations, PIXELS_OBS)
        self.assertEqual(step.fields, [PIXELS_MASK, PIXELS_GOAL])

    def test_actions_decode_for_each_kind(self):
        self.assertEqual(p.decode_actions(self.payload("actions_cartpole", p.ACTIONS)[1],
                                          CARTPOLE.actions, 2), (1, 0))
        self.assertEqual(p.decode_actions(self.payload("actions_gunner", p.ACTIONS)[1],
                                          GUNNER.actions, 3), (2, 1, 0, 0, 1, 1))
        self.assertEqual(p.decode_actions(self.payload("actions_pendulum", p.ACTIONS)[1],
                                          PENDULUM.actions, 2), (-1.5, 2.0))


class Refusals(unittest.TestCase):
    """What the decoders refuse, with the code a server would answer."""

    def code_of(self, call, *args):
        with self.assertRaises(p.ProtocolError) as raised:
            call(*args)
        return raised.exception.code

    def test_headers(self):
        hello = p.encode_hello(p.Hello(b"t", 1, 1, False, CARTPOLE))
        self.assertEqual(self.code_of(p.decode_header, hello[:12], 16), p.FRAME_TOO_LARGE)
        old = bytearray(hello[:12])
        old[4] = 3
        self.assertEqual(self.code_of(p.decode_header, bytes(old), 4096), p.UNSUPPORTED_VERSION)
        odd = bytearray(hello[:12])
        odd[6] = 1
        self.assertEqual(self.code_of(p.decode_header, bytes(odd), 4096), p.MALFORMED)
        self.assertEqual(self.code_of(p.decode_header, struct.pack("<IBBHI", 7, 4, 1, 0, 0),
                                      4096), p.MALFORMED)

    def test_handshakes(self):
        payload = p.encode_hello(p.Hello(b"t", 1, 1, False, CARTPOLE))[12:]
        self.assertEqual(self.code_of(p.decode_hello, b"SEEDRL02" + payload[8:]), p.MALFORMED)
        self.assertEqual(self.code_of(p.decode_hello, payload + b"\0"), p.MALFORMED)
        self.assertEqual(self.code_of(p.decode_hello, payload[:-1]), p.MALFORMED)
        bad_kind = bytearray(payload)
        bad_kind[8 + 2 + 1 + 8 + 4 + 1 + 2 + 4] = 3  # the action kind after the observation spec
        self.assertEqual(self.code_of(p.decode_hello, bytes(bad_kind)), p.MALFORMED)

    def test_steps(self):
        layout = p.step_layout(3, GUNNER)
        step = p.encode_step(1, layout, [0.0] * 3, [1, 0, 0], bytes(3 * 64), [GUNNER_MASK])[12:]
        self.assertEqual(self.code_of(p.decode_step, step[:-1], layout), p.INVALID_REQUEST)
        beyond = bytearray(step)
        beyond[layout.field_offsets[0] + 1] |= 0x20  # environment 1, bit 5 of a 5-action mask
        self.assertEqual(self.code_of(p.decode_step, bytes(beyond), layout), p.MALFORMED)
        padded = bytearray(step)
        padded[4 + 5 * 3] = 1  # the padding before the observations
        self.assertEqual(self.code_of(p.decode_step, bytes(padded), layout), p.MALFORMED)
        nan = bytearray(step)
        nan[4:8] = struct.pack("<f", math.nan)
        self.assertEqual(self.code_of(p.decode_step, bytes(nan), layout), p.MALFORMED)
        waiting = bytearray(step)
        waiting[4 + 4 * 3] = p.WAITING | p.FIRST  # waiting goes alone
        self.assertEqual(self.code_of(p.decode_step, bytes(waiting), layout), p.MALFORMED)

    def test_actions(self):
        frame = p.encode_actions(1, [2, 0], CARTPOLE.actions)[12:]
        self.assertEqual(self.code_of(p.decode_actions, frame, CARTPOLE.actions, 2), p.MALFORMED)
        box = p.encode_actions(1, [2.5], PENDULUM.actions)[12:]
        self.assertEqual(self.code_of(p.decode_actions, box, PENDULUM.actions, 1), p.MALFORMED)
        branch = p.encode_actions(1, [0, 2], GUNNER.actions)[12:]  # branch 1 has 2 actions
        self.assertEqual(self.code_of(p.decode_actions, branch, GUNNER.actions, 1), p.MALFORMED)

    def test_bits(self):
        self.assertEqual(p.pack_bits([1, 0, 1, 1, 0, 0, 0, 0, 1, 1], 10), bytes([0x0D, 0x03]))
        self.assertEqual(p.unpack_bits(bytes([0x0D, 0x03]), 10, 1),
                         bytes([1, 0, 1, 1, 0, 0, 0, 0, 1, 1]))

    def test_bits_against_a_loop(self):
        """pack_bits against the rule bit by bit, for widths across byte boundaries, values that
        are any non-zero byte, and bytes or a list; a partial row is an error."""
        rng = random.Random(5)
        for width in range(1, 26):
            for rows in range(4):
                values = bytes(rng.choice([0, 0, 1, 2, 255]) for _ in range(width * rows))
                row = (width + 7) // 8
                expected = bytearray(row * rows)
                for i, v in enumerate(values):
                    if v:
                        expected[i // width * row + i % width // 8] |= 1 << (i % width % 8)
                self.assertEqual(p.pack_bits(values, width), bytes(expected), (width, rows))
                self.assertEqual(p.pack_bits(list(values), width), bytes(expected))
                self.assertEqual(p.unpack_bits(bytes(expected), width, rows),
                                 bytes(1 if v else 0 for v in values))
        self.assertEqual(p.pack_bits(b"", 0), b"")
        with self.assertRaises(ValueError):
            p.pack_bits(bytes(10), 9)


if __name__ == "__main__":
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: test_protocol.py PATH/protocol_golden")
    GOLDEN_PROGRAM = sys.argv.pop(1)
    unittest.main(verbosity=1)
