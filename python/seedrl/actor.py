"""A seedrl actor in Python: environments with Gymnasium's API, stepped for a seedrl learner.

    import seedrl.actor
    seedrl.actor.run(make_env, "127.0.0.1:8686", token="...", num_envs=8)

    python -m seedrl.actor --env mymodule:make_env --address 127.0.0.1:8686 \\
        --token-file token.txt --num-envs 8

`make_env(seed)` (or `make_env()`) returns an environment with Gymnasium's API, duck-typed
(gymnasium need not be installed): `reset(seed=) -> (obs, info)`, `step(action) -> (obs, reward,
terminated, truncated, info)`, `observation_space` (a Box: `shape`, `dtype`) and `action_space`
(Discrete: `n`; MultiDiscrete: `nvec`, the protocol's action branches; Box: `low`, `high`). A
legal-action mask comes from `info["action_mask"]` when `fields={"action_mask": n}` (or a
`FieldSpec`) declares it; any declared field is read from `info` by its name. The actor speaks the
wire protocol (docs/protocol.md) with the standard library only (numpy is used where an
environment hands numpy arrays), over TCP, a Unix socket (`unix:/path`) or TLS (Python's `ssl`),
reconnects with back-off as the C++ actor does (new run id, every episode restarted), stops when
the learner says training is over, and on SIGINT says GOODBYE and returns.
"""

import argparse
import importlib
import inspect
import math
import os
import random
import signal
import socket
import ssl
import sys
import time

from seedrl import protocol as p

BACKOFF_START_S = 0.1
BACKOFF_MAX_S = 5.0


class ActorError(Exception):
    """The learner refused this actor for good (a wrong token, another spec, another version)."""


class _Retry(Exception):
    """The connection is gone or the learner asked to come back later."""


# ---- what the environments are ----

def _dtype_name(dtype):
    text = str(getattr(dtype, "name", dtype)).lower()
    if "float" in text or text == "f32":
        return "f32"
    if text in ("uint8", "u8", "bool"):
        return "u8"
    if "int" in text or text == "i32":
        return "i32"
    raise ValueError(f"observation dtype {dtype!r} is not float32, uint8 or an integer type")


def spec_of(env, fields=None):
    """The step spec an environment's spaces describe (`fields`: name -> FieldSpec, a Tensor, or a
    size n for u8 [n])."""
    obs_space = env.observation_space
    shape = tuple(int(d) for d in getattr(obs_space, "shape", ()) or ())
    observation = p.Tensor(_dtype_name(getattr(obs_space, "dtype", "float32")), shape)
    space = env.action_space
    if hasattr(space, "nvec"):
        actions = p.ActionSpec.branched([int(n) for n in _flat(space.nvec)])
    elif hasattr(space, "n"):
        actions = p.ActionSpec.discrete(int(space.n))
    elif hasattr(space, "low") and hasattr(space, "high"):
        actions = p.ActionSpec.box([float(x) for x in _flat(space.low)],
                                   [float(x) for x in _flat(space.high)])
    else:
        raise ValueError(f"action space {space!r} is neither Discrete (n), MultiDiscrete (nvec) "
                         "nor Box (low, high)")
    declared = []
    for name, what in (fields or {}).items():
        if isinstance(what, p.FieldSpec):
            declared.append(what)
        elif isinstance(what, p.Tensor):
            declared.append(p.FieldSpec(name, what))
        else:
            declared.append(p.FieldSpec(name, p.Tensor("u8", (int(what),))))
    return p.StepSpec(observation, actions, tuple(declared))


def _flat(values):
    if hasattr(values, "tolist"):
        values = values.tolist()
    if isinstance(values, (int, float)):
        return [values]
    out = []
    for v in values:
        out.extend(_flat(v) if not isinstance(v, (int, float)) else [v])
    return out


def _action_value(spec, values, e):
    d = spec.dims
    if spec.kind == 0:
        return values[e]
    row = list(values[e * d:(e + 1) * d])
    try:
        import numpy
        return numpy.asarray(row, dtype=numpy.float32 if spec.kind == 1 else numpy.int64)
    except ImportError:
        return row


# ---- the connection ----

def parse_address(address):
    """("unix", path) or ("tcp", (host, port)) from 'unix:/path', 'host:port' or '[v6]:port'."""
    if address.startswith("unix:"):
        return "unix", address[len("unix:"):]
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"address {address!r}: expected host:port, [v6]:port or unix:/path")
    return "tcp", (host.strip("[]"), int(port))


