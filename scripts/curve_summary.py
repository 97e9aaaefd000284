#!/usr/bin/env python3
"""What a learning curve did, read from a run's metrics.csv: one JSON line per file.

Documentation tooling only (standard library). docs/results.md reads the SAC ablation's curves
with it: how long a seed sat on a plateau, how far it fell from its best, and where the
temperature and the entropy stood when it did.

  scripts/curve_summary.py [--metric mean_return] [--reach 500,1000,2000]
                           [--at alpha,entropy,mean_q] metrics.csv ...

Each line: the file; rows (the rows with a finite metric); final (the last finite value) and its
step; peak and its step; max_drop, the largest fall from a running peak to a later value, with
drop_from and drop_to (the steps of that peak and of the low after it; 0 and null where the curve
never fell); reach, the first step at which the metric was at least each threshold (null where it
never was); and at_peak, at_high, at_low and at_end, the --at columns on the rows of the peak,
of the start of the largest fall and of the low after it (null where it never fell), and of the
last row. A file without the metric's column, or with no
finite value of it, is an error naming the file; the other files are still read. A file whose
name ends in .gz is read through gzip (docs/data keeps long metrics that way).
"""

import csv
import gzip
import json
import math
import sys
import zlib


def finite(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def max_drawdown(values):
    """The largest fall from a running maximum to a later value: (fall, peak index, low index).

    (0.0, None, None) when the values never fall."""
    best = None
    best_i = None
    out = (0.0, None, None)
    for i, v in enumerate(values):
        if best is None or v > best:
            best, best_i = v, i
        elif best - v > out[0]:
            out = (best - v, best_i, i)
    return out


def first_reach(steps, values, threshold):
    for s, v in zip(steps, values):
        if v >= threshold:
            return s
    return None


def summarise(rows, metric, thresholds, columns):
    kept = [(r, finite(r.get(metric))) for r in rows]
    kept = [(r, v) for r, v in kept if v is not None]
    if not kept:
        raise ValueError(f"no finite value of '{metric}'")
    steps = [int(float(r["step"])) for r, _ in kept]
    values = [v for _, v in kept]

    def at(i):
        return {c: finite(kept[i][0].get(c)) for c in columns}

    peak_i = max(range(len(values)), key=lambda i: (values[i], -i))
    fall, hi, lo = max_drawdown(values)
    out = {
        "rows": len(values),
        "final": values[-1],
        "final_step": steps[-1],
        "peak": values[peak_i],
        "peak_step": steps[peak_i],
        "max_drop": fall,
        "drop_from": steps[hi] if hi is not None else None,
        "drop_to": steps[lo] if lo is not None else None,
        "reach": {f"{t:g}": first_reach(steps, values, t) for t in thresholds},
    }
    if columns:
        out["at_peak"] = at(peak_i)
        out["at_high"] = at(hi) if hi is not None else None
        out["at_low"] = at(lo) if lo is not None else None
        out["at_end"] = at(len(values) - 1)
    return out


def main(argv):
    metric = "mean_return"
    thresholds = [500.0, 1000.0, 2000.0]
    columns = ["alpha", "entropy", "mean_q"]
    files = []
    for arg in argv:
        if arg.startswith("--metric="):
            metric = arg.split("=", 1)[1]
        elif arg.startswith("--reach="):
            thresholds = [float(t) for t in arg.split("=", 1)[1].split(",") if t]
        elif arg.startswith("--at="):
            columns = [c for c in arg.split("=", 1)[1].split(",") if c]
        elif arg in ("-h", "--help"):
            print(__doc__)
            return 0
        elif arg.startswith("--"):
            print(f"curve_summary.py: unknown option {arg} (see --help)", file=sys.stderr)
            return 2
        else:
            files.append(arg)
    if not files:
        print("curve_summary.py: no metrics.csv given (see --help)", file=sys.stderr)
        return 2
    status = 0
    for path in files:
        try:
            opener = gzip.open if path.endswith(".gz") else open
            with opener(path, "rt", newline="") as fh:
                reader = csv.DictReader(fh)
                if metric not in (reader.fieldnames or []) or "step" not in reader.fieldnames:
                    raise ValueError(f"no '{metric}' or 'step' column")
                line = {"file": path, **summarise(list(reader), metric, thresholds, columns)}
        except (OSError, EOFError, ValueError, zlib.error) as e:
            print(f"curve_summary.py: {path}: {e}", file=sys.stderr)
            status = 1
            continue
        print(json.dumps(line))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
