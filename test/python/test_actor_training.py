#!/usr/bin/env python3
"""Python (or C) actors train a seedrl learner: two `python -m seedrl.actor` processes stepping the
standard-library CartPole (python/examples/cartpole.py) feed `distributed_learner --env cartpole`
over a Unix socket with a token, until the learner's frame budget; the learner's JSON line must
show a mean return of at least 475 (CartPole-v1's solved bar; its maximum is 500), and both
actors must exit 0 when it tells them training is over.

    test_actor_training.py PATH/distributed_learner [--frames N] [--c-actor PATH/cartpole_actor]

With --c-actor the actors are that C program (examples/c/cartpole_actor.c, the C ABI) instead.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.join(HERE, "..", "..", "python")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("learner")
    parser.add_argument("--frames", type=int, default=800_000)
    parser.add_argument("--actors", type=int, default=2)
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--target", type=float, default=475.0)
    parser.add_argument("--c-actor", help="run this C actor (examples/c/cartpole_actor.c) "
                                          "instead of Python's")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="seedrl-python-actors-")
    socket_path = os.path.join(work, "learner.sock")
    token_file = os.path.join(work, "token")
    with open(os.open(token_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
        f.write("python-actors-test\n")
    learner = subprocess.Popen(
        [args.learner, "--env", "cartpole", "--listen", f"unix:{socket_path}", "--token-file",
         token_file, "--frames", str(args.frames), "--seed", "3", "--report-seconds", "5"],
        stdout=subprocess.PIPE, stderr=sys.stderr, text=True)
    deadline = time.monotonic() + 30
    while not os.path.exists(socket_path):
        if learner.poll() is not None or time.monotonic() > deadline:
            sys.exit("the learner did not start listening")
        time.sleep(0.05)
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, PYTHONDONTWRITEBYTECODE="1")
    def command(a):
        if args.c_actor:
            return [args.c_actor, f"unix:{socket_path}", token_file, str(args.envs), str(100 + a)]
        return [sys.executable, "-m", "seedrl.actor", "--path", os.path.join(PYTHON_DIR, "examples"),
                "--env", "cartpole:make", "--address", f"unix:{socket_path}", "--token-file",
                token_file, "--num-envs", str(args.envs), "--seed", str(100 + a)]
    actors = [subprocess.Popen(command(a), env=env) for a in range(args.actors)]
    started = time.monotonic()
    try:
        out, _ = learner.communicate(timeout=900)
        codes = [a.wait(timeout=60) for a in actors]
    finally:
        for process in [learner] + actors:
            if process.poll() is None:
                process.kill()
        shutil.rmtree(work, ignore_errors=True)
    seconds = time.monotonic() - started
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if learner.returncode != 0 or not lines:
        sys.exit(f"the learner failed (exit status {learner.returncode})")
    result = json.loads(lines[-1])
    print(f"test_actor_training: {result['frames']} frames in {seconds:.1f} s "
          f"({result['frames'] / seconds:,.0f} frames/s) from {args.actors} "
          f"{'C' if args.c_actor else 'Python'} actors x "
          f"{args.envs} environments; mean return {result['mean_return']}; actors exited {codes}")
    if codes != [0] * args.actors:
        sys.exit(f"an actor did not exit cleanly: {codes}")
    if result["mean_return"] is None or result["mean_return"] < args.target:
        sys.exit(f"mean return {result['mean_return']} is below {args.target}")


if __name__ == "__main__":
    main()