class Connection:
    """One connection to a learner: framed reads and writes of whole frames."""

    def __init__(self, address, tls=None, timeout=30.0):
        kind, where = parse_address(address)
        if kind == "unix":
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        else:
            sock = socket.socket(socket.AF_INET6 if ":" in where[0] else socket.AF_INET,
                                 socket.SOCK_STREAM)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(timeout)
        try:
            sock.connect(where)
            if tls is not None:
                sock = tls.wrap_socket(sock, server_hostname=tls_server_name(tls, where))
        except BaseException:
            sock.close()
            raise
        self.sock = sock
        self.max_frame_bytes = p.MAX_HANDSHAKE_FRAME_BYTES

    def send(self, frame):
        self.sock.sendall(frame)

    def _read_exactly(self, n):
        chunks, left = [], n
        while left:
            chunk = self.sock.recv(min(left, 1 << 20))
            if not chunk:
                raise ConnectionError("the learner closed the connection")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def read(self):
        """(header, payload) of the next frame; a frame of another version raises ActorError."""
        raw = self._read_exactly(p.HEADER_BYTES)
        try:
            header = p.decode_header(raw, max(self.max_frame_bytes, p.MAX_HANDSHAKE_FRAME_BYTES))
        except p.ProtocolError as e:
            if e.code == p.UNSUPPORTED_VERSION and getattr(e, "header", None) is not None:
                h = e.header
                said = ""
                if 8 <= h.length <= p.MAX_HANDSHAKE_FRAME_BYTES and h.type == p.ERROR:
                    try:
                        said = " (it says: " + p.decode_error(
                            self._read_exactly(h.payload_bytes))[1] + ")"
                    except (p.ProtocolError, ConnectionError, OSError):
                        pass
                raise ActorError(f"the learner speaks protocol version {h.version}; this actor "
                                 f"speaks version {p.VERSION}; update one of them{said}") from None
            raise _Retry(f"a broken frame from the learner: {e.message}") from None
        return header, self._read_exactly(header.payload_bytes)

    def read_pending(self):
        """A frame the learner sent before the connection broke, or (None, None)."""
        try:
            self.sock.settimeout(0.2)
            return self.read()
        except (OSError, ConnectionError, ActorError, _Retry):
            return None, None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def tls_server_name(context, where):
    """The name the learner's certificate is checked against: its host."""
    return where[0] if context.check_hostname else None


