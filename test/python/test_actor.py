#!/usr/bin/env python3
"""seedrl.actor against a fake learner written with seedrl.protocol (a thread on a Unix socket):
the handshake and its spec, the episode flags, a reconnect after a lost connection (new run id,
every episode started again), the learner's 'finished', refusals that end the actor for good, and
masks and action branches taken from the environment. Standard library only.
"""

import os
import socket
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from seedrl import actor as seedrl_actor  # noqa: E402
from seedrl import protocol as p  # noqa: E402


class Space:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class Counter:
    """Observation [t, seed]; episodes of 3 steps (terminated); the mask allows action t % 2."""

    def __init__(self, seed, branched=False):
        self.seed = seed
        self.observation_space = Space(shape=(2,), dtype="float32")
        self.action_space = Space(nvec=[2, 3]) if branched else Space(n=2)
        self.t = 0
        self.actions = []

    def info(self):
        return {"action_mask": [1 if a == self.t % 2 else 0 for a in range(2)]}

    def reset(self, seed=None):
        self.t = 0
        return [0.0, float(self.seed)], self.info()

    def step(self, action):
        self.actions.append(action)
        self.t += 1
        return [float(self.t), float(self.seed)], 1.0, self.t >= 3, False, self.info()


class FakeLearner(threading.Thread):
    """Serves connections one after another; `script(conn_index, hello)` gives (steps, end) or
    (steps, end, eager): how many STEPs to answer before closing (None: until GOODBYE) and the
    error code that answers the next STEP instead (None: just close; eager: sent at once, and
    closed, before that STEP arrives); or (code, message) to refuse the HELLO with."""

    def __init__(self, path, spec, script):
        super().__init__(daemon=True)
        self.path, self.spec, self.script = path, spec, script
        self.hellos, self.steps = [], []
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(path)
        self.server.listen(4)

    def read(self, conn):
        header = b""
        while len(header) < p.HEADER_BYTES:
            chunk = conn.recv(p.HEADER_BYTES - len(header))
            if not chunk:
                return None, None
            header += chunk
        h = p.decode_header(header, p.DEFAULT_MAX_FRAME_BYTES)
        payload = b""
        while len(payload) < h.payload_bytes:
            payload += conn.recv(h.payload_bytes - len(payload))
        return h, payload

    def run(self):
        index = 0
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                h, payload = self.read(conn)
                hello = p.decode_hello(payload)
                self.hellos.append(hello)
                plan = self.script(index, hello)
                index += 1
                if isinstance(plan, tuple) and len(plan) == 2 and isinstance(plan[1], str):
                    conn.sendall(p.encode_error(plan[0], plan[1], h.sequence))
                    continue
                steps, end, eager = plan if len(plan) == 3 else (*plan, False)
                conn.sendall(p.encode_welcome(p.Welcome(self.spec, 0, 1 << 20), h.sequence))
                layout = p.step_layout(hello.num_envs, self.spec)
                answered = 0
                while steps is None or answered < steps:
                    h, payload = self.read(conn)
                    if h is None or h.type == p.GOODBYE:
                        break
                    step = p.decode_step(payload, layout)
                    self.steps.append((index - 1, step))
                    width = self.spec.actions.dims
                    actions = [answered % 2] * (hello.num_envs * width)
                    conn.sendall(p.encode_actions(h.sequence, actions, self.spec.actions))
                    answered += 1
                if end is not None and eager:  # said and closed before the actor's next STEP
                    conn.sendall(p.encode_error(end, "training is over", 0))
                elif end is not None:  # as a server does: the next STEP gets the ERROR
                    h, _ = self.read(conn)
                    if h is not None:
                        conn.sendall(p.encode_error(end, "training is over", h.sequence))

    def close(self):
        self.server.close()


