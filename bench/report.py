"""Turn the workers' results into ratios to the floor, target verdicts and the markdown report."""
from __future__ import annotations

import datetime
import os
import platform
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench import report_cold
from bench.peers import FLOOR, PEERS
from bench.workloads import DESCRIPTIONS

ANALYSIS = Path(__file__).with_name("ANALYSIS.md")  # hand-written profile notes, kept in RESULTS.md
CPU_WARN = 0.85  # a run whose process ran less than this share of its wall time waited for a core
MIN_PEAK_MB = 0.25  # RSS growth below this is allocator noise: a smaller peak counts as this


@dataclass(frozen=True)
class Target:
    """One of the issue's targets for gradcli, as a ratio to the floor in the same run."""

    workload: str
    metric: str  # time | memory | speed | recursion | ahead (of another peer, same run)
    limit: float | None
    peer: str | None = None  # ahead: the peer gradcli must beat

    def text(self) -> str:
        if self.metric == "recursion":
            return "no recursion limit touched"
        if self.metric == "ahead":
            return f"more steps/s than {self.peer}"
        if self.metric == "speed":
            return f">= {self.limit:g}x the floor's steps/s"
        return f"<= {self.limit:g}x the floor's {'peak memory' if self.metric == 'memory' else 'time'}"


TARGETS = [Target("W1", "time", 2.5), Target("W2", "time", 1.5), Target("W2", "memory", 1.5),
           Target("W3-f32", "time", 1.15), Target("W3-f64", "time", 1.15), Target("W4", "time", 2.5),
           Target("W4", "memory", 2.0), Target("W4", "recursion", None), Target("W5", "speed", 0.85),
           Target("W6", "time", 1.5), Target("W6-help", "time", 1.2), Target("W6-list", "time", 1.2),
           Target("W6-schema", "time", 1.2), Target("W6-check", "time", 1.2),
           Target("W7", "speed", 0.9), Target("W7", "ahead", None, "torch")]


def add_ratios(results: list[dict]) -> None:
    """Each ok entry gets ratio (median time / floor's) and mem_ratio (peak / floor's)."""
    floors = {r["workload"]: r for r in results if r["peer"] == FLOOR and r["status"] == "ok"}
    for r in results:
        floor = floors.get(r["workload"])
        if r["status"] != "ok" or floor is None:
            continue
        r["ratio"] = r["median_s"] / floor["median_s"]
        if r.get("peak_mb") is not None and floor.get("peak_mb") is not None:
            r["mem_ratio"] = max(r["peak_mb"], MIN_PEAK_MB) / max(floor["peak_mb"], MIN_PEAK_MB)


def verdicts(results: list[dict], cold: list[dict] | None = None) -> list[dict]:
    """Every target with gradcli's measured value and whether it is met, and by how much not.

    With cold entries (bench/cold.py), the cold path's targets follow (bench/report_cold.py).
    A run of only some workloads (--cold, --workloads) leaves the others' targets out.
    """
    by_cell = {(r["workload"], r["peer"]): r for r in results}
    ran = {r["workload"] for r in results}
    out = []
    for t in TARGETS:
        if t.workload not in ran:
            continue
        r = by_cell.get((t.workload, "gradcli"))
        row = {"workload": t.workload, "metric": t.metric, "target": t.text(), "value": None}
        if r is None or r["status"] != "ok" or "ratio" not in r:
            why = "not run" if r is None else r.get("reason") or "no floor in this run"
            out.append({**row, "met": None, "verdict": f"not measured ({why})"})
            continue
        if t.metric == "ahead":
            out.append(_ahead(row, r, by_cell.get((t.workload, t.peer)), t.peer))
            continue
        if t.metric == "recursion":
            met = "recursion_limit" in r and "reason" not in r
            out.append({**row, "met": met, "verdict": "met: default limit kept, no RecursionError"
                        if met else f"missed: {r.get('reason')}"})
            continue
        ratio = r.get("paired_ratio") or r["ratio"]  # paired: immune to the machine's drift
        value = {"time": ratio, "speed": 1 / ratio, "memory": r.get("mem_ratio")}[t.metric]
        if t.metric != "memory":
            row["cells"] = r["ratio"] if t.metric == "time" else 1 / r["ratio"]
        if value is None:
            out.append({**row, "met": None, "verdict": "not measured (no memory figure)"})
            continue
        met = value >= t.limit if t.metric == "speed" else value <= t.limit
        if met:
            verdict = f"met: {value:.2f}x"
        elif t.metric == "speed":
            verdict = f"missed: {value:.2f}x, {100 * (1 - value / t.limit):.0f}% short of {t.limit:g}x"
        else:
            verdict = f"missed: {value:.2f}x, {100 * (value / t.limit - 1):.0f}% over {t.limit:g}x"
        out.append({**row, "value": value, "met": met, "verdict": verdict})
    return out + report_cold.cold_verdicts(cold)


