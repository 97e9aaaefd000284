"""A seedrl actor in Python: environments with Gymnasium's API, or turn-based games of several
players with PettingZoo's, stepped for a seedrl learner.

    import seedrl.actor
    seedrl.actor.run(make_env, "127.0.0.1:8686", token="...", num_envs=8)
    seedrl.actor.run_vector(vector_env, "127.0.0.1:8686", token="...")
    seedrl.actor.run_games(make_game, "127.0.0.1:8686", token="...", num_games=16)

    python -m seedrl.actor --env mymodule:make_env --address 127.0.0.1:8686 \\
        --token-file token.txt --num-envs 8
    python -m seedrl.actor --game mymodule:make_game --num-games 16 [--opponent random]

`make_env(seed)` (or `make_env()`) returns an environment with Gymnasium's API, duck-typed
(`seedrl.vector`: Discrete, MultiDiscrete as action branches, Box); a legal-action mask comes from
`info["action_mask"]` when `fields={"action_mask": n}` declares it. A vector environment
(Gymnasium's VectorEnv API, numpy) is stepped as whole arrays. `make_game` returns a game
with PettingZoo's AEC API (`seedrl.players`): every seat of the learner is a row, waiting while
another seat moves. The actor speaks the wire protocol (docs/protocol.md) with the standard
library only (numpy is used where an environment hands numpy arrays), over TCP, a Unix socket
(`unix:/path`) or TLS (Python's `ssl`), reconnects with back-off as the C++ actor does (new run
id, every episode restarted), stops when the learner says training is over, and on SIGINT says
GOODBYE and returns.
"""

import argparse
import importlib
import json
import os
import random
import signal
import sys
import time

from seedrl import protocol as p
from seedrl.connection import ActorError, Connection, Retry, parse_address, tls_context
from seedrl.players import TurnBasedRows, random_player
from seedrl.vector import EnvRows, VectorEnvRows, spec_of

__all__ = ["Actor", "ActorError", "EnvRows", "TurnBasedRows", "VectorEnvRows", "main",
           "parse_address", "random_player", "run", "run_games", "run_vector", "spec_of",
           "tls_context"]

BACKOFF_START_S = 0.1
BACKOFF_MAX_S = 5.0


