"""The grouped report of a sweep: per run its numbers, per group (every swept key but seed)
the mean and std of each column and the statistics of the overridden gradient over the runs.

For one output y and input x, with g_r and t_r the overridden and true gradients
of run r (R runs in the group), ḡ and t̄ their means over the runs:
    grad_mean_norm = ‖ḡ‖            grad_std = sqrt(mean_r ‖g_r − ḡ‖²)
    bias = ‖ḡ − t̄‖                 cosine_of_means = cos(ḡ, t̄)
(cos is 1 when both means are zero and 0 when one is, as a run's own cosine.)
std of a column is numpy's with ddof 1 (None for fewer than two values). Plain data only.

Non-finite values (a diverged run's NaN or ±inf loss) are left out of a column's mean and
std and counted in its "nonfinite"; "n" counts the values averaged. A run whose overridden
or true gradient holds a non-finite element is likewise left out of the gradient statistics
and counted. This module is the one place a sweep's statistics are computed: `gradcli sweep`'s
report, `gradcli plot sweep` and `gradcli report DIR` all call column_stats / gradient_stats.
"""
from __future__ import annotations

import json
import math

import numpy as np

from .. import norms
from .failures import failure_kind
from .grid import SEED
from .results import final_loss, final_metrics, numeric_columns, pairs, value

_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def report(docs: list, keys) -> dict:
    """{"runs": [...], "groups": [...]} (spec-v2's sweep JSON) from the runs' documents."""
    docs = sorted(docs, key=lambda d: d["run"])
    group_keys = [k for k in keys if k != SEED]
    runs = [_run_entry(d) for d in docs]
    groups: dict = {}
    for doc in docs:
        params = doc.get("params", {})
        label = tuple(json.dumps(params.get(k), sort_keys=True) for k in group_keys)
        groups.setdefault(label, ({k: params.get(k) for k in group_keys}, []))[1].append(doc)
    columns = numeric_columns(docs)
    return {"runs": runs,
            "groups": [_group(params, members, columns) for params, members in groups.values()]}


def _run_entry(doc: dict) -> dict:
    entry = {"run": doc["run"], "params": doc.get("params", {}), "final_loss": final_loss(doc)}
    if isinstance(doc.get("train"), dict):
        entry["final"] = {"loss": final_loss(doc), **final_metrics(doc)}
    entry["summary"] = doc.get("summary") or {}
    if doc.get("error"):
        entry["error"], entry["failure"] = doc["error"], failure_kind(doc)
    return entry


def _group(params: dict, members: list, columns: list) -> dict:
    with_results = [d for d in members if d.get("summary") is not None]
    stats = {column: column_stats([number(value(d, column)) for d in with_results])
             for column in columns}
    gradients = group_gradients(with_results, pairs(with_results))
    return {"params": params, "n": len(with_results),
            "failed": sum(1 for d in members if d.get("error")),
            "columns": stats, "gradients": gradients}


def column_stats(values) -> dict:
    """{"mean", "std" (ddof 1), "n", "nonfinite"} of one column over a group's runs.

    None (a run without the column) is skipped; NaN and ±inf are left out of mean and std
    and counted in "nonfinite": a diverged run must neither turn its group's mean into NaN
    nor vanish unsaid. mean is None without a finite value, std None with fewer than two."""
    present = np.asarray([v for v in values if v is not None], dtype=np.float64)
    finite = present[np.isfinite(present)]
    mean, std = (norms.deviation_stats(finite) if finite.size > 1
                 else (float(finite.mean()) if finite.size else None, None))
    return {"mean": mean, "std": std,
            "n": int(finite.size), "nonfinite": int(present.size - finite.size)}


def group_gradients(docs: list, wanted=None) -> dict:
    """{output: {input: gradient_stats}} over the runs' documents, for the (output, input)
    pairs wanted (default: every pair some run has gradients of, first seen first)."""
    if wanted is None:
        wanted = _pairs(docs)
    found: dict = {}
    for out, name in wanted:
        found.setdefault(out, {})[name] = gradient_stats(
            [_grad(d, out, name, "overridden") for d in docs],
            [_grad(d, out, name, "true") for d in docs])
    return found


