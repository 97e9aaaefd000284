#!/usr/bin/env python3
"""The results registry: every published learning figure, regenerated from its raw data.

docs/data/registry.json lists the figures. Each entry says how its runs were made (the program,
the command, the commit, the machine, the seeds and whether they were tuning or reporting seeds),
where the raw lines are (one file per group and seed, the program's final JSON line), which
member of that line is the figure, and which documents show it. A document shows a figure as a
generated block:

    <!-- results:ID -->
    ... the table this tool writes ...
    <!-- /results:ID -->

    python3 scripts/results.py render      rewrites every block from the raw files
    python3 scripts/results.py check       fails when a block differs from what its raw files
                                           give, names an unknown figure, or a figure has no
                                           block; or when a checked page (the registry's
                                           "checked_pages") has a table of figures outside a
                                           block (a table right after a line
                                           '<!-- no-figures -->' holds none: a layout, options)
    python3 scripts/results.py show ID     prints one figure's table
    python3 scripts/results.py run ID [--build build/release] [--jobs N] [--force]
                                           makes the figure's missing raw files by running its
                                           command for each group and seed (results_run.py)

Statistics as Agarwal et al. (2021, "rliable") report them: every seed, the mean, and the
interquartile mean (the mean of the middle half of the seeds, 25% trimmed from each end as
scipy.stats.trim_mean cuts it) with a 95% percentile bootstrap interval over the seeds (10,000
resamples from a fixed seed, so the text is the same on every machine). With fewer than 5 seeds no
interval is given. A target is "met" when the interval's lower bound reaches it, "level" when it
lies inside the interval, "below" when the interval is under it.

Standard library only.
"""

import argparse
import os
import random
import re
import sys

from results_registry import (  # noqa: F401 (re-exported for the tests and results_run)
    SEED_ROLES, RegistryError, load_registry, member, read_metric, validate_figure)

MIN_SEEDS_FOR_INTERVAL = 5
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 20211201  # rliable's year and month: any fixed value keeps the text stable
BLOCK = re.compile(
    r"<!-- results:(?P<id>[A-Za-z0-9_.-]+) -->\n(?P<body>.*?)<!-- /results:(?P=id) -->", re.S)
ANY_MARKER = re.compile(r"<!-- /?results:([^ ]*) -->")
NO_FIGURES = "<!-- no-figures -->"


# ---- statistics ----

def mean(values):
    return sum(values) / len(values)


def iqm(values):
    """The interquartile mean: scipy.stats.trim_mean(values, 0.25)."""
    ordered = sorted(values)
    cut = int(0.25 * len(ordered))
    middle = ordered[cut:len(ordered) - cut]
    return sum(middle) / len(middle)


def bootstrap_interval(values, statistic=iqm, resamples=BOOTSTRAP_RESAMPLES, seed=BOOTSTRAP_SEED,
                       level=0.95):
    """The percentile bootstrap interval of `statistic` over `values` (resampled with
    replacement), from a generator seeded with `seed`."""
    rng = random.Random(seed)
    n = len(values)
    estimates = sorted(statistic(rng.choices(values, k=n)) for _ in range(resamples))
    tail = (1.0 - level) / 2.0
    lo = estimates[int(tail * (resamples - 1))]
    hi = estimates[int((1.0 - tail) * (resamples - 1) + 0.5)]
    return lo, hi


def verdict(target, interval, lower_is_better=False):
    """'met', 'level' or 'below' for a target against an interval (None: no interval). Where lower
    is better (losses) the interval's upper bound must reach down to the target, and a miss is
    'above'."""
    if target is None or interval is None:
        return None
    lo, hi = interval
    if lower_is_better:
        return "met" if hi <= target else "level" if lo <= target else "above"
    if lo >= target:
        return "met"
    if hi >= target:
        return "level"
    return "below"


# ---- the tables ----

