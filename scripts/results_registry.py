"""The results registry's file (docs/data/registry.json): reading and checking it, and the raw
files' numbers. scripts/results.py renders and checks the documents from it. Standard library
only.
"""

import json
import os
import re

SEED_ROLES = ("tuning", "reporting")


class RegistryError(Exception):
    """A bad registry entry, a missing or unreadable raw file, or a document out of date."""


def _require(entry, key, kind, where):
    if key not in entry:
        raise RegistryError(f"{where}: '{key}' is missing")
    if not isinstance(entry[key], kind):
        raise RegistryError(f"{where}: '{key}' must be a {kind.__name__}, got {entry[key]!r}")
    return entry[key]


def validate_figure(figure, index):
    where = f"registry figure {index}"
    fid = _require(figure, "id", str, where)
    where = f"registry figure '{fid}'"
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", fid):
        raise RegistryError(f"{where}: the id may hold letters, digits, '_', '.' and '-' only")
    for key in ("title", "program", "command", "commit", "machine", "date", "metric", "metric_name",
                "group_name"):
        _require(figure, key, str, where)
    if "{seed}" not in figure["command"]:
        raise RegistryError(f"{where}: 'command' must hold {{seed}}")
    defaults = _require(figure, "at_defaults", bool, where)
    flags = figure.get("extra_flags", "")
    if not isinstance(flags, str) or (not defaults and not flags) or (defaults and flags):
        raise RegistryError(f"{where}: 'extra_flags' lists the flags beyond the program's defaults "
                            "exactly when 'at_defaults' is false")
    seeds = _require(figure, "seeds", list, where)
    if not seeds or not all(isinstance(s, int) for s in seeds) or len(set(seeds)) != len(seeds):
        raise RegistryError(f"{where}: 'seeds' must be distinct integers, got {seeds!r}")
    if not isinstance(figure.get("note", ""), str):
        raise RegistryError(f"{where}: 'note' must be a string")
    if _require(figure, "seed_role", str, where) not in SEED_ROLES:
        raise RegistryError(f"{where}: 'seed_role' must be one of {', '.join(SEED_ROLES)}")
    digits = figure.get("digits", 1)
    if not isinstance(digits, int) or not 0 <= digits <= 4:
        raise RegistryError(f"{where}: 'digits' must be an integer in [0, 4]")
    if "raw" in figure and (not isinstance(figure["raw"], str) or "{seed}" not in figure["raw"]):
        raise RegistryError(f"{where}: 'raw' (where the command's line goes) must hold {{seed}}")
    groups = _require(figure, "groups", list, where)
    if not groups:
        raise RegistryError(f"{where}: 'groups' is empty")
    for g, group in enumerate(groups):
        gwhere = f"{where}, group {g}"
        _require(group, "name", str, gwhere)
        raw = _require(group, "raw", str, gwhere)
        if "{seed}" not in raw:
            raise RegistryError(f"{gwhere}: 'raw' must hold {{seed}} (one file per seed)")
        if not isinstance(group.get("metric", figure["metric"]), str):
            raise RegistryError(f"{gwhere}: 'metric' must be a string (a JSON member, dotted)")
        if group.get("better", figure.get("better", "higher")) not in ("higher", "lower"):
            raise RegistryError(f"{gwhere}: 'better' must be 'higher' or 'lower'")
        if ("command" in group) != ("program" in group) or not isinstance(
                group.get("command", ""), str) or "{seed}" not in group.get("command", "{seed}"):
            raise RegistryError(f"{gwhere}: a group's own 'command' (holding {{seed}}) comes with "
                                "its 'program'")
        target = group.get("target")
        if target is not None and not isinstance(target, (int, float)):
            raise RegistryError(f"{gwhere}: 'target' must be a number")
        if target is not None and not isinstance(group.get("target_from"), str):
            raise RegistryError(f"{gwhere}: a target needs 'target_from' (whose figure it is)")
    return figure


def load_registry(root):
    path = os.path.join(root, "docs", "data", "registry.json")
    try:
        with open(path, encoding="utf-8") as f:
            registry = json.load(f)
    except OSError as e:
        raise RegistryError(f"{path}: {e.strerror}") from e
    except json.JSONDecodeError as e:
        raise RegistryError(f"{path}: not JSON ({e})") from e
    figures = _require(registry, "figures", list, path)
    for i, figure in enumerate(figures):
        validate_figure(figure, i)
    ids = [f["id"] for f in figures]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise RegistryError(f"{path}: figure ids used twice: {', '.join(duplicates)}")
    figures_by_id = {f["id"]: f for f in figures}
    headlines = registry.get("headlines", [])
    if not isinstance(headlines, list):
        raise RegistryError(f"{path}: 'headlines' must be a list")
    for h, headline in enumerate(headlines):
        hid = _require(headline, "id", str, f"registry headline {h}")
        where = f"registry headline '{hid}'"
        if hid in figures_by_id or [x.get("id") for x in headlines].count(hid) > 1:
            raise RegistryError(f"{where}: the id is used by another figure or headline")
        _require(headline, "details", str, where)
        rows = _require(headline, "rows", list, where)
        for r, row in enumerate(rows):
            rwhere = f"{where}, row {r}"
            for key in ("figure", "group", "task", "agent"):
                _require(row, key, str, rwhere)
            figure = figures_by_id.get(row["figure"])
            if figure is None:
                raise RegistryError(f"{rwhere}: no figure '{row['figure']}'")
            if row["group"] not in [g["name"] for g in figure["groups"]]:
                raise RegistryError(f"{rwhere}: figure '{row['figure']}' has no group "
                                    f"'{row['group']}'")
    pages = registry.get("checked_pages", [])
    if not isinstance(pages, list) or not all(isinstance(p, str) for p in pages):
        raise RegistryError(f"{path}: 'checked_pages' must be a list of paths")
    return registry


def member(record, metric):
    """`record`'s member `metric`, a dotted path into nested objects ("as_first.losses"), or
    None."""
    for key in metric.split("."):
        if not isinstance(record, dict) or key not in record:
            return None
        record = record[key]
    return record


def read_metric(root, relpath, metric):
    """The number `metric` (dotted: a member of a member) of the last JSON object line in the raw
    file that has it."""
    path = os.path.join(root, relpath)
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise RegistryError(f"{relpath}: {e.strerror}") from e
    for line in reversed(lines):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        value = member(record, metric)
        if value is not None:
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise RegistryError(f"{relpath}: '{metric}' is {value!r}, not a number")
            return float(value)
    raise RegistryError(f"{relpath}: no JSON line with '{metric}'")
