#!/usr/bin/python3
"""Draws the figures in docs/ from seedrl's own outputs (metrics.csv files, benchmark JSON lines).

Documentation tooling only: seedrl never needs Python to build, run or test. Needs matplotlib
(Debian: python3-matplotlib).

  scripts/plot_results.py curve OUT.png [--target=N|none] LABEL=run_dir/metrics.csv ...
      learning curves (the dashed target: 475 by default)
  scripts/plot_results.py wallclock OUT.png [--target=N|none] LABEL=run_dir/metrics.csv ...
      the same curves against wall-clock minutes, agent steps beside them (log scale)
  scripts/plot_results.py inference OUT.png bench_inference_output.txt  frames/s vs actors
  scripts/plot_results.py minatar OUT.png RESULTS_DIR   MinAtar curves: RESULTS_DIR/logs/
      {vtrace,r2d2}_{game}_{seed}/metrics.csv, mean over seeds with the min-max band
  scripts/plot_results.py minatar-table RESULTS_DIR    markdown table from RESULTS_DIR/*.json
  scripts/plot_results.py continuous OUT.png RUNS_DIR   Pendulum and MuJoCo curves: RUNS_DIR/
      {agent}_{env}_{seed}/metrics.csv, one line per seed, the target dashed
  scripts/plot_results.py pipeline OUT.png LABEL=bench_pipeline.jsonl ...   bench_pipeline:
      frames/s against the compute limit per configuration, and where the cores' time went
  scripts/plot_results.py seeds OUT.png RESULTS_DIR GAME,GAME,... LABEL=PREFIX ...   one line per
      seed of each setting: RESULTS_DIR/logs/{PREFIX}_{game}_{seed}/metrics.csv, one colour per
      setting (controls: how each seed went, not only the mean)
  scripts/plot_results.py panels OUT.png "TITLE|TARGET|GLOB" ...   one panel per argument, one
      line per metrics file the glob matches (.csv or .csv.gz, as docs/data keeps them), labelled
      by the seed in its name; TARGET dashed ("none": no line)
  scripts/plot_results.py selfplay OUT.png LABEL=run_dir/metrics.csv ...   self-play: the ELO
      rating, and the loss and draw rates of the last 100 games against each kind of opponent
      (the search players' loss rates too, where a league held one)
"""
import csv
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import EngFormatter  # noqa: E402


def open_metrics(path):
    """A metrics.csv, or one gzipped (.gz) as docs/data keeps the long ones, as text."""
    if path.endswith(".gz"):
        import gzip
        return gzip.open(path, "rt", newline="")
    return open(path, newline="")


def returns_curve(path):
    """A metrics.csv's (steps, mean returns), leaving out the reports before the first episode."""
    with open_metrics(path) as f:
        rows = [r for r in csv.DictReader(f) if r["mean_return"] not in ("", "nan")]
    return [int(r["step"]) for r in rows], [float(r["mean_return"]) for r in rows]


def curve(out, runs):
    """LABEL=metrics.csv curves; a leading --target=N draws N dashed (default 475, CartPole's;
    --target=none draws none)."""
    target = "475"
    if runs and runs[0].startswith("--target="):
        target = runs[0].split("=", 1)[1]
        runs = runs[1:]
    fig, ax = plt.subplots(figsize=(7, 4))
    for run in runs:
        label, path = run.split("=", 1)
        rows = list(csv.DictReader(open(path)))
        ax.plot([int(r["step"]) for r in rows], [float(r["mean_return"]) for r in rows], label=label)
    if target != "none":
        ax.axhline(float(target), color="grey", linestyle="--", linewidth=1, label=target)
    ax.set_xlabel("environment frames")
    ax.set_ylabel("mean return (last 100 episodes)")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def wallclock(out, runs):
    """LABEL=metrics.csv: mean return against wall-clock minutes (left) and agent steps (right),
    so that agents of different speeds compare both ways (SAC against PPO)."""
    target = "none"
    if runs and runs[0].startswith("--target="):
        target = runs[0].split("=", 1)[1]
        runs = runs[1:]
    fig, (by_time, by_steps) = plt.subplots(1, 2, figsize=(11, 4))
    for run in runs:
        label, path = run.split("=", 1)
        rows = [r for r in csv.DictReader(open(path)) if r["mean_return"] not in ("", "nan")]
        returns = [float(r["mean_return"]) for r in rows]
        line, = by_time.plot([float(r["seconds"]) / 60 for r in rows], returns, label=label)
        by_steps.plot([int(r["step"]) for r in rows], returns, color=line.get_color(), label=label)
    for ax, xlabel in ((by_time, "wall-clock minutes (log)"), (by_steps, "agent steps (log)")):
        if target != "none":
            ax.axhline(float(target), color="grey", linestyle="--", linewidth=1)
        ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("mean return (last 100 episodes)")
        ax.grid(alpha=0.3)
    by_time.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