def seed_list(seeds):
    """1, 2, 3, 5 -> '1-3, 5'."""
    out, run = [], []
    for s in sorted(seeds) + [None]:
        if run and (s is None or s != run[-1] + 1):
            out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
            run = []
        if s is not None:
            run.append(s)
    return ", ".join(out)


def summarize(root, figure, group):
    """One group's figures: its raw files and values (in the figure's seed order), mean, IQM,
    interval (None under MIN_SEEDS_FOR_INTERVAL seeds) and verdict against its target."""
    raws = [group["raw"].replace("{seed}", str(s)) for s in figure["seeds"]]
    values = [read_metric(root, raw, group.get("metric", figure["metric"])) for raw in raws]
    interval = bootstrap_interval(values) if len(values) >= MIN_SEEDS_FOR_INTERVAL else None
    target = group.get("target")
    v = verdict(target, interval, group.get("better", figure.get("better")) == "lower")
    if target is not None and v is None:
        v = "unconfirmed"
    return {"raws": raws, "values": values, "mean": mean(values), "iqm": iqm(values),
            "interval": interval, "target": target, "verdict": v or ""}


def formatter(figure):
    digits = figure.get("digits", 1)
    return lambda x: f"{x:,.{digits}f}"


def linker(root, doc_path):
    here = os.path.dirname(os.path.join(root, doc_path))
    return lambda relpath: os.path.relpath(os.path.join(root, relpath), here)


def iqm_cell(summary, number):
    center = number(summary["iqm"])
    interval = summary["interval"]
    if interval is None:
        n = len(summary["values"])
        return f"{center} (no interval: {n} seed{'' if n == 1 else 's'})"
    return f"{center} [{number(interval[0])}, {number(interval[1])}]"


def target_cell(group, figure=None):
    target = group.get("target")
    if target is None:
        return ""
    lower = group.get("better", (figure or {}).get("better")) == "lower"
    return f"{'at most ' if lower else ''}{target:,g} ({group['target_from']})"


def shown_command(command):
    """A command as the captions show it: the seed S, the run's directory RUN."""
    return command.replace("{seed}", "S").replace("{workdir}", "RUN")


def metric_words(figure):
    """Which member of which JSON line each row shows."""
    own = [g for g in figure["groups"] if "metric" in g or "command" in g]
    if not own:
        return f"`{figure['metric']}` of the run's final JSON line"
    by_command = {}
    for g in figure["groups"]:
        command = shown_command(g.get("command", figure["command"]))
        by_command.setdefault(command, []).append(f"`{g.get('metric', figure['metric'])}`")
    parts = "; ".join(f"`{command}` gives {', '.join(metrics)}"
                      for command, metrics in by_command.items())
    return f"a member of a final JSON line, the rows in order: {parts}"


def render_figure(root, figure, doc_path):
    """The markdown block of `figure` as shown in the document at `doc_path` (links relative to
    it)."""
    number, link = formatter(figure), linker(root, doc_path)
    seeds = figure["seeds"]
    header = [figure["group_name"]] + [f"seed {s}" for s in seeds] + ["mean", "IQM [95% CI]",
                                                                      "target", "verdict"]
    rows = []
    notes = set()
    for group in figure["groups"]:
        g = summarize(root, figure, group)
        cells = [f"[{number(v)}]({link(raw)})" for v, raw in zip(g["values"], g["raws"])]
        if g["verdict"] == "unconfirmed":
            notes.add("unconfirmed")
        rows.append([group["name"]] + cells +
                    [number(g["mean"]), iqm_cell(g, number), target_cell(group, figure),
                     g["verdict"]])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    command = shown_command(figure["command"]).replace(
        "{group}", figure["group_name"].upper().replace(" ", "_"))
    defaults = "at the program's defaults" if figure["at_defaults"] else \
        f"with flags beyond the defaults: `{figure['extra_flags']}`"
    one = len(seeds) == 1
    role = (f"{'a reporting seed' if one else 'reporting seeds'} (not looked at while the "
            "settings were chosen)") if figure["seed_role"] == "reporting" else \
        f"{'a tuning seed' if one else 'tuning seeds'} (the settings were chosen on " \
        f"{'it' if one else 'them'})"
    caption = (f"{figure['title']}: `{command}` {defaults}, commit {figure['commit']}, "
               f"{figure['machine']}, {figure['date']}. Seed{'' if one else 's'} "
               f"{seed_list(seeds)}: {role}. "
               f"Each cell: {figure['metric_name']} ({metric_words(figure)}), linked to its raw "
               "file. IQM: the interquartile mean, with a 95% bootstrap interval over the seeds "
               f"from {MIN_SEEDS_FOR_INTERVAL} seeds up.")
    if figure.get("note"):
        caption += " " + figure["note"]
    if "unconfirmed" in notes:
        caption += (f" \"unconfirmed\": fewer than {MIN_SEEDS_FOR_INTERVAL} seeds, so no interval "
                    "to judge the target by.")
    caption += " Generated by `scripts/results.py` from `docs/data/registry.json`."
    return "\n".join(lines) + "\n\n" + caption + "\n"


