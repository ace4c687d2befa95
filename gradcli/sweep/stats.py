"""The grouped report of a sweep: per run its numbers, per group (every swept key but seed)
the mean and std of each column and the statistics of the overridden gradient over the runs.

For one output y and input x, with g_r and t_r the overridden and true gradients
of run r (R runs in the group), ḡ and t̄ their means over the runs:
    grad_mean_norm = ‖ḡ‖            grad_std = sqrt(mean_r ‖g_r − ḡ‖²)
    bias = ‖ḡ − t̄‖                 cosine_of_means = cos(ḡ, t̄)
(cos is 1 when both means are zero and 0 when one is, as a run's own cosine.)
std of a column is numpy's with ddof 1 (None for a single run). Plain data only.
"""
from __future__ import annotations

import json
import math

import numpy as np

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
        entry["error"] = doc["error"]
    return entry


def _group(params: dict, members: list, columns: list) -> dict:
    with_results = [d for d in members if d.get("summary") is not None]
    stats = {}
    for column in columns:
        values = [number(value(d, column)) for d in with_results]
        values = [v for v in values if v is not None]
        stats[column] = {"mean": float(np.mean(values)) if values else None,
                         "std": float(np.std(values, ddof=1)) if len(values) > 1 else None}
    gradients: dict = {}
    for out, name in pairs(with_results):
        gradients.setdefault(out, {})[name] = gradient_stats(
            [_grad(d, out, name, "overridden") for d in with_results],
            [_grad(d, out, name, "true") for d in with_results])
    return {"params": params, "n": len(with_results),
            "failed": sum(1 for d in members if d.get("error")),
            "columns": stats, "gradients": gradients}


def gradient_stats(overridden: list, true: list) -> dict:
    """The four statistics over the runs where both gradients exist (None where none do)."""
    both = [(g, t) for g, t in zip(overridden, true) if g is not None and t is not None]
    if not both:
        return dict.fromkeys(("grad_mean_norm", "grad_std", "bias", "cosine_of_means"))
    g = np.stack([np.ravel(g) for g, _ in both])
    t = np.stack([np.ravel(t) for _, t in both])
    with np.errstate(all="ignore"):
        g_mean, t_mean = g.mean(axis=0), t.mean(axis=0)
        spread = np.sqrt(np.mean(np.sum((g - g_mean) ** 2, axis=1)))
        return {"grad_mean_norm": float(np.linalg.norm(g_mean)), "grad_std": float(spread),
                "bias": float(np.linalg.norm(g_mean - t_mean)),
                "cosine_of_means": _cosine(g_mean, t_mean)}


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0 and nb == 0:
        return 1.0
    if na == 0 or nb == 0:
        return 0.0
    return float(np.clip(np.dot(a, b) / (na * nb), -1.0, 1.0))


def _grad(doc: dict, out: str, name: str, kind: str):
    row = ((doc.get("gradients") or {}).get(out) or {}).get(name) or {}
    grad = row.get(kind)
    if grad is None or isinstance(grad, np.ndarray):  # an array: a digest from a worker
        return grad
    return np.asarray(_floats(grad), dtype=np.float64)  # lists: a run file read back


def number(v):
    """A JSON number back as a float ("NaN", "Infinity" included); None stays None."""
    if v is None:
        return None
    return _NONFINITE[v] if isinstance(v, str) else float(v)


def _floats(v):
    if isinstance(v, list):
        return [_floats(x) for x in v]
    return number(v)
