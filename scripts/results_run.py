"""`python3 scripts/results.py run ID`: makes a registry figure's raw files by running its command.

For every group and seed of the figure whose raw file is missing (all of them with --force), runs
the figure's command with the group and the seed put in, the program taken from the build tree
(BUILD/examples/PROGRAM, else BUILD/bench/PROGRAM), and writes the program's final JSON line to
the raw file (through a temporary file, so a failed or interrupted run leaves nothing behind).
Each run's progress (the program's stderr) goes to LOGS/<raw file name>.log, outside the
repository. --jobs runs that many at once (MinAtar's 2-thread runs share 2 cores well two at a
time).

A group with a "command" and "program" of its own (one setting of an ablation) runs that
command instead of the figure's.

A figure of several steps a seed (train, then evaluate the checkpoint) gives its command a
`{workdir}` (a directory of the seed's own under LOGS, for the run's --logdir) and a "raw" of its
own (where the command's line goes); a group with a "command" and "program" of its own (an
evaluation reading `{workdir}`) has its raw file made from that command's line, after the figure's
command; groups without read the figure's. A seed with any raw file missing runs its whole chain
again (the checkpoint an evaluation needs may be gone), every file of it rewritten, from an empty
`{workdir}` (a checkpoint left there would resume the run instead of training it). Standard
library only.
"""

import concurrent.futures
import json
import os
import shlex
import shutil
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


def _argv(figure, program, command, group, seed, workdir):
    argv = shlex.split(command.replace("{group}", group).replace("{seed}", str(seed)).replace(
        "{workdir}", workdir))
    if argv[0] != program:
        raise ValueError(f"figure '{figure['id']}': a command runs '{argv[0]}', not its program "
                         f"'{program}'")
    return argv[1:]


def planned_runs(root, figure, force, logs="LOGS"):
    """The runs to make: each a chain of (program, argv without the program, raw path) run in
    order. A figure of one step a seed has a run per group and seed; one with a "raw" of its own
    has a chain per seed (its command, then each distinct group command)."""
    runs = []
    for seed in figure["seeds"]:
        if "raw" not in figure:
            for group in figure["groups"]:
                raw = group["raw"].replace("{seed}", str(seed))
                if force or not os.path.exists(os.path.join(root, raw)):
                    # A group with a command of its own (a setting of an ablation) runs that.
                    program = group.get("program", figure["program"])
                    argv = _argv(figure, program, group.get("command", figure["command"]),
                                 group["name"], seed, "")
                    runs.append([(program, argv, raw)])
            continue
        chain = [(figure["program"],
                  _argv(figure, figure["program"], figure["command"], "", seed,
                        workdir_path(figure, seed, logs)),
                  figure["raw"].replace("{seed}", str(seed)))]
        for group in figure["groups"]:
            raw = group["raw"].replace("{seed}", str(seed))
            if "command" in group and raw not in [r for _, _, r in chain]:
                chain.append((group["program"],
                              _argv(figure, group["program"], group["command"], group["name"],
                                    seed, workdir_path(figure, seed, logs)), raw))
        raws = [r for _, _, r in chain] + [g["raw"].replace("{seed}", str(seed))
                                           for g in figure["groups"]]
        if force or not all(os.path.exists(os.path.join(root, r)) for r in raws):
            runs.append(chain)
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


def workdir_path(figure, seed, logs):
    """A seed's {workdir}: a directory of its own under LOGS."""
    return os.path.join(logs, f"{figure['id']}-{seed}")


def workdir(figure, chain, logs):
    """The chain's {workdir} (None for a figure of one step a seed)."""
    if "raw" not in figure:
        return None
    for seed in figure["seeds"]:
        if figure["raw"].replace("{seed}", str(seed)) == chain[0][2]:
            return workdir_path(figure, seed, os.path.abspath(logs))
    return None


def run_chain(root, build, chain, logs, workdir=None):
    """Runs a chain's steps in order, stopping at the first that fails, in a fresh `workdir`
    (removed first) where it has one; returns (the last raw path made or tried, seconds, error or
    None)."""
    started, raw = time.monotonic(), ""
    if workdir:
        shutil.rmtree(workdir, ignore_errors=True)
    for program, args, raw in chain:
        _, _, error = run_one(root, program_path(build, program), args, raw, logs)
        if error:
            return raw, time.monotonic() - started, error
    return raw, time.monotonic() - started, None


def run(root, figure, build, jobs=1, force=False, logs=None):
    """Makes the figure's missing raw files; returns the number of failed runs."""
    program_path(build, figure["program"])  # fail before any run when it is not built
    logs = logs or tempfile.mkdtemp(prefix=f"seedrl-results-{figure['id']}-")
    runs = planned_runs(root, figure, force, os.path.abspath(logs))
    if not runs:
        print(f"results: every raw file of '{figure['id']}' is there (--force makes them again)")
        return 0
    os.makedirs(logs, exist_ok=True)
    print(f"results: {len(runs)} runs of {figure['program']} for '{figure['id']}', {jobs} at a "
          f"time; progress of each in {logs}", flush=True)
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run_chain, root, build, chain, logs, workdir(figure, chain, logs))
                   for chain in runs]
        for n, future in enumerate(concurrent.futures.as_completed(futures), 1):
            raw, seconds, error = future.result()
            if error:
                failed += 1
                print(f"results: [{n}/{len(runs)}] {raw} FAILED after {seconds:.0f} s: {error}",
                      file=sys.stderr, flush=True)
            else:
                print(f"results: [{n}/{len(runs)}] {raw} ({seconds:.0f} s)", flush=True)
    return failed
