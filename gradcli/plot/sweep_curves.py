"""Learning curves of a sweep (`plot sweep DIR --x step --y loss|<metric>.<part>`): a quantity
the runs' files keep per step (runs/<id>.json: train.loss, one per step; train.metrics, one
per train.eval_steps) against the training step, mean ± 1 std over the runs of each --hue
value. It gives the SweepSeries that sweep_figure draws for a results.csv column, so both
figures are drawn, and their statistics computed, by one code.

At each step the mean and std (ddof 1) are sweep/stats.column_stats of the values the runs
have there, as for a column: a non-finite value is left out and counted, and a run that
ended earlier (stopped on a non-finite loss, or given fewer steps) is in the points up to
its end only, which the legend says. A run without a result, or whose runs/<id>.json is
missing or unreadable, is left out and counted.
"""
from __future__ import annotations

import math

import numpy as np

from ..printable import printable
from ..sweep.stats import column_stats, number
from .sweep_dir import SweepDir, fail, run_doc, selected

STEP = "step"   # --x step: the training step along x (a swept key named so would win)


def quantities(docs: list) -> list:
    """The per-step quantities some run has: "loss", then "<metric>.train|test"."""
    seen: dict = {}
    for doc in docs:
        train = doc.get("train") if isinstance(doc, dict) else None
        if not isinstance(train, dict):
            continue
        if isinstance(train.get("loss"), list):
            seen["loss"] = None
        metrics = train.get("metrics")
        for metric, parts in (metrics.items() if isinstance(metrics, dict) else ()):
            for part in ("train", "test"):
                if isinstance(parts, dict) and isinstance(parts.get(part), list):
                    seen[f"{metric}.{part}"] = None
    return sorted(seen, key=lambda q: q != "loss")


def per_step(doc: dict, y: str) -> dict | None:
    """{step: value} of quantity y in one run's document, or None when the run has none."""
    train = doc.get("train")
    if not isinstance(train, dict):
        return None
    if y == "loss":
        values, steps = train.get("loss"), None
    else:
        metric, _, part = y.rpartition(".")
        parts = (train.get("metrics") or {}).get(metric)
        values = parts.get(part) if isinstance(parts, dict) else None
        steps = train.get("eval_steps")
    if not isinstance(values, list):
        return None
    steps = steps if isinstance(steps, list) else range(len(values))
    found = {}
    for step, v in zip(steps, values):
        try:
            found[int(step)] = _number(v)
        except (TypeError, ValueError):
            continue  # a step that is no integer: junk in a file that may be anyone's
    return found


def _number(v) -> float:
    try:
        got = number(v)
    except (KeyError, TypeError, ValueError):
        return math.nan  # a value, but not a number: counted as non-finite
    return math.nan if got is None else got


def curve_series(sweep: SweepDir, y: str, hue: str | None, where: dict):
    """The SweepSeries of quantity y against the step: per --hue value (the runs that take the
    --where values) the mean, std and count at each step any of its runs reached."""
    from .sweep import SweepLine, SweepSeries, bounds, pooled_keys
    rows = selected(sweep.ok_rows(), where)
    docs = [(row, run_doc(sweep.path, row.get("run", ""))) for row in rows]
    missing = sum(doc is None for _, doc in docs)
    docs = [(row, doc) for row, doc in docs if doc is not None]
    have = quantities([doc for _, doc in docs])
    if y not in have:
        from ..spec.fields import did_you_mean
        hint = did_you_mean(y, have)
        raise fail(f"--y {printable(y)!r} is not a quantity the runs of {printable(sweep.path)} "
                   "keep per step" + (f" ({hint})" if hint else "")
                   + (f"; choose from {', '.join(map(printable, have))}" if have else
                      ": no run file holds a training (train.loss)"))
    hues = sweep.values(hue) if hue is not None else [None]
    lines, nonfinite, shorter = [], 0, 0
    for h in hues:
        runs = [s for row, doc in docs if h is None or row.get(hue) == h
                for s in [per_step(doc, y)] if s]
        if not runs:
            continue  # a --hue value the --where filter leaves without runs
        steps = np.array(sorted({step for run in runs for step in run}), dtype=np.int64)
        means, stds, ns, counts = [], [], [], []
        for step in steps.tolist():
            ys = [run[step] for run in runs if step in run]
            st = column_stats(ys)
            nonfinite += st["nonfinite"]
            means.append(math.nan if st["mean"] is None else st["mean"])
            stds.append(math.nan if st["std"] is None else st["std"])
            ns.append(st["n"]), counts.append(len(ys))
        last = int(steps[-1])
        shorter += sum(max(run) < last for run in runs)
        line = SweepLine("mean" if h is None else h, np.array(means), np.array(stds),
                         np.array(ns), np.array(counts))
        line.x = steps.astype(np.float64)
        lines.append(line)
    if not lines or not any(line.n.sum() for line in lines):
        raise fail(f"nothing to draw: no run of {printable(sweep.path)} has a finite "
                   f"{printable(y)}" + (" at --where " + ", ".join(f"{k}={v}" for k, v in where.items())
                                        if where else ""))
    x_all = np.unique(np.concatenate([line.x for line in lines]))
    pooled = pooled_keys(sweep, STEP, hue, where)
    finite = np.concatenate([line.mean for line in lines])
    values = [v for _, doc in docs for s in [per_step(doc, y)] if s for v in s.values()]
    values = np.array(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    return SweepSeries(STEP, y, hue, [int(v) for v in x_all], x_all, False, lines,
                       failed=len(selected(sweep.rows, where)) - len(rows), unread=missing,
                       nonfinite=nonfinite, pooled=pooled,
                       bounds=None if y == "loss" else bounds(f"final.{y}", finite),
                       sizes={k: len(sweep.values(k)) for k in pooled},
                       observed=(float(values.min()), float(values.max())) if values.size else None,
                       fixed=dict(where), curve=True, shorter=shorter)