class Actor:
    """Steps `rows` (an EnvRows or a TurnBasedRows) for a learner until it says training is over,
    `stop()` is called, or `max_steps` rows have been sent."""

    def __init__(self, rows, address, token="", tls=None, evaluation=False, log=None):
        if not 1 <= rows.num_rows <= p.MAX_ENVS:
            raise ValueError(f"an actor steps 1 to {p.MAX_ENVS} rows (environments, or games x "
                             f"seats), not {rows.num_rows}")
        self.rows, self.address, self.tls, self.evaluation = rows, address, tls, evaluation
        self.token = token.encode() if isinstance(token, str) else bytes(token)
        self.spec = rows.spec
        self.layout = p.step_layout(rows.num_rows, self.spec)
        self.log = log or (lambda message: print(f"seedrl.actor: {message}", file=sys.stderr,
                                                 flush=True))
        self.stopping = False
        self.steps = 0          # rows sent (environment steps, waiting seats included)
        self.seconds = 0.0      # connected, past the handshake
        self.cpu_seconds = 0.0  # this process's CPU time in those seconds

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
            except Retry as e:
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
            raise Retry(f"the learner said {name}: {message}")
        raise ActorError(f"the learner refused this actor ({name}): {message}")

    def _run_connected(self, conn, max_steps):
        rows = self.rows
        run_id = random.SystemRandom().randrange(1 << 64)
        conn.send(p.encode_hello(p.Hello(self.token, run_id, rows.num_rows, self.evaluation,
                                         self.spec)))
        header, payload = conn.read()
        if header.type == p.ERROR:
            return self._refused(payload)
        if header.type != p.WELCOME:
            raise Retry(f"expected WELCOME, got {p.FRAME_NAMES.get(header.type)}")
        welcome = p.decode_welcome(payload)
        differences = p.spec_differences(self.spec, welcome.spec)
        if differences:
            raise ActorError(f"the learner's step spec is not this actor's: {differences}")
        conn.max_frame_bytes = welcome.max_frame_bytes
        self.log(f"connected to {self.address} (run id {run_id:016x}, slots "
                 f"{welcome.first_slot}..{welcome.first_slot + rows.num_rows - 1})")
        # Every connection starts every episode afresh: the learner dropped the partial unrolls.
        rows.start()
        started, started_cpu = time.monotonic(), time.process_time()
        try:
            return self._steps(conn, max_steps)
        finally:
            self.seconds += time.monotonic() - started
            self.cpu_seconds += time.process_time() - started_cpu

    def _steps(self, conn, max_steps):
        rows = self.rows
        sequence = 0
        while True:
            if self.stopping:
                conn.send(p.encode_goodbye(sequence + 1))
                return "stopped"
            if max_steps is not None and self.steps >= max_steps:
                conn.send(p.encode_goodbye(sequence + 1))
                return "max_steps"
            sequence = (sequence + 1) & 0xFFFFFFFF
            frame = p.encode_step(sequence, self.layout, rows.rewards, rows.flags,
                                  b"".join(rows.observations),
                                  [b"".join(f[k] for f in rows.fields)
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
                raise Retry(f"expected ACTIONS {sequence}, got "
                            f"{p.FRAME_NAMES.get(header.type)} {header.sequence}")
            try:
                actions = p.decode_actions(payload, self.spec.actions, rows.num_rows)
            except p.ProtocolError as e:
                raise Retry(f"a broken ACTIONS frame: {e.message}") from None
            self.steps += rows.num_rows
            rows.advance(actions)


def _new_seed(seed):
    return random.SystemRandom().randrange(1 << 31) if seed is None else int(seed)


def _drive(rows, address, token, tls, evaluation, max_steps, handle_signals):
    actor = Actor(rows, address, token, tls, evaluation)
    previous = {}
    if handle_signals:
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, lambda *_: actor.stop())
    try:
        outcome = actor.run(max_steps)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    summary = dict(rows.summary(), seconds=round(actor.seconds, 3),
                   cpu_seconds=round(actor.cpu_seconds, 3),
                   steps_per_s=round(actor.steps / actor.seconds, 1) if actor.seconds else None)
    actor.log(f"{outcome}: {actor.steps} steps, " + ", ".join(
        f"{k.replace('_', ' ')} {v}" for k, v in summary.items()))
    return outcome, dict(outcome=outcome, steps=actor.steps, **summary)


def run(make_env, address, token="", num_envs=1, tls=None, evaluation=False, fields=None,
        seed=None, max_steps=None, handle_signals=True, observation_dtype=None):
    """Steps `num_envs` environments from `make_env` for the learner at `address` until training
    is over (returns "finished"), SIGINT or SIGTERM ("stopped", after a GOODBYE) or `max_steps`
    environment steps. Raises ActorError when the learner refuses it for good."""
    rows = EnvRows(make_env, num_envs, _new_seed(seed), fields, observation_dtype)
    return _drive(rows, address, token, tls, evaluation, max_steps, handle_signals)[0]


def run_vector(env, address, token="", tls=None, evaluation=False, fields=None, seed=None,
               max_steps=None, handle_signals=True, observation_dtype=None):
    """Steps a vector environment (Gymnasium's VectorEnv API, next-step autoreset: see
    seedrl.vector.VectorEnvRows) for the learner at `address`; returns as run() does."""
    rows = VectorEnvRows(env, _new_seed(seed), fields, observation_dtype)
    return _drive(rows, address, token, tls, evaluation, max_steps, handle_signals)[0]


def run_games(make_game, address, token="", num_games=1, opponents=(), tls=None,
              evaluation=False, seed=None, max_steps=None, handle_signals=True,
              observation_dtype=None):
    """Plays `num_games` turn-based games from `make_game` (PettingZoo's AEC API) for the
    learner at `address`, the learner on every seat `opponents` leave; returns as run() does,
    and with the summary (episodes, and against opponents wins, draws, losses) as a dict."""
    rows = TurnBasedRows(make_game, num_games, _new_seed(seed), opponents, observation_dtype)
    return _drive(rows, address, token, tls, evaluation, max_steps, handle_signals)


def _load(text, option):
    module_name, sep, attribute = text.partition(":")
    if not sep or not module_name or not attribute:
        raise SystemExit(f"{option} {text!r}: expected module:factory")
    return getattr(importlib.import_module(module_name), attribute)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m seedrl.actor",
                                     description="Steps Gymnasium-style environments, or "
                                                 "PettingZoo-style turn-based games, for a "
                                                 "seedrl learner.")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--env", help="module:factory, a callable returning an environment with "
                                    "Gymnasium's API (given a seed if it takes one)")
    what.add_argument("--vector-env", help="module:factory, a callable (num_envs, seed) "
                                           "returning a vector environment with Gymnasium's "
                                           "VectorEnv API (next-step autoreset; numpy)")
    what.add_argument("--game", help="module:factory, a callable returning a turn-based game "
                                     "with PettingZoo's AEC API (given a seed if it takes one)")
    parser.add_argument("--path", action="append", default=[],
                        help="a directory to import the module from (repeatable)")
    parser.add_argument("--address", default="127.0.0.1:8686",
                        help="host:port, [v6]:port or unix:/path")
    parser.add_argument("--num-envs", type=int, default=1,
                        help="environments (with --env or --vector-env)")
    parser.add_argument("--num-games", type=int, default=1, help="games (with --game)")
    parser.add_argument("--opponent", action="append", default=[], metavar="random|module:fn",
                        help="with --game: a seat played here, by a legal random move or by "
                             "fn(observation, mask, rng) (repeatable; default: the learner "
                             "plays every seat)")
    parser.add_argument("--token-file", help="a file holding the shared secret (first line)")
    parser.add_argument("--evaluation", action="store_true",
                        help="act greedily and store nothing")
    parser.add_argument("--mask", type=int, default=0, metavar="N",
                        help="declare a legal-action mask of N actions (info['action_mask'])")
    parser.add_argument("--observation-dtype", choices=["f32", "u8", "i32"],
                        help="send observations as this type, not the space's (an int8 board "
                             "as the f32 an MLP takes)")
    parser.add_argument("--seed", type=int, help="seed of the environments (default: random)")
    parser.add_argument("--max-steps", type=int, help="stop after this many rows sent")
    parser.add_argument("--summary", action="store_true",
                        help="print a JSON line of what was played on stdout at the end")
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
    try:
        if args.opponent and not args.game:
            raise ValueError("--opponent needs --game")
        fields = {p.ACTION_MASK_FIELD: args.mask} if args.mask else None
        if args.env:
            rows = EnvRows(_load(args.env, "--env"), args.num_envs, _new_seed(args.seed), fields,
                           args.observation_dtype)
        elif args.vector_env:
            seed = _new_seed(args.seed)
            rows = VectorEnvRows(_load(args.vector_env, "--vector-env")(args.num_envs, seed),
                                 seed, fields, args.observation_dtype)
        else:
            opponents = [random_player if o == "random" else _load(o, "--opponent")
                         for o in args.opponent]
            rows = TurnBasedRows(_load(args.game, "--game"), args.num_games,
                                 _new_seed(args.seed), opponents, args.observation_dtype)
        outcome, summary = _drive(rows, args.address, token, tls, args.evaluation,
                                  args.max_steps, True)
    except ActorError as e:
        print(f"seedrl.actor: error: {e}", file=sys.stderr)
        return 2
    except (ValueError, OSError) as e:
        print(f"seedrl.actor: error: {e}", file=sys.stderr)
        return 1
    if args.summary:
        print(json.dumps(summary), flush=True)
    return 0 if outcome in ("finished", "stopped", "max_steps") else 1


if __name__ == "__main__":
    sys.exit(main())
