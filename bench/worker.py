"""Run some workloads on one peer, in this fresh process, and write the measurements as JSON.

    python bench/worker.py --peer torch --workloads W1,W2 --out cell.json [--quick] [--profile]
    python bench/worker.py --peer gradcli --workloads W1 --out cold.json --cold [--cold-with numpy,torch]

Per workload: build the case (timed: graph build, trace or compile), run it
once (its peak memory measured) and check its outputs against the numpy
floor's, warm up, time repeated runs, then take a tracemalloc peak for the
peers whose memory is all numpy's. --cold: one cold (build + gradients + first
values) instead, checked; --cold-with: the peers' colds alternated (bench/cold.py).
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import statistics
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script (python bench/worker.py): make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import cold, measure  # noqa: E402
from bench.peers import FLOOR, PEERS, Wrong, failure  # noqa: E402
from bench.workloads import (  # noqa: E402
    EXTRA_CHECKS,
    SIZES,
    STARTUP,  # noqa: E402
    compare,
    function_name,
    make_data,
    tolerance,
)

TRACED = {"numpy", "gradcli"}  # all their memory is visible to tracemalloc (a cross-check)


def _check(builder, floor, workload, d, variant) -> str:
    case = builder(d, variant)
    if case.reset:
        case.reset()
    got = case.to_numpy(case.run())
    want = floor.to_numpy(floor.run())
    ok, message = compare(got, want, tolerance(workload))
    if not ok:
        raise Wrong(message)
    return message


def measure_cell(peer_name: str, workload: str, args) -> dict:
    """One workload on one peer: status, timings, build time, peak memory."""
    peer = PEERS[peer_name]
    entry: dict = {"workload": workload, "peer": peer_name}
    missing = [m for m in peer.requires if importlib.util.find_spec(m) is None]
    if missing:
        return {**entry, "status": "absent", "reason": f"absent: {missing[0]} not installed"}
    try:
        module = importlib.import_module(f"bench.peers.{peer.module}")
    except Exception as exc:  # installed but broken: reported, like any failure of a peer
        return {**entry, "status": "error", "reason": f"error: import failed: {type(exc).__name__}: {exc}"}
    floor_module = importlib.import_module(f"bench.peers.{PEERS[FLOOR].module}")
    entry["version"] = module.VERSION
    name = function_name(workload)
    builder = getattr(module, name, None)
    if builder is None:
        reason = ("W6 times gradcli's own CLI" if name == "w6"
                  else f"{workload} compares gradcli with the floor and torch eager only")
        return {**entry, "status": "n/a", "reason": reason}
    sizes = SIZES[workload]["quick" if args.quick else "full"]
    limit = sys.getrecursionlimit()
    try:
        entry.update(_measure(builder, getattr(floor_module, name), peer_name, workload, sizes, args))
    except Exception as exc:  # a failing peer is a result to report (peers.failure)
        return failure(entry, exc)
    entry["recursion_limit"] = sys.getrecursionlimit()
    if sys.getrecursionlimit() != limit:
        entry["reason"] = f"raised the recursion limit from {limit} to {sys.getrecursionlimit()}"
    return entry


def _measure(builder, floor_builder, peer_name, workload, sizes, args) -> dict:
    variant = PEERS[peer_name].variant
    out: dict = {"status": "ok"}
    for extra in EXTRA_CHECKS.get(workload, []):
        d = make_data(workload, {**sizes, **extra})
        _check(builder, floor_builder(d), workload, d, variant)
    d = make_data(workload, sizes)
    out["build_mb"], out["build_s"], case = measure.rss_growth(lambda: builder(d, variant))
    if case.reset:
        case.reset()
    # The first run is the memory run and the checked run.
    peak_mb, out["first_call_s"], got = measure.first_run_memory(case.run)
    got = case.to_numpy(got)
    if peer_name != FLOOR and workload not in STARTUP:
        ok, message = compare(got, floor_builder(d).to_numpy(floor_builder(d).run()), tolerance(workload))
        if not ok:
            raise Wrong(message)
        out["check"] = message
    del got
    if case.child_peak_mb:
        peak_mb, out["memory_method"] = case.child_peak_mb(), "child process ru_maxrss"
    out["peak_mb"] = peak_mb
    out.setdefault("memory_method", "rss growth of the first run")
    # The first warm-up run is timed: one longer than the budget is the only timed run.
    cpu: list[float] = []
    times = measure.time_runs(case, 1, 0.0, 1, cpu)
    if not args.single and times[0] <= args.budget:
        measure.time_runs(case, args.warmup - 1, 0.0, args.warmup - 1)
        cpu.clear()
        times = measure.time_runs(case, args.repeats, args.budget, args.min_runs, cpu)
    if not case.child_peak_mb:  # a child's CPU time is not this process's
        out["cpu_fraction"] = statistics.median(c / t for c, t in zip(cpu, times, strict=True))
    if peer_name in TRACED and workload not in STARTUP:
        out["traced_peak_mb"] = measure.traced_peak_mb(case)
    out.update(n=len(times), times_s=times, median_s=statistics.median(times),
               min_s=min(times), max_s=max(times), notes=case.notes)
    if "steps" in d:  # W5: given; W7: epochs x batches of its data
        out["steps_per_s"] = d["steps"] / out["median_s"]
    if args.profile:
        out["profile"] = case.profile() if case.profile else measure.profile(case)
    return out


def measure_paired(peer_name: str, workload: str, args) -> dict:
    """The floor's and the peer's runs alternated in this one process, for args.budget seconds.

    Separate processes see the machine's speed drift between them (other tenants, the host);
    alternating runs see the same drift, so this ratio of medians checks the cells' ratio.
    """
    entry: dict = {"workload": workload, "peer": peer_name}
    name = function_name(workload)
    try:
        d = make_data(workload, SIZES[workload]["quick" if args.quick else "full"])
        cases = [getattr(importlib.import_module(f"bench.peers.{PEERS[p].module}"), name)(d, PEERS[p].variant)
                 for p in (FLOOR, peer_name)]
        times: tuple[list, list] = ([], [])
        for case in cases:
            measure.time_runs(case, 1 + args.warmup, 0.0, 1 + args.warmup)
        while len(times[0]) < args.repeats and (len(times[0]) < 5 or sum(times[0] + times[1]) < args.budget):
            for case, ts in zip(cases, times, strict=True):
                ts.append(measure.time_runs(case, 1, 0.0, 1)[0])
    except Exception as exc:  # reported beside the cells, never instead of them
        return {**entry, "paired_error": f"{type(exc).__name__}: {exc}"[:300]}
    return {**entry, "paired_ratio": statistics.median(times[1]) / statistics.median(times[0]),
            "paired_n": len(times[0])}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", required=True, choices=list(PEERS))
    parser.add_argument("--workloads", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--min-runs", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--budget", type=float, default=10.0, help="seconds of timed runs per cell")
    parser.add_argument("--single", action="store_true", help="one timed run, also the memory run")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--paired", action="store_true", help="alternate the floor's runs and the peer's")
    parser.add_argument("--cold", action="store_true", help="the cold path: build + gradients + first values")
    parser.add_argument("--cold-with", help="--cold, alternated with these peers' colds in this process")
    args = parser.parse_args(argv)
    measure.settle_allocator()
    results = []
    for workload in args.workloads.split(","):
        if args.cold_with:
            peers = [args.peer, *(p for p in args.cold_with.split(",") if p != args.peer)]
            results.append(cold.measure_paired(peers, workload, args.quick, args.budget, args.repeats))
        elif args.cold:
            results.append(cold.measure_cell(args.peer, workload, args.quick))
        else:
            results.append((measure_paired if args.paired else measure_cell)(args.peer, workload, args))
        with open(args.out, "w") as f:  # written after each cell, so a crash keeps the rest
            json.dump(results, f)


if __name__ == "__main__":
    main()