def render_headline(root, headline, figures, doc_path):
    """A headline table: one row per (figure, group) the headline names, with its IQM, every
    seed linked to its raw file, its target and verdict."""
    link = linker(root, doc_path)
    lines = ["| task | agent | IQM [95% CI] | seeds, each linked to its raw line | target "
             "| verdict |", "|---|---|---|---|---|---|"]
    for row in headline["rows"]:
        figure = figures[row["figure"]]
        group = next(g for g in figure["groups"] if g["name"] == row["group"])
        number = formatter(figure)
        g = summarize(root, figure, group)
        seeds = ", ".join(f"[{number(v)}]({link(raw)})" for v, raw in zip(g["values"], g["raws"]))
        role = f"{seed_list(figure['seeds'])}, {figure['seed_role']}"
        lines.append(f"| {row['task']} | {row['agent']} | {iqm_cell(g, number)} | {role}: "
                     f"{seeds} | {target_cell(group)} | {g['verdict']} |")
    caption = (f"Each row is a figure of the registry (`docs/data/registry.json`; the full tables, "
               f"with their commands, commits and machines: {headline['details']}). Tuning seeds: "
               "the settings were chosen on them; reporting seeds were never looked at while "
               f"choosing. No interval under {MIN_SEEDS_FOR_INTERVAL} seeds, and then no verdict "
               "(\"unconfirmed\"). Generated by `scripts/results.py`.")
    return "\n".join(lines) + "\n\n" + caption + "\n"


# ---- the documents ----

def documents(root):
    """README.md and every Markdown file under docs/, as paths relative to root."""
    paths = ["README.md"]
    for base, _, files in os.walk(os.path.join(root, "docs")):
        paths += [os.path.relpath(os.path.join(base, f), root) for f in files if f.endswith(".md")]
    return sorted(p for p in paths if os.path.exists(os.path.join(root, p)))


def rendered(root, registry, doc_path, text):
    """`text` with every block regenerated, and the ids of the blocks it holds."""
    figures = {f["id"]: f for f in registry["figures"]}
    headlines = {h["id"]: h for h in registry.get("headlines", [])}
    seen = []

    def replace(match):
        fid = match.group("id")
        if fid in figures:
            body = render_figure(root, figures[fid], doc_path)
        elif fid in headlines:
            body = render_headline(root, headlines[fid], figures, doc_path)
        else:
            raise RegistryError(
                f"{doc_path}: a block names '{fid}', which the registry does not list")
        seen.append(fid)
        return f"<!-- results:{fid} -->\n{body}<!-- /results:{fid} -->"

    out = BLOCK.sub(replace, text)
    opened = [m.group(1) for m in ANY_MARKER.finditer(text)]
    if len(opened) != 2 * len(seen):
        raise RegistryError(f"{doc_path}: a results marker without its pair (each block is "
                            "'<!-- results:ID -->' ... '<!-- /results:ID -->')")
    return out, seen