STATS = ("grad_mean_norm", "grad_std", "bias", "cosine_of_means")


def gradient_stats(overridden: list, true: list) -> dict:
    """The four statistics over the runs where both gradients exist and are finite, with
    "n" (runs used) and "nonfinite" (runs left out for a NaN or inf element). The four are
    None where no run is left, or when the runs' gradients differ in shape (a swept shape:
    they cannot be averaged element-wise)."""
    both = [(np.ravel(np.asarray(g, dtype=np.float64)), np.ravel(np.asarray(t, dtype=np.float64)))
            for g, t in zip(overridden, true) if g is not None and t is not None]
    finite = [(g, t) for g, t in both if np.isfinite(g).all() and np.isfinite(t).all()]
    counts = {"n": len(finite), "nonfinite": len(both) - len(finite)}
    if not finite or len({g.shape for g, _ in finite} | {t.shape for _, t in finite}) != 1:
        return {**dict.fromkeys(STATS), **counts}
    g = np.stack([g for g, _ in finite])
    t = np.stack([t for _, t in finite])
    # each step overflow-safe (norms.py): runs near 1e308 sum past float64's range
    g_mean, t_mean = norms.mean_rows(g), norms.mean_rows(t)
    spread, p = norms.scaled_difference(g, g_mean)
    gap, q = norms.scaled_difference(g_mean, t_mean)
    with np.errstate(all="ignore"):
        return {"grad_mean_norm": norms.norm(g_mean), "grad_std": norms.rms_norm(spread) * p,
                "bias": norms.norm(gap) * q,
                "cosine_of_means": norms.cosine(g_mean, t_mean), **counts}


def zero_true(docs, seen: dict | None = None) -> list[str]:
    """The "output/input" pairs whose true gradient is 0 in every element of every run that
    has a finite one (at least one run has): comparisons with it are degenerate (a zero
    estimate gets cosine 1, sign agreement 1 and bias 0, any other cosine 0 and bias ‖ḡ‖),
    which the reports say rather than leave a zero-gradient estimator looking best.
    `seen` ({pair: every finite true gradient so far was 0}) carries the answer across calls,
    for runs read group by group."""
    seen = {} if seen is None else seen
    for doc in docs:
        for out, name in _pairs([doc]):
            true = _grad(doc, out, name, "true")
            if true is not None and np.isfinite(true).all():
                pair = f"{out}/{name}"
                seen[pair] = seen.get(pair, True) and not np.any(true)
    return [pair for pair, zero in seen.items() if zero]


def _pairs(docs: list) -> list:
    """Every (output, input) pair some run has gradients of, first seen first."""
    seen: dict = {}
    for doc in docs:
        grads = doc.get("gradients")
        for out, per in (grads.items() if isinstance(grads, dict) else ()):
            for name in (per if isinstance(per, dict) else ()):
                seen[(out, name)] = None
    return list(seen)


def _grad(doc: dict, out: str, name: str, kind: str):
    grads = doc.get("gradients")
    per = grads.get(out) if isinstance(grads, dict) else None
    row = per.get(name) if isinstance(per, dict) else None
    grad = row.get(kind) if isinstance(row, dict) else None
    if grad is None or isinstance(grad, np.ndarray):  # an array: a digest from a worker
        return grad
    try:  # lists: a run file read back (a DIR may be anyone's: junk is no gradient)
        return np.asarray(_floats(grad), dtype=np.float64)
    except (TypeError, ValueError, KeyError):
        return None


def number(v):
    """A JSON number back as a float ("NaN", "Infinity" included); None stays None."""
    if v is None:
        return None
    return _NONFINITE[v] if isinstance(v, str) else float(v)


def _floats(v):
    if isinstance(v, list):
        return [_floats(x) for x in v]
    return number(v)
