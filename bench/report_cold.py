"""The cold path's targets (issue 14), their verdicts and the report's cold section.

Cold = build + gradients + first values in a process whose imports are done (bench/cold.py).
Targets: ratios to torch eager's first forward+backward in the same run (wall time of colds
alternated in one process; CPU time of the first cold in fresh processes beside it), µs per
forward op of building W1 (CPU time), and W4's cold peak memory growth.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

from bench.workloads import DESCRIPTIONS

REFERENCE = "torch"


@dataclass(frozen=True)
class ColdTarget:
    workload: str
    metric: str  # cold (x torch's) | build_us | grad_us | true_us (µs per forward op) | cold_mb
    limit: float

    def text(self) -> str:
        return {
            "cold": f"cold <= {self.limit:g}x torch eager's first forward+backward",
            "build_us": f"building the forward <= {self.limit:g} µs per forward op",
            "grad_us": f"building the gradients (overridden) <= {self.limit:g} µs per forward op",
            "true_us": f"building the true gradients <= {self.limit:g} µs per forward op",
            "cold_mb": f"cold peak memory growth <= {self.limit:g} MB",
        }[self.metric]

    @property
    def unit(self) -> str:
        return {"cold": "x", "cold_mb": "MB"}.get(self.metric, "µs")


COLD_TARGETS = [ColdTarget("W1", "cold", 0.7), ColdTarget("W2", "cold", 1.2),
                ColdTarget("W3-f32", "cold", 1.2), ColdTarget("W3-f64", "cold", 1.2),
                ColdTarget("W4", "cold", 0.7), ColdTarget("W1", "build_us", 3.0),
                ColdTarget("W1", "grad_us", 5.0), ColdTarget("W1", "true_us", 5.0),
                ColdTarget("W4", "cold_mb", 150.0)]
PHASE_OF = {"build_us": "forward", "grad_us": "gradients", "true_us": "true_gradients"}


def per_op_us(phases: dict, phase: str, forward_ops: int | None) -> float | None:
    """CPU µs per forward op of one phase, None where it or the op count is missing."""
    if not forward_ops or phase not in phases:
        return None
    return phases[phase]["cpu_s"] / forward_ops * 1e6


def measured(t: ColdTarget, cells: dict) -> tuple[float | None, float | None, str | None]:
    """(value, the check shown beside it or None, why not measured) of a target."""
    r = cells.get((t.workload, "gradcli"))
    if r is None or r["status"] != "ok":
        return None, None, "not run" if r is None else r.get("reason") or r["status"]
    if t.metric == "cold":
        ref = cells.get((t.workload, REFERENCE))
        if ref is None or ref["status"] != "ok":
            why = "not run" if ref is None else ref.get("reason") or ref["status"]
            return None, None, f"{REFERENCE}: {why}"
        # The value: wall time of the colds alternated in one process (the same machine for all);
        # the check: CPU time of each peer's first cold in fresh processes (the rounds' median).
        fresh = r["cold_cpu_s"] / ref["cold_cpu_s"]
        if r.get("paired_cold_s") and ref.get("paired_cold_s"):
            return r["paired_cold_s"] / ref["paired_cold_s"], fresh, None
        return fresh, None, None
    if t.metric == "cold_mb":
        return r.get("cold_mb"), None, None if r.get("cold_mb") is not None else "no memory figure"
    phase = PHASE_OF[t.metric]
    apart = [v for c in r.get("build_costs") or [] if (v := per_op_us(c, phase, r.get("forward_ops")))]
    first = per_op_us(r.get("phases", {}), phase, r.get("forward_ops"))
    if not apart:
        return first, first, None if first is not None else "no per-op build costs"
    return statistics.median(apart), first, None


def cold_verdicts(cold: list[dict] | None) -> list[dict]:
    """Every cold target with gradcli's value (paired where a ratio), whether it is met, by how much not."""
    if not cold:
        return []
    cells = {(r["workload"], r["peer"]): r for r in cold}
    out = []
    for t in COLD_TARGETS:
        if not any(w == t.workload for w, _ in cells):
            continue  # the workload was not part of this run
        row = {"workload": t.workload, "metric": t.metric, "target": t.text(), "value": None,
               "unit": t.unit}
        value, first, why = measured(t, cells)
        if value is None:
            out.append({**row, "met": None, "verdict": f"not measured ({why})"})
            continue
        met = value <= t.limit
        shown = fmt(value, t.unit)
        verdict = (f"met: {shown}" if met else
                   f"missed: {shown}, {100 * (value / t.limit - 1):.0f}% over {fmt(t.limit, t.unit)}")
        out.append({**row, "value": value, "cells": first, "met": met, "verdict": verdict})
    return out


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return ""
    if unit == "x":
        return f"{value:.2f}x"
    return f"{value:.2f} {unit}" if value < 100 else f"{value:.0f} {unit}"