CONTINUOUS = [("pendulum", "Pendulum", -250), ("halfcheetah", "HalfCheetah", 1500),
              ("hopper", "Hopper", 2400), ("walker2d", "Walker2d", 2300), ("ant", "Ant", None)]


def continuous(out, runs_dir):
    import os
    fig, axes = plt.subplots(1, len(CONTINUOUS), figsize=(4 * len(CONTINUOUS), 3.4))
    colors = {"ppo": "tab:blue", "vtrace": "tab:orange"}
    for ax, (env, title, target) in zip(axes, CONTINUOUS):
        for agent, color in colors.items():
            for seed in (1, 2, 3):
                path = os.path.join(runs_dir, f"{agent}_{env}_{seed}", "metrics.csv")
                if not os.path.exists(path):
                    continue
                ax.plot(*returns_curve(path), color=color, alpha=0.8, linewidth=1,
                        label=f"{'PPO' if agent == 'ppo' else 'V-trace'}" if seed == 1 else None)
        if target is not None:
            ax.axhline(target, color="grey", linestyle="--", linewidth=1, label=f"target {target}")
        ax.set_title(title)
        ax.set_xlabel("agent steps")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("mean return (last 100 episodes)")
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def panels(out, specs):
    """One panel per "TITLE|TARGET|GLOB": a line per matching metrics file, labelled by the last
    number in its name (the seed); a glob that matches nothing is an error naming it."""
    import glob
    import os
    import re
    fig, axes = plt.subplots(1, len(specs), figsize=(4.4 * len(specs), 3.4), squeeze=False)
    for ax, spec in zip(axes[0], specs):
        title, target, pattern = spec.split("|", 2)
        paths = sorted(glob.glob(pattern))
        if not paths:
            sys.exit(f"plot_results.py panels: {pattern!r} matches no file")
        for path in paths:
            numbers = re.findall(r"\d+", os.path.basename(path))
            ax.plot(*returns_curve(path), linewidth=1, label=f"seed {numbers[-1]}" if numbers else path)
        if target != "none":
            ax.axhline(float(target), color="grey", linestyle="--", linewidth=1,
                       label=f"target {target}")
        ax.set_title(title)
        ax.set_xlabel("agent steps")
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))  # 100k, not 100000: labels overlap
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("mean return (last 100 episodes)")
    fig.tight_layout()
    fig.savefig(out, dpi=100)


GAMES = ["breakout", "freeway", "asterix", "seaquest", "space_invaders"]
ALGOS = {"vtrace": "V-trace", "r2d2": "R2D2"}
# Published MinAtar baselines at 5 M frames (Young & Tian 2019), as the issue quotes them.
DQN = {"breakout": 10, "freeway": 50, "asterix": 17, "seaquest": 20, "space_invaders": 43}
AC_LAMBDA = {"breakout": 17.5, "space_invaders": 185}


def minatar_runs(results, algo, game):
    import glob
    import os
    runs = []
    for path in sorted(glob.glob(os.path.join(results, "logs", f"{algo}_{game}_*", "metrics.csv"))):
        rows = list(csv.DictReader(open(path)))
        if rows:
            runs.append(([int(r["step"]) for r in rows], [float(r["mean_return"]) for r in rows]))
    return runs