class ActorAgainstAFakeLearner(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="seedrl-actor-test-")
        self.path = os.path.join(self.dir, "learner.sock")
        self.logs = []

    def tearDown(self):
        if os.path.exists(self.path):
            os.remove(self.path)
        os.rmdir(self.dir)

    def actor(self, spec_fields=None, branched=False, token="tok", num_envs=2):
        self.envs = []

        def make(seed):
            env = Counter(seed, branched)
            self.envs.append(env)
            return env
        rows = seedrl_actor.EnvRows(make, num_envs, seed=7, fields=spec_fields)
        a = seedrl_actor.Actor(rows, f"unix:{self.path}", token, log=self.logs.append)
        return a

    def serve(self, spec, script):
        learner = FakeLearner(self.path, spec, script)
        learner.start()
        return learner

    def test_episodes_reconnects_and_the_end(self):
        spec = p.StepSpec(p.Tensor("f32", (2,)), p.ActionSpec.discrete(2))
        # The first connection breaks after 4 steps, the second ends training after 2.
        learner = self.serve(spec, lambda i, hello: (4, None) if i == 0 else (2, p.FINISHED))
        a = self.actor()
        seedrl_actor.BACKOFF_START_S = 0.01
        self.assertEqual(a.run(), "finished")
        learner.close()
        self.assertEqual(len(learner.hellos), 2)
        self.assertNotEqual(learner.hellos[0].run_id, learner.hellos[1].run_id)
        self.assertEqual(learner.hellos[0].token, b"tok")
        self.assertEqual(learner.hellos[0].spec, spec)
        flags = [list(step.flags) for _, step in learner.steps]
        # Connection 0: first, then steps 1 and 2, terminated at 3, then a new episode.
        self.assertEqual(flags[0], [p.FIRST, p.FIRST])
        self.assertEqual(flags[1], [0, 0])
        self.assertEqual(flags[3], [p.TERMINATED, p.TERMINATED])
        # Connection 1 starts every episode again.
        second = [list(step.flags) for conn, step in learner.steps if conn == 1]
        self.assertEqual(second[0], [p.FIRST, p.FIRST])
        self.assertEqual(learner.steps[1][1].rewards, (1.0, 1.0))
        # The action answered for the ending step was not executed (3 steps an episode).
        self.assertEqual(self.envs[0].actions[:3], [0, 1, 0])
        self.assertTrue(any("connecting again" in line for line in self.logs))
        self.assertEqual(a.rows.episodes, 1 * 2)

    def test_an_end_said_before_the_close_is_read_after_a_failed_send(self):
        spec = p.StepSpec(p.Tensor("f32", (2,)), p.ActionSpec.discrete(2))
        learner = self.serve(spec, lambda i, hello: (2, p.FINISHED, True))
        self.assertEqual(self.actor().run(), "finished")
        learner.close()
        self.assertEqual(len(learner.hellos), 1)

    def test_refusals_end_the_actor_with_the_learners_message(self):
        spec = p.StepSpec(p.Tensor("f32", (2,)), p.ActionSpec.discrete(2))
        learner = self.serve(spec, lambda i, hello: (p.UNAUTHORIZED, "wrong token"))
        with self.assertRaises(seedrl_actor.ActorError) as raised:
            self.actor(token="guess").run()
        learner.close()
        self.assertIn("wrong token", str(raised.exception))
        self.assertIn("unauthorized", str(raised.exception))

    def test_a_learner_of_another_spec_is_refused_here(self):
        theirs = p.StepSpec(p.Tensor("f32", (2,)), p.ActionSpec.discrete(5))
        learner = self.serve(theirs, lambda i, hello: (None, None))
        with self.assertRaises(seedrl_actor.ActorError) as raised:
            self.actor().run()
        learner.close()
        self.assertIn("actions", str(raised.exception))

    def test_masks_and_branches_come_from_the_environment(self):
        spec = p.StepSpec(p.Tensor("f32", (2,)), p.ActionSpec.branched([2, 3]),
                          (p.FieldSpec("action_mask", p.Tensor("u8", (2,))),))
        learner = self.serve(spec, lambda i, hello: (3, p.FINISHED))
        a = self.actor(spec_fields={"action_mask": 2}, branched=True)
        self.assertEqual(a.run(), "finished")
        learner.close()
        self.assertEqual(learner.hellos[0].spec, spec)
        masks = [step.fields[0] for _, step in learner.steps]
        self.assertEqual(masks[0], bytes([1, 0, 1, 0]))  # t = 0: action 0 legal, both envs
        self.assertEqual(masks[1], bytes([0, 1, 0, 1]))
        self.assertEqual([list(x) for x in self.envs[0].actions[:2]], [[0, 0], [1, 1]])


if __name__ == "__main__":
    unittest.main(verbosity=1)
