"""`python3 scripts/results.py run ID`: makes a registry figure's raw files by running its command.

For every group and seed of the figure whose raw file is missing (all of them with --force), runs
the figure's command with the group and the seed put in, the program taken from the build tree
(BUILD/examples/PROGRAM, else BUILD/bench/PROGRAM), and writes the program's final JSON line to
the raw file (through a temporary file, so a failed or interrupted run leaves nothing behind).
Each run's progress (the program's stderr) goes to LOGS/<raw file name>.log, outside the
repository. --jobs runs that many at once (MinAtar's 2-thread runs share 2 cores well two at a
time). Standard library only.
"""

import concurrent.futures
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time


def program_path(build, program):
    for folder in ("examples", "bench"):
        path = os.path.join(build, folder, program)
        if os.access(path, os.X_OK):
            return path
    raise FileNotFoundError(f"no program '{program}' in {build}/examples or {build}/bench "
                            "(build it first)")


def planned_runs(root, figure, force):
    """(group name, seed, argv without the program, raw path) for each run to make."""
    runs = []
    for group in figure["groups"]:
        for seed in figure["seeds"]:
            raw = group["raw"].replace("{seed}", str(seed))
            if not force and os.path.exists(os.path.join(root, raw)):
                continue
            command = figure["command"].replace("{group}", group["name"]).replace("{seed}",
                                                                                  str(seed))
            argv = shlex.split(command)
            if argv[0] != figure["program"]:
                raise ValueError(f"figure '{figure['id']}': its command runs '{argv[0]}', not its "
                                 f"program '{figure['program']}'")
            runs.append((group["name"], seed, argv[1:], raw))
    return runs


def run_one(root, program, args, raw, logs):
    """Runs one command; returns (raw, seconds, error or None)."""
    started = time.monotonic()
    target = os.path.join(root, raw)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    log_path = os.path.join(logs, os.path.basename(raw) + ".log")
    with open(log_path, "w", encoding="utf-8") as log:
        done = subprocess.run([program] + args, stdout=subprocess.PIPE, stderr=log, text=True,
                              stdin=subprocess.DEVNULL)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        return raw, seconds, f"exit status {done.returncode} (its output: {log_path})"
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    try:
        record = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        return raw, seconds, f"no JSON line on its stdout (its output: {log_path})"
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".results-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps(record, separators=(",", ":")) + "\n")
    os.replace(tmp, target)
    return raw, seconds, None


def run(root, figure, build, jobs=1, force=False, logs=None):
    """Makes the figure's missing raw files; returns the number of failed runs."""
    program = program_path(build, figure["program"])
    runs = planned_runs(root, figure, force)
    if not runs:
        print(f"results: every raw file of '{figure['id']}' is there (--force makes them again)")
        return 0
    logs = logs or tempfile.mkdtemp(prefix=f"seedrl-results-{figure['id']}-")
    os.makedirs(logs, exist_ok=True)
    print(f"results: {len(runs)} runs of {figure['program']} for '{figure['id']}', {jobs} at a "
          f"time; progress of each in {logs}", flush=True)
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run_one, root, program, args, raw, logs)
                   for _, _, args, raw in runs]
        for n, future in enumerate(concurrent.futures.as_completed(futures), 1):
            raw, seconds, error = future.result()
            if error:
                failed += 1
                print(f"results: [{n}/{len(runs)}] {raw} FAILED after {seconds:.0f} s: {error}",
                      file=sys.stderr, flush=True)
            else:
                print(f"results: [{n}/{len(runs)}] {raw} ({seconds:.0f} s)", flush=True)
    return failed