def minatar(out, results):
    import numpy as np
    fig, axes = plt.subplots(1, 5, figsize=(17, 3.6))
    for ax, game in zip(axes, GAMES):
        for algo, label in ALGOS.items():
            runs = minatar_runs(results, algo, game)
            if not runs:
                continue
            # From the latest first report to the earliest last one: no run is extrapolated.
            grid = np.linspace(max(r[0][0] for r in runs), min(r[0][-1] for r in runs), 100)
            ys = np.array([np.interp(grid, r[0], r[1]) for r in runs])
            line, = ax.plot(grid, ys.mean(axis=0), label=f"{label} ({len(runs)} seeds)")
            ax.fill_between(grid, ys.min(axis=0), ys.max(axis=0), alpha=0.2, color=line.get_color())
        ax.axhline(DQN[game], color="grey", linestyle="--", linewidth=1, label="DQN (published)")
        if game in AC_LAMBDA:
            ax.axhline(AC_LAMBDA[game], color="grey", linestyle=":", linewidth=1, label="AC(λ) (published)")
        ax.set_title(game)
        ax.set_xlabel("frames")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("mean return (last 100 episodes)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def minatar_table(results):
    import os
    import statistics
    print("| game | algorithm | mean return at 5 M frames (seeds) | mean ± sd | wall time per run | frames/s | published DQN |")
    print("|---|---|---|---|---|---|---|")
    for game in GAMES:
        for algo, label in ALGOS.items():
            runs = []
            for seed in (1, 2, 3):
                path = os.path.join(results, f"{algo}_{game}_{seed}.json")
                if os.path.exists(path):
                    lines = [json.loads(x) for x in open(path) if x.startswith("{")]
                    if lines:
                        runs.append(lines[-1])
            if not runs:
                continue
            returns = [r["mean_return"] for r in runs]
            sd = statistics.stdev(returns) if len(returns) > 1 else 0.0
            seconds = statistics.mean(r["seconds"] for r in runs)
            fps = statistics.mean(r["fps"] for r in runs)
            print(f"| {game} | {label} | {', '.join(f'{x:.2f}' for x in returns)} | "
                  f"{statistics.mean(returns):.2f} ± {sd:.2f} | {seconds / 60:.1f} min | {fps:,.0f} | {DQN[game]} |")


def inference(out, path):
    lines = [json.loads(line) for line in open(path) if line.startswith("{")]
    lines = [d for d in lines if "mode" in d]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.8))
    for ax, model in zip(axes, ["minatar", "nature"]):
        for mode, label in [("seed", "central batched (SEED)"), ("impala", "per-actor batch 1 (IMPALA)")]:
            points = sorted((d["actors"], d["frames_per_s"]) for d in lines if d["model"] == model and d["mode"] == mode)
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
        ax.set_title(f"{model} network")
        ax.set_xlabel("actors")
        ax.set_ylabel("frames/s (acting loop)")
        ax.set_xscale("log", base=2)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def pipeline(out, runs):
    """Left: each run's pipeline frames/s as a share of its compute limit, per configuration
    (the mean where a file repeats a configuration). Right: the last file's cores: seconds on a
    core per thread group, and idle (its last line per configuration)."""
    labelled = []
    for arg in runs:
        label, path = arg.split("=", 1)
        lines = [json.loads(l) for l in open(path) if l.startswith("{")]
        labelled.append((label, lines))
    configs = list(dict.fromkeys(l["config"] for l in labelled[0][1] if l["bench"] == "pipeline"))
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.5))
    width = 0.8 / len(labelled)
    for i, (label, lines) in enumerate(labelled):
        ratio = {}
        for c in configs:
            runs = [l for l in lines if l["bench"] == "pipeline" and l["config"] == c]
            if runs:
                ratio[c] = {k: sum(r[k] for r in runs) / len(runs) for k in ("ratio", "fps")}
        xs = [c + i * width for c in range(len(configs))]
        values = [ratio[c]["ratio"] * 100 if c in ratio else 0 for c in configs]
        bars = left.bar(xs, values, width, label=label)
        for x, c in zip(xs, configs):
            if c in ratio:
                left.text(x, ratio[c]["ratio"] * 100 + 1, f"{ratio[c]['fps']:,.0f}/s",
                          ha="center", fontsize=7, rotation=90)
    left.set_xticks([c + width * (len(labelled) - 1) / 2 for c in range(len(configs))])
    left.set_xticklabels(configs, fontsize=8)
    left.set_ylabel("pipeline frames/s, % of the compute limit")
    left.set_ylim(0, 110)
    left.axhline(70, color="gray", linestyle="--", linewidth=0.8)
    left.legend(fontsize=8)
    label, lines = labelled[-1]
    breakdown = list({l["config"]: l for l in lines if l["bench"] == "pipeline_breakdown"}.values())
    groups = ["learner", "insert", "infer", "actor", "other"]
    bottom = [0.0] * len(breakdown)
    names = [b["config"] for b in breakdown]
    for g in groups:
        values = [b[g]["on_core_s"] / b["window_s"] if g in b else 0.0 for b in breakdown]
        right.bar(names, values, bottom=bottom, label=g)
        bottom = [a + v for a, v in zip(bottom, values)]
    idle = [b["idle_core_s"] / b["window_s"] for b in breakdown]
    right.bar(names, idle, bottom=bottom, label="idle", color="lightgray")
    right.set_ylabel(f"cores ({label})")
    right.tick_params(axis="x", labelsize=8)
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def seeds(out, results, games, settings):
    """One panel per game, one thin line per seed, one colour per LABEL=PREFIX setting."""
    import glob
    import os
    games = games.split(",")
    fig, axes = plt.subplots(1, len(games), figsize=(6 * len(games), 3.8), squeeze=False)
    for ax, game in zip(axes[0], games):
        for i, setting in enumerate(settings):
            label, prefix = setting.split("=", 1)
            pattern = os.path.join(results, "logs", f"{prefix}_{game}_*", "metrics.csv")
            paths = sorted(glob.glob(pattern))
            for j, path in enumerate(paths):
                ax.plot(*returns_curve(path), color=f"C{i}", linewidth=1, alpha=0.7,
                        label=f"{label} ({len(paths)} seeds)" if j == 0 else None)
        ax.set_title(game)
        ax.set_xlabel("frames")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel("mean return (last 100 episodes)")
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def selfplay(out, runs):
    """Self-play runs (examples/selfplay): rating; loss rates against the random player and the
    snapshots; draw rate against the latest self, each against frames; and the loss rate against
    each search player (search<DEPTH>) any run's league held."""
    panels = [("rating", "ELO rating"), ("loss_rate/random", "loss rate vs random (last 100)"),
              ("loss_rate/snapshot", "loss rate vs snapshots (last 100)"),
              ("draw_rate/latest", "draw rate vs latest self (last 100)")]
    for run in runs:
        header = next(csv.reader(open(run.split("=", 1)[1])))
        for column in header:
            name = column.split("/", 1)[-1]
            if column.startswith("loss_rate/search") and (column, f"loss rate vs {name} (last 100)") not in panels:
                panels.append((column, f"loss rate vs {name} (last 100)"))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.4))
    for i, run in enumerate(runs):
        label, path = run.split("=", 1)
        rows = list(csv.DictReader(open(path)))
        for ax, (column, title) in zip(axes, panels):
            points = [(int(r["step"]), float(r[column])) for r in rows
                      if r.get(column) not in (None, "", "nan")]
            if points:
                ax.plot(*zip(*points), color=f"C{i}", linewidth=1, label=label)
            ax.set_title(title, fontsize=9)
            ax.set_xlabel("frames (the learner's moves)")
            ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=100)


if __name__ == "__main__":
    if sys.argv[1] == "curve":
        curve(sys.argv[2], sys.argv[3:])
    elif sys.argv[1] == "wallclock":
        wallclock(sys.argv[2], sys.argv[3:])
    elif sys.argv[1] == "inference":
        inference(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "minatar":
        minatar(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "minatar-table":
        minatar_table(sys.argv[2])
    elif sys.argv[1] == "continuous":
        continuous(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "pipeline":
        pipeline(sys.argv[2], sys.argv[3:])
    elif sys.argv[1] == "seeds":
        seeds(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    elif sys.argv[1] == "panels":
        panels(sys.argv[2], sys.argv[3:])
    elif sys.argv[1] == "selfplay":
        selfplay(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