def _ahead(row: dict, r: dict, other: dict | None, peer: str) -> dict:
    """gradcli's speed over another peer's, both cells from this run (1.0: as fast)."""
    if other is None or other["status"] != "ok":
        why = "not run" if other is None else other.get("reason") or other["status"]
        return {**row, "met": None, "verdict": f"not measured ({peer}: {why})"}
    value = other["median_s"] / r["median_s"]
    met = value > 1.0
    return {**row, "value": value, "met": met, "cells": value,
            "verdict": f"{'met' if met else 'missed'}: {value:.2f}x {peer}'s steps/s"}


def machine() -> dict:
    """The machine and the Python/numpy the run used."""
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
        with open("/proc/meminfo") as f:
            mem_gib = int(f.readline().split()[1]) / 2**20
    except (OSError, StopIteration):
        mem_gib = float("nan")
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{blas.get('name')} {blas.get('version', '')}".strip()
    except Exception:
        blas = "?"
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": round(mem_gib, 1),
            "os": f"{platform.system()} {platform.release()}", "python": sys.version.split()[0],
            "numpy": np.__version__, "blas": blas,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def _t(seconds) -> str:
    if seconds is None:
        return ""
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def _mb(mb) -> str:
    return "" if mb is None else f"{mb:.1f}" if mb >= 10 else f"{mb:.2f}"


def _build(r: dict) -> str:
    kept = r.get("build_mb")
    return _t(r.get("build_s")) + (f", +{_mb(kept)} MB" if kept and kept >= 0.5 else "")


def _x(v) -> str:
    return "" if v is None else f"{v:.2f}x"


def _row(r: dict) -> str:
    peer = r["peer"] + (" (floor)" if r["peer"] == FLOOR else "")
    if r["status"] != "ok":
        return f"| {peer} | {r.get('reason') or r['status']} |||||||"
    spread = f"{_t(r['min_s'])} – {_t(r['max_s'])} (n={r['n']})"
    waited = " ⚠" if r.get("cpu_fraction", 1.0) < CPU_WARN else ""
    traced = f" ({_mb(r['traced_peak_mb'])})" if r.get("traced_peak_mb") is not None else ""
    speed = f", {r['steps_per_s']:.0f} steps/s" if r.get("steps_per_s") else ""
    return (f"| {peer} | **{_t(r['median_s'])}**{speed}{waited} | {spread} | **{_x(r.get('ratio'))}** | "
            f"{_build(r)} | {_t(r.get('first_call_s'))} | {_mb(r.get('peak_mb'))}{traced} | "
            f"{_x(r.get('mem_ratio'))} |")