def tls_context(ca=None, cert=None, key=None, server_name_check=True):
    """A client TLS context: the learner's certificate checked against `ca` (a PEM file), this
    actor's own certificate and key for mutual TLS."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=ca)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = server_name_check
    if cert:
        context.load_cert_chain(cert, key)
    return context


# ---- the actor ----

class Actor:
    """Steps `num_envs` environments for a learner until it says training is over, `stop()` is
    called, or `max_steps` batches have been sent."""

    def __init__(self, make_env, address, token="", num_envs=1, tls=None, evaluation=False,
                 fields=None, seed=None, log=None):
        if not 1 <= num_envs <= p.MAX_ENVS:
            raise ValueError(f"num_envs must be in [1, {p.MAX_ENVS}], got {num_envs}")
        self.address, self.tls, self.evaluation = address, tls, evaluation
        self.token = token.encode() if isinstance(token, str) else bytes(token)
        self.seed = random.SystemRandom().randrange(1 << 31) if seed is None else int(seed)
        takes_seed = _takes_argument(make_env)
        self.envs = [make_env(self.seed * 1009 + e) if takes_seed else make_env()
                     for e in range(num_envs)]
        self.spec = spec_of(self.envs[0], fields)
        self.layout = p.step_layout(num_envs, self.spec)
        self.log = log or (lambda message: print(f"seedrl.actor: {message}", file=sys.stderr,
                                                 flush=True))
        self.stopping = False
        self.steps = 0          # environment steps sent
        self.episodes = 0       # episodes ended
        self.returns = []       # the last 100 episodes' returns
        self._episode_seed = self.seed

    def stop(self):
        self.stopping = True

    def run(self, max_steps=None):
        """Returns "finished" (training is over), "stopped" or "max_steps"."""
        delay = BACKOFF_START_S
        while not self.stopping:
            try:
                outcome = self._session(max_steps)
                if outcome != "retry":
                    return outcome
                delay = BACKOFF_START_S
            except _Retry as e:
                self.log(f"{e}; connecting again in {delay:.1f} s")
            except (OSError, ConnectionError) as e:
                self.log(f"{self.address}: {e}; connecting again in {delay:.1f} s")
            time.sleep(delay)
            delay = min(delay * 2, BACKOFF_MAX_S)
        return "stopped"

    def _session(self, max_steps):
        conn = Connection(self.address, self.tls)
        try:
            return self._run_connected(conn, max_steps)
        finally:
            conn.close()

    def _refused(self, payload):
        code, message = p.decode_error(payload)
        name = p.ERROR_NAMES.get(code, f"code {code}")
        if code == p.FINISHED:
            return "finished"
        if code in p.RETRY_CODES:
            raise _Retry(f"the learner said {name}: {message}")
        raise ActorError(f"the learner refused this actor ({name}): {message}")

    def _run_connected(self, conn, max_steps):
        run_id = random.SystemRandom().randrange(1 << 64)
        conn.send(p.encode_hello(p.Hello(self.token, run_id, len(self.envs), self.evaluation,
                                         self.spec)))
        header, payload = conn.read()
        if header.type == p.ERROR:
            return self._refused(payload)
        if header.type != p.WELCOME:
            raise _Retry(f"expected WELCOME, got {p.FRAME_NAMES.get(header.type)}")
        welcome = p.decode_welcome(payload)
        differences = p.spec_differences(self.spec, welcome.spec)
        if differences:
            raise ActorError(f"the learner's step spec is not this actor's: {differences}")
        conn.max_frame_bytes = welcome.max_frame_bytes
        self.log(f"connected to {self.address} (run id {run_id:016x}, slots "
                 f"{welcome.first_slot}..{welcome.first_slot + len(self.envs) - 1})")
        # Every connection starts every episode afresh: the learner dropped the partial unrolls.
        n = len(self.envs)
        observations, fields = [None] * n, [None] * n
        rewards, flags, totals = [0.0] * n, [p.FIRST] * n, [0.0] * n
        for e in range(n):
            observations[e], fields[e] = self._reset(e)
        sequence = 0
        while True:
            if self.stopping:
                conn.send(p.encode_goodbye(sequence + 1))
                return "stopped"
            if max_steps is not None and self.steps >= max_steps:
                conn.send(p.encode_goodbye(sequence + 1))
                return "max_steps"
            sequence = (sequence + 1) & 0xFFFFFFFF
            frame = p.encode_step(sequence, self.layout, rewards, flags, b"".join(observations),
                                  [b"".join(f[k] for f in fields)
                                   for k in range(len(self.spec.fields))])
            try:
                conn.send(frame)
            except OSError:
                # The learner may have said why before it closed (finished, shutting down).
                header, payload = conn.read_pending()
                if header is not None and header.type == p.ERROR:
                    return self._refused(payload)
                raise
            header, payload = conn.read()
            if header.type == p.ERROR:
                return self._refused(payload)
            if header.type != p.ACTIONS or header.sequence != sequence:
                raise _Retry(f"expected ACTIONS {sequence}, got "
                             f"{p.FRAME_NAMES.get(header.type)} {header.sequence}")
            try:
                actions = p.decode_actions(payload, self.spec.actions, n)
            except p.ProtocolError as e:
                raise _Retry(f"a broken ACTIONS frame: {e.message}") from None
            self.steps += n
            for e in range(n):
                if flags[e] & (p.TERMINATED | p.TRUNCATED):
                    # The ending step's action is not executed: the episode starts again.
                    self._end_episode(totals[e])
                    totals[e] = 0.0
                    observations[e], fields[e] = self._reset(e)
                    rewards[e], flags[e] = 0.0, p.FIRST
                    continue
                obs, reward, terminated, truncated, info = self.envs[e].step(
                    _action_value(self.spec.actions, actions, e))
                reward = float(reward)
                totals[e] += reward
                observations[e] = p.tensor_bytes(obs, self.spec.observation, "observation")
                fields[e] = self._fields(info)
                rewards[e] = reward
                flags[e] = (p.TERMINATED if terminated else 0) | (
                    p.TRUNCATED if truncated and not terminated else 0)

    def _reset(self, e):
        self._episode_seed += 1
        obs, info = self.envs[e].reset(seed=self._episode_seed)
        return p.tensor_bytes(obs, self.spec.observation, "observation"), self._fields(info)

    def _fields(self, info):
        out = []
        for f in self.spec.fields:
            if f.name not in info:
                raise ValueError(f"the environment's info has no {f.name!r}, a declared field")
            value = info[f.name]
            if f.as_bits:  # a mask: its u8 values; any non-zero value is legal
                value = bytes(1 if v else 0 for v in _flat(value))
                if len(value) != f.spec.numel:
                    raise ValueError(f"{f.name}: {len(value)} values, {f.spec} holds "
                                     f"{f.spec.numel}")
                out.append(value)
            else:
                out.append(p.tensor_bytes(value, f.spec, f.name))
        return out

    def _end_episode(self, total):
        self.episodes += 1
        self.returns = (self.returns + [total])[-100:]

    def mean_return(self):
        return sum(self.returns) / len(self.returns) if self.returns else math.nan


def _takes_argument(factory):
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD, q.VAR_POSITIONAL)
               for q in params)


def run(make_env, address, token="", num_envs=1, tls=None, evaluation=False, fields=None,
        seed=None, max_steps=None, handle_signals=True):
    """Steps `num_envs` environments from `make_env` for the learner at `address` until training
    is over (returns "finished"), SIGINT or SIGTERM ("stopped", after a GOODBYE) or `max_steps`
    environment steps. Raises ActorError when the learner refuses it for good."""
    actor = Actor(make_env, address, token, num_envs, tls, evaluation, fields, seed)
    previous = {}
    if handle_signals:
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, lambda *_: actor.stop())
    try:
        outcome = actor.run(max_steps)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    actor.log(f"{outcome}: {actor.steps} steps, {actor.episodes} episodes, mean return of the "
              f"last {len(actor.returns)}: {actor.mean_return():.2f}")
    return outcome


def _load_factory(text):
    module_name, sep, attribute = text.partition(":")
    if not sep or not module_name or not attribute:
        raise SystemExit(f"--env {text!r}: expected module:factory")
    return getattr(importlib.import_module(module_name), attribute)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m seedrl.actor",
                                     description="Steps Gymnasium-style environments for a "
                                                 "seedrl learner.")
    parser.add_argument("--env", required=True, help="module:factory, a callable returning an "
                                                     "environment (given a seed if it takes one)")
    parser.add_argument("--path", action="append", default=[],
                        help="a directory to import the module from (repeatable)")
    parser.add_argument("--address", default="127.0.0.1:8686",
                        help="host:port, [v6]:port or unix:/path")
    parser.add_argument("--num-envs", type=int, default=1)
    parser.add_argument("--token-file", help="a file holding the shared secret (first line)")
    parser.add_argument("--evaluation", action="store_true",
                        help="act greedily and store nothing")
    parser.add_argument("--mask", type=int, default=0, metavar="N",
                        help="declare a legal-action mask of N actions (info['action_mask'])")
    parser.add_argument("--seed", type=int, help="seed of the environments (default: random)")
    parser.add_argument("--max-steps", type=int, help="stop after this many environment steps")
    parser.add_argument("--tls-ca", help="PEM CA the learner's certificate is checked against "
                                         "(speaks TLS when given)")
    parser.add_argument("--tls-cert", help="PEM certificate of this actor (mutual TLS)")
    parser.add_argument("--tls-key", help="PEM private key of --tls-cert")
    parser.add_argument("--tls-server-name-check", default="true", choices=["true", "false"],
                        help="check the learner's certificate names the address's host")
    args = parser.parse_args(argv)
    sys.path[:0] = args.path
    token = os.environ.get("SEEDRL_TOKEN", "")
    if args.token_file:
        with open(args.token_file, encoding="utf-8") as f:
            token = f.readline().rstrip("\r\n")
    tls = None
    if args.tls_ca or args.tls_cert:
        tls = tls_context(args.tls_ca, args.tls_cert, args.tls_key,
                          args.tls_server_name_check == "true")
    fields = {p.ACTION_MASK_FIELD: args.mask} if args.mask else None
    try:
        outcome = run(_load_factory(args.env), args.address, token, args.num_envs, tls,
                      args.evaluation, fields, args.seed, args.max_steps)
    except ActorError as e:
        print(f"seedrl.actor: error: {e}", file=sys.stderr)
        return 2
    except (ValueError, OSError) as e:
        print(f"seedrl.actor: error: {e}", file=sys.stderr)
        return 1
    return 0 if outcome in ("finished", "stopped", "max_steps") else 1


if __name__ == "__main__":
    sys.exit(main())