def figure_tables_outside_blocks(text):
    """Line numbers of table rows that hold a number and lie outside every generated block, but
    for the tables right after a line '<!-- no-figures -->' (a layout or a list of options)."""
    outside = BLOCK.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    rows, exempt = [], False
    for i, line in enumerate(outside.splitlines()):
        is_row = line.lstrip().startswith("|")
        if line.strip() == NO_FIGURES:
            exempt = True
            continue
        if exempt and is_row:
            continue
        exempt = False
        if is_row and re.search(r"\d", line) and not re.fullmatch(r"\s*\|[\s|:-]*", line):
            rows.append(i + 1)
    return rows


def check(root):
    registry = load_registry(root)
    problems, shown = [], set()
    for doc in documents(root):
        with open(os.path.join(root, doc), encoding="utf-8") as f:
            text = f.read()
        shown.update(m.group("id") for m in BLOCK.finditer(text))
        try:
            new, _ = rendered(root, registry, doc, text)
        except RegistryError as e:
            problems.append(str(e))
            continue
        if new != text:
            old_blocks = {m.group("id"): m.group("body") for m in BLOCK.finditer(text)}
            for m in BLOCK.finditer(new):
                if old_blocks.get(m.group("id")) != m.group("body"):
                    problems.append(f"{doc}: the block '{m.group('id')}' differs from what its raw "
                                    "files give (python3 scripts/results.py render rewrites it)")
        if doc in registry.get("checked_pages", []):
            for line in figure_tables_outside_blocks(text):
                problems.append(f"{doc}:{line}: a table of figures outside a results block (every "
                                "figure on this page comes from docs/data/registry.json)")
    for figure in registry["figures"] + registry.get("headlines", []):
        if figure["id"] not in shown:
            problems.append(f"registry figure '{figure['id']}' is shown in no document")
    return problems


def render(root):
    registry = load_registry(root)
    changed = []
    for doc in documents(root):
        path = os.path.join(root, doc)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        new, _ = rendered(root, registry, doc, text)
        if new != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
            changed.append(doc)
    return changed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["render", "check", "show", "run"])
    parser.add_argument("id", nargs="?", help="the figure (show, run)")
    parser.add_argument("--build", default="build/release",
                        help="run: the build tree whose examples/ or bench/ has the program")
    parser.add_argument("--jobs", type=int, default=1, help="run: runs at once")
    parser.add_argument("--force", action="store_true",
                        help="run: make every raw file again, not only the missing ones")
    parser.add_argument("--logs", help="run: where each run's progress goes (default: a new "
                        "temporary folder)")
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--root", default=os.path.join(here, ".."),
                        help="the repository (default: this script's)")
    args = parser.parse_args(argv)
    root = os.path.abspath(args.root)
    try:
        if args.command == "render":
            for doc in render(root):
                print(f"results: rewrote {doc}")
            return 0
        if args.command in ("show", "run"):
            figures = {f["id"]: f for f in load_registry(root)["figures"]}
            if args.id not in figures:
                known = ", ".join(sorted(figures))
                print(f"results: no figure '{args.id}' (the registry has: {known})",
                      file=sys.stderr)
                return 2
            if args.command == "run":
                import results_run  # noqa: E402 (only this command needs it)
                if args.jobs < 1:
                    print("results: --jobs must be at least 1", file=sys.stderr)
                    return 2
                try:
                    failed = results_run.run(root, figures[args.id], os.path.abspath(args.build),
                                             args.jobs, args.force, args.logs)
                except (FileNotFoundError, ValueError) as e:
                    print(f"results: {e}", file=sys.stderr)
                    return 1
                if failed == 0:
                    print("results: done; python3 scripts/results.py render writes the tables")
                return 1 if failed else 0
            print(render_figure(root, figures[args.id], "README.md"), end="")
            return 0
        problems = check(root)
        for p in problems:
            print(f"results: {p}", file=sys.stderr)
        if not problems:
            print("results: every block matches its raw files")
        return 1 if problems else 0
    except RegistryError as e:
        print(f"results: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