def markdown(doc: dict) -> str:
    m, results = doc["machine"], doc["results"]
    versions = {}
    for r in results:
        if r.get("version") and r["peer"] in PEERS:
            versions.setdefault(PEERS[r["peer"]].requires[0], r["version"])
    absent = sorted({r["peer"] for r in results
                     if r["status"] == "absent" and "not installed" in r["reason"]})
    lines = ["# gradcli benchmark results", "",
             f"Written by `{doc['command']}` on {m['date']}"
             + (" — **--quick: tiny sizes, timings not meaningful**." if doc["quick"] else "."),
             "Every number below comes from that one run on this machine.", "",
             "## Machine and versions", "",
             f"- CPU: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB; {m['os']}",
             f"- Python {m['python']}, numpy {m['numpy']} ({m['blas']})",
             "- peers: " + ", ".join(f"{k} {v}" for k, v in versions.items())
             + (f"; absent: {', '.join(absent)}" if absent else ""),
             f"- threads per peer: {doc['threads'] or 'each framework’s default'}; load average "
             f"(1 min) {doc['load'][0][0]:.2f} at the start, {doc['load'][1][0]:.2f} at the end", "",
             "## Targets: gradcli against the hand-written numpy floor and torch eager, same run", "",
             "Time ratios here are paired: gradcli's runs alternated with the floor's in one process "
             "(median over median), so both see the same machine. The cells' ratio, from separate "
             "processes as in the tables below, is beside it: where the two differ, the machine's "
             "speed drifted between the cells (this 2-core machine is shared). Cold targets (see the cold "
             "section): the ratio of wall times of colds alternated in one process, the check beside "
             "it the ratio of CPU times of each peer's first cold in fresh processes. Build costs "
             "per op: CPU time, the median of W1's builds after the cold (the check: the cold's own, "
             "the first in its process).", "",
             "| workload | target | gradcli | check | verdict |",
             "| --- | --- | --- | --- | --- |"]
    for v in doc["targets"]:
        unit = v.get("unit", "x")
        lines.append(f"| {v['workload']} | {v['target']} | {report_cold.fmt(v['value'], unit)} | "
                     f"{report_cold.fmt(v.get('cells'), unit)} | {v['verdict']} |")
    lines += ["", "## Every workload on every peer", "",
              "Median of the timed runs (bold) after warm-up; ratio = median / the floor's median. "
              "Build = graph build, trace or compile, done once and not timed in the runs. "
              "Peak MB = growth of resident memory during a run (see below; tracemalloc's peak in "
              "parentheses for numpy and gradcli). ⚠ = in the median run the "
              f"process had the CPU for less than {CPU_WARN:.0%} of the wall time: other load on the "
              "machine inflated that time.", ""]
    for w in (w for w in doc["workloads"] if any(r["workload"] == w for r in results)):
        lines += [f"### {w}: {DESCRIPTIONS[w]}", "",
                  "| peer | median | min – max | vs floor | build | first call | peak MB | mem vs floor |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        lines += [_row(r) for r in results if r["workload"] == w]
        lines.append("")
    lines += report_cold.markdown(doc.get("cold") or [])
    budget, rounds, repeats = doc.get("budget", 8.0), doc.get("rounds", 2), doc.get("repeats", 30)
    lines += [METHOD.replace("{ROUND_BUDGET}", f"{budget / rounds:g}")
              .replace("{ROUND_REPEATS}", str(max(3, repeats // rounds)))
              .replace("{PAIRED_BUDGET}", f"{budget / 2:g}")]
    missed = [p for p in doc.get("profiles", [])]
    if missed:
        lines += ["## Profiles of gradcli where a target is missed (cProfile, by own time)", ""]
        for p in missed:
            lines += [f"### {p['workload']}", "", "```", p["profile"], "```", ""]
        lines += ["A memory target's profile is of time; ANALYSIS below says where the memory goes.", ""]
    if ANALYSIS.exists() and not doc["quick"] and not doc.get("cold_only"):
        lines += [ANALYSIS.read_text().rstrip(), ""]
    return "\n".join(lines) + "\n"


METHOD = """## How it is measured

- Each workload runs on each peer in its own fresh subprocess (`bench/worker.py`), one at a time;
  the harness process only waits.
- Before timing, every peer's outputs (value and every gradient) are compared with the floor's on the
  same inputs: at most 1e-6 relative difference in float64 (2e-3 in float32), relative to each
  output's largest magnitude. A peer that differs is reported as wrong, not timed. W1's gradient
  underflows to 0 after ~1600 steps, so W1 is also checked on a 40-step chain.
- Time: wall clock (`time.perf_counter`) of one forward+backward (W5: all 200 training steps; W6:
  process start to exit). Every cell runs in two rounds, each in a fresh process, the second round
  in the reverse order of peers, so that a slow spell of the machine (other tenants, the host) is
  spread over several peers rather than spoiling one peer's cell. Per round: the first run
  (checked, and measured for memory), 2 warm-up runs, then timed runs until {ROUND_BUDGET} s are
  spent and at least 3 ran (at most {ROUND_REPEATS}); the rounds' timed runs are pooled. A peer
  whose single run takes longer than the budget gets one timed run and no second round.
  gradcli's graph (and gradients and replay schedule) is built once, outside the timed runs;
  jax.jit is compiled ahead (`lower().compile()`) and tf.function traced ahead, both reported as
  build. Unjitted jax and eager TensorFlow have no build step.
- Paired check (the targets' time ratios): one more process alternates the floor's runs and
  gradcli's (after 3 warm-up runs each) for {PAIRED_BUDGET} s, at least 5 pairs, and takes the
  ratio of the medians. The separate cells drift apart by up to 2x on this machine even when each
  process has its core to itself (cpu/wall 1.0); alternating runs share the drift.
- Peak memory, the same way for every peer, on the first run after the build: glibc is set to map
  every block of 64 KiB or more when allocated and unmap it when freed, free heap is returned to the
  OS (`malloc_trim`), the kernel's peak-RSS mark is reset (`/proc/self/clear_refs`), and peak =
  VmHWM after the run - VmRSS before it. That sees numpy's, torch's, XLA's and TensorFlow's buffers
  alike, and the pools TensorFlow and XLA keep freed memory in as they grow (a later run would not
  show them); a first run's one-time caches (jax's per-primitive executables) count too. Memory kept
  between runs (gradcli's graph, which holds every op's value from the build; a jit's executable) is
  not in it: the build column shows what the build kept (+MB). Memory ratios count a peak
  below 0.25 MiB as 0.25 MiB (growth that small is allocator noise). tracemalloc's exact
  peak is in parentheses for numpy and gradcli, whose memory is all numpy's and Python's. W6: the child
  process's peak RSS (ru_maxrss).
- Cold path (W1-W5, issue 14): build + gradients + first values, timed in a process whose imports
  are done (`bench/cold.py`). gradcli: the forward built, `gc.gradients` (the one set the workload
  needs), values by `gc.evaluate`, as `gradcli run` does; the others: their case's build (nothing
  for eager peers) plus its first run, outputs as numpy (torch: first forward + `autograd.grad`).
  Checked against the floor like the runs. Alternated: one process alternates every peer's cold
  (reversed order every other round, at least 3 rounds, free heap returned to the OS before each
  so that each cold faults its memory in as a fresh process does) for half the budget; the
  targets take the ratio of its median wall times to torch's. Fresh: each peer's first cold in a
  new process, 3 rounds (`--cold-rounds`) in alternating order, CPU and wall time and the growth
  of resident memory (W4's memory target); its CPU ratio is the check beside the value.
  W1's per-op build costs are CPU time of three more builds in the fresh process (forward,
  overridden gradients, true gradients).
- W6 and W6-*: both commands run with Python's bytecode cache on (in a private `PYTHONPYCACHEPREFIX`
  directory, filled by the first run), as on a user's machine: without it an editable install
  recompiles gradcli's source on every start, while numpy comes precompiled.
- Allocator: every worker first fixes glibc's mmap and trim thresholds at 30 and 60 MiB, the state
  any process reaches once it frees a large block. Left dynamic, whether a peer's setup happened to
  free such a block moved the floor's times by 12-40% (large temporaries mapped and faulted in
  again on every run, or reused from the heap).
- Threads: one per peer by default (`OMP_NUM_THREADS`, `OPENBLAS_NUM_THREADS`, `MKL_NUM_THREADS`,
  `TF_NUM_INTRAOP_THREADS`/`TF_NUM_INTEROP_THREADS`, `XLA_FLAGS`), the same for every peer; XLA's
  CPU runtime ignores all of them, so the jax workers are pinned to one CPU instead. On a
  2-core machine that anything else shares, multi-threaded BLAS waits on descheduled threads and
  swings by 10x between runs; `--threads 0` keeps each framework's defaults.

## How to run

    make bench                                   # everything: installs the peers, ~15 min
    .venv/bin/python bench/run.py --quick        # tiny sizes, one run each: the smoke test (< 1 min)
    .venv/bin/python bench/run.py --workloads W1,W3 --peers gradcli,torch --json out.json
    .venv/bin/python bench/run.py --from-json bench/results.json --markdown bench/RESULTS.md
    .venv/bin/python bench/run.py --cold --peers gradcli,torch   # issue 14: W1-W5 cold + W6* (~6 min)
    .venv/bin/python bench/run.py --cold --workloads W1,W4 --peers gradcli,torch --no-profile
    .venv/bin/python bench/profile_cold.py --workload W1 --workload W4 --n 20000   # where it goes
    .venv/bin/python bench/profile_cold.py --command "run {demo}" --command=--help  # -X importtime

The numpy floor always runs, since every ratio is to it. `--repeats`, `--budget` (seconds of timed
runs per cell, split over `--rounds`), `--threads` and `--no-profile` tune the run; `--no-cold` skips
the cold path. A run of some workloads reports only their targets.
"""
