#!/usr/bin/python3
"""Draws the figures in docs/ from seedrl's own outputs (metrics.csv files, benchmark JSON lines).

Documentation tooling only: seedrl never needs Python to build, run or test. Needs matplotlib
(Debian: python3-matplotlib).

  scripts/plot_results.py curve OUT.png LABEL=run_dir/metrics.csv ...   learning curves
  scripts/plot_results.py inference OUT.png bench_inference_output.txt  frames/s vs actors
"""
import csv
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def curve(out, runs):
    fig, ax = plt.subplots(figsize=(7, 4))
    for run in runs:
        label, path = run.split("=", 1)
        rows = list(csv.DictReader(open(path)))
        ax.plot([int(r["step"]) for r in rows], [float(r["mean_return"]) for r in rows], label=label)
    ax.axhline(475, color="grey", linestyle="--", linewidth=1, label="475")
    ax.set_xlabel("environment frames")
    ax.set_ylabel("mean return (last 100 episodes)")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


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


if __name__ == "__main__":
    if sys.argv[1] == "curve":
        curve(sys.argv[2], sys.argv[3:])
    elif sys.argv[1] == "inference":
        inference(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