def _s(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds >= 1:
        return f"{seconds:.2f} s"
    return f"{seconds * 1e3:.1f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.0f} µs"


def markdown(cold: list[dict]) -> list[str]:
    """The report's cold section: each workload's peers, then gradcli's phases."""
    if not cold:
        return []
    lines = ["## Cold path: build + gradients + first values (issue 14)", "",
             "In-process after imports: the peer's module is imported, then one cold is timed. "
             "*Alternated*: one process imports every peer below and alternates their colds "
             "(reversed order every other round, free heap returned to the OS before each) for the "
             "budget, median wall time of n; the cold targets use these. *Fresh*: each peer in its own "
             "new process, its first cold there, as a one-shot CLI runs it (median over the rounds' "
             "processes, whose order alternates), CPU and wall time, with the growth of resident "
             "memory during it (VmHWM - VmRSS before). Fresh processes see the machine's speed drift "
             "(up to 4x on memory-bound colds here); the alternated ones share it. "
             "W5's cold is one training step.", ""]
    workloads = list(dict.fromkeys(r["workload"] for r in cold))
    for w in workloads:
        rows = [r for r in cold if r["workload"] == w]
        ref = next((r for r in rows if r["peer"] == REFERENCE and r["status"] == "ok"), None)
        lines += [f"### {w} cold: {DESCRIPTIONS[w]}", "",
                  f"| peer | alternated wall | vs {REFERENCE} | fresh CPU | vs {REFERENCE} | fresh wall | "
                  "peak MB | covers |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in rows:
            if r["status"] != "ok":
                lines.append(f"| {r['peer']} | {r.get('reason') or r['status']} |||||||")
                continue
            paired = r.get("paired_cold_s")
            vs_p = (fmt(paired / ref["paired_cold_s"], "x")
                    if ref and paired and ref.get("paired_cold_s") else "")
            vs_cpu = fmt(r["cold_cpu_s"] / ref["cold_cpu_s"], "x") if ref else ""
            n = f" (n={r['paired_n']})" if paired else ""
            lines.append(f"| {r['peer']} | **{_s(paired)}**{n} | **{vs_p}** | {_s(r['cold_cpu_s'])} | "
                         f"{vs_cpu} | {_s(r['cold_s'])} | {r.get('cold_mb') or 0:.1f} | "
                         f"{r.get('covers', '')} |")
        lines.append("")
    lines += _phases(cold)
    return lines


def _phases(cold: list[dict]) -> list[str]:
    rows = [r for r in cold if r["peer"] == "gradcli" and r["status"] == "ok" and r.get("phases")]
    if not rows:
        return []
    lines = ["### gradcli's cold, phase by phase (fresh process; CPU ms, and µs per forward op where "
             "counted)", "", "| workload | phase | wall | CPU | CPU µs per forward op |",
             "| --- | --- | --- | --- | --- |"]
    for r in rows:
        for name, p in r["phases"].items():
            per = per_op_us(r["phases"], name, r.get("forward_ops"))
            lines.append(f"| {r['workload']} | {name} | {_s(p['wall_s'])} | {_s(p['cpu_s'])} | "
                         f"{fmt(per, 'µs')} |")
        costs = r.get("build_costs") or []
        for name in ("forward", "gradients", "true_gradients"):
            values = [v for c in costs if (v := per_op_us(c, name, r.get("forward_ops")))]
            if values:
                lines.append(f"| {r['workload']} | {name}, built apart (median of {len(values)}) | | | "
                             f"{fmt(statistics.median(values), 'µs')} |")
    lines.append("")
    return lines
