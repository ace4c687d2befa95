"""The cold path: a one-shot's build + gradients + first values, timed in a process whose imports are done.

Cell: one (workload, peer) in a fresh process measures one cold (wall and CPU seconds, growth of
resident memory) and checks its outputs against the floor's. Paired: one process imports every
cold peer and alternates their colds for a budget, free heap returned to the OS before each, so
all of them see the same machine; the targets use the medians of those alternated runs. (Fresh
processes apart drift: the same W2 cold took 40 ms or 190 ms of CPU from one process to the
next on the shared machine, while a second cold in one process took only ~15% less than the first.)

What a peer's cold covers: its `cold_wN` function where it has one (gradcli: the CLI's one-shot
path, phase by phase), otherwise its case's build (nothing for eager peers; trace or compile for
jax.jit and tf.function) plus the case's first run and its outputs as numpy (COVERS).
"""
from __future__ import annotations

import gc
import importlib
import importlib.util
import statistics
import time

from bench import measure
from bench.peers import FLOOR, PEERS, Absent, Clock, Cold, NotApplicable, Wrong, failure
from bench.workloads import COLD as COLD_WORKLOADS  # noqa: F401 - re-exported
from bench.workloads import cold_sizes, compare, function_name, make_data, tolerance

DEFAULT_PEERS = ["numpy", "gradcli", "torch", "autograd"]  # cheap enough to run cold on W1-W5
REFERENCE = "torch"  # the cold targets are ratios to torch eager's first forward+backward

COVERS = {
    "numpy": "the hand-written forward+backward, first call",
    "torch": "first forward (autograd recording) + torch.autograd.grad + outputs as numpy",
    "autograd": "first call of the forward+backward (autograd traces as it runs)",
    "jax": "first call, unjitted (each primitive compiled by XLA on first use)",
    "jax-jit": "jit lower().compile() + first call",
    "tf": "first GradientTape forward + tape.gradient",
    "tf-function": "tf.function trace + first call",
}
W5_COVERS = "one training step (W5 cold runs steps=1): forward, backward, clip, update"


def load(peer_name: str):
    """The peer's module; Absent if something it needs is not installed."""
    peer = PEERS[peer_name]
    missing = [m for m in peer.requires if importlib.util.find_spec(m) is None]
    if missing:
        raise Absent(f"{missing[0]} not installed")
    return importlib.import_module(f"bench.peers.{peer.module}")


def one_shot(module, peer_name: str, workload: str, d: dict) -> Cold:
    """The peer's cold for this workload, untimed here (the caller times it)."""
    name = function_name(workload)
    variant = PEERS[peer_name].variant
    special = getattr(module, f"cold_{name}", None)
    if special is not None:
        return special(d, variant)
    builder = getattr(module, name, None)
    if builder is None:
        raise NotApplicable(f"{workload} compares gradcli with the floor and torch eager only")
    clock = Clock()
    case = builder(d, variant)
    clock.mark("build")
    if case.reset:
        case.reset()
    outputs = case.to_numpy(case.run())
    clock.mark("first run")
    covers = W5_COVERS if name == "w5" else COVERS.get(peer_name, "build + first run")
    return Cold(outputs, clock.phases, covers)


def _timed(module, peer_name: str, workload: str, d: dict) -> tuple[float, float, Cold]:
    gc.collect()
    measure.trim_heap()  # alternated colds fault their memory in too, as a fresh process's does
    cpu, start = time.process_time(), time.perf_counter()
    result = one_shot(module, peer_name, workload, d)
    return time.perf_counter() - start, time.process_time() - cpu, result


def measure_cell(peer_name: str, workload: str, quick: bool) -> dict:
    """One cold of one peer in this process (the first of its kind here), checked against the floor."""
    entry: dict = {"workload": workload, "peer": peer_name}
    try:
        module = load(peer_name)
        entry["version"] = getattr(module, "VERSION", "?")
        d = make_data(workload, cold_sizes(workload, quick))
        times: dict = {}

        def run():
            times["wall"], times["cpu"], cold = _timed(module, peer_name, workload, d)
            return cold

        entry["cold_mb"], _, cold = measure.rss_growth(run)
        floor = getattr(load(FLOOR), function_name(workload))(d)
        ok, message = compare(cold.outputs, floor.to_numpy(floor.run()), tolerance(workload))
        if not ok:
            raise Wrong(message)
    except Exception as exc:  # a failing peer is a result to report (peers.failure)
        return failure(entry, exc)
    entry.update(status="ok", cold_s=times["wall"], cold_cpu_s=times["cpu"], phases=cold.phases,
                 covers=cold.covers, forward_ops=cold.forward_ops, check=message)
    costs = getattr(module, f"build_costs_{function_name(workload)}", None)
    if costs is not None:  # per-op build costs, measured apart after the cold (W1: 3 builds)
        entry["build_costs"] = [costs(d) for _ in range(3)]
    return entry


def measure_paired(peer_names: list[str], workload: str, quick: bool, budget: float, repeats: int,
                   min_rounds: int = 3) -> dict:
    """Every peer's cold, alternated in this one process (reversed order every other round)."""
    entry: dict = {"workload": workload, "paired_cold": {}, "paired_cold_cpu": {}, "paired_errors": {}}
    d = make_data(workload, cold_sizes(workload, quick))
    modules = {}
    for p in peer_names:
        try:
            modules[p] = load(p)
        except Exception as exc:
            entry["paired_errors"][p] = f"{type(exc).__name__}: {exc}"[:200]
    order, spent, rounds = list(modules), 0.0, 0
    while rounds < repeats and (rounds < min_rounds or spent < budget):
        for p in order if rounds % 2 == 0 else reversed(order):
            if p in entry["paired_errors"]:
                continue
            try:
                wall, cpu, _ = _timed(modules[p], p, workload, d)
            except Exception as exc:  # n/a, or a failure the cell reports in full
                entry["paired_errors"][p] = f"{type(exc).__name__}: {exc}"[:200]
                continue
            entry["paired_cold"].setdefault(p, []).append(wall)
            entry["paired_cold_cpu"].setdefault(p, []).append(cpu)
            spent += wall
        rounds += 1
    return entry


def pooled(entries: list[dict], paired: dict | None) -> dict:
    """One cell's rounds (fresh processes) as one entry, with the paired process's medians added."""
    first = dict(entries[0])
    bad = next((e for e in entries if e["status"] != "ok"), None)
    if bad is not None:
        return bad
    walls = [e["cold_s"] for e in entries]
    first.update(rounds=len(entries), cold_rounds_s=walls, cold_s=statistics.median(walls),
                 cold_cpu_s=statistics.median(e["cold_cpu_s"] for e in entries),
                 cold_mb=max((e["cold_mb"] for e in entries if e.get("cold_mb") is not None), default=None),
                 phases=median_phases([e["phases"] for e in entries]),
                 build_costs=[c for e in entries for c in e.get("build_costs", [])] or None)
    if paired and first["peer"] in paired.get("paired_cold", {}):
        runs = paired["paired_cold"][first["peer"]]
        first.update(paired_cold_s=statistics.median(runs), paired_n=len(runs),
                     paired_cold_runs_s=runs,
                     paired_cold_cpu_s=statistics.median(paired["paired_cold_cpu"][first["peer"]]))
    return first


def median_phases(runs: list[dict]) -> dict:
    """Per phase, the median wall and CPU seconds over runs (phases in the first run's order)."""
    return {name: {k: statistics.median(r[name][k] for r in runs if name in r) for k in ("wall_s", "cpu_s")}
            for name in runs[0]}
