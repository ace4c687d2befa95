"""gradcli's benchmark: every workload on every peer, each in its own subprocess, against the numpy floor.

    python bench/run.py [--json FILE] [--markdown FILE] [--quick] [--workloads W1,W3] [--peers numpy,gradcli]
    python bench/run.py --cold [--workloads W1,W4] [--peers gradcli,torch]   # issue 14's part only

Absent peers are reported as absent, peers whose numbers differ from the floor's as wrong.
Besides the replay cells, every run measures the cold path of W1-W5 (bench/cold.py): build +
gradients + first values in a process whose imports are done. --cold runs only that and the
start-up workloads (W6*); --no-cold skips it.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

if __package__ in (None, ""):  # run as a script (python bench/run.py): make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import cold, report  # noqa: E402
from bench.peers import FLOOR, PEERS  # noqa: E402
from bench.workloads import COLD, STARTUP, WORKLOADS  # noqa: E402

HERE = Path(__file__).resolve().parent
REPLAY_METRICS = {"time", "memory", "speed", "ahead"}  # the others are the cold path's
REPO = HERE.parent


def thread_env(n: int) -> dict:
    """Environment that limits numpy's BLAS, torch, TensorFlow and XLA to n threads (0: defaults).

    One thread by default: a 2-core machine shared with anything else makes multi-threaded
    BLAS wait on descheduled threads (10x swings); one thread measures the engines, not that.
    """
    if n <= 0:
        return {}
    xla = "--xla_cpu_multi_thread_eigen=false " if n == 1 else ""
    return {"BENCH_THREADS": str(n), "OMP_NUM_THREADS": str(n), "OPENBLAS_NUM_THREADS": str(n),
            "MKL_NUM_THREADS": str(n),
            "TF_NUM_INTRAOP_THREADS": str(n), "TF_NUM_INTEROP_THREADS": str(n),
            "XLA_FLAGS": f"{xla}intra_op_parallelism_threads={n}"}


def _names(text: str | None, known: list[str], what: str, prefix: bool = False) -> list[str]:
    if not text:
        return list(known)
    names = []
    for name in text.split(","):
        matches = [k for k in known if k == name or prefix and k.startswith(name + "-")]  # W3: both
        if not matches:
            raise SystemExit(f"unknown {what} {name!r}; choose from {', '.join(known)}")
        names += [m for m in matches if m not in names]
    return names


def run_worker(peer: str, workloads: list[str], args) -> list[dict]:
    """Run one worker subprocess; a crash or time-out becomes an error entry per workload."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cell.json"
        cmd = [sys.executable, str(HERE / "worker.py"), "--peer", peer, "--workloads", ",".join(workloads),
               "--out", str(out), *args.worker_flags]
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2",
               "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
               **thread_env(args.threads)}
        try:
            proc = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True,
                                  timeout=args.timeout)
            problem = f"worker exited {proc.returncode}: {_tail(proc.stderr)}" if proc.returncode else ""
        except subprocess.TimeoutExpired:
            problem = f"timed out after {args.timeout:.0f} s"
        done = json.loads(out.read_text()) if out.exists() else []
    finished = {r["workload"] for r in done}
    return done + [{"workload": w, "peer": peer, "status": "error", "reason": f"error: {problem}"}
                   for w in workloads if w not in finished]


def _tail(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "(no stderr)"


def _progress(results: list[dict]) -> None:
    for r in results:
        if r["status"] == "ok":
            print(f"  {r['workload']:7} {r['peer']:12} {r['median_s'] * 1e3:10.3f} ms  "
                  f"peak {r.get('peak_mb') or 0:8.2f} MB", file=sys.stderr, flush=True)
        else:
            print(f"  {r['workload']:7} {r['peer']:12} {r.get('reason', r['status'])}", file=sys.stderr,
                  flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write every measurement here")
    parser.add_argument("--markdown", type=Path, help="write the report (bench/RESULTS.md) here")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one run each: a smoke test")
    parser.add_argument("--workloads", help=f"comma-separated, from {','.join(WORKLOADS)} (W3 = both)")
    parser.add_argument("--peers", help=f"comma-separated, from {','.join(PEERS)}; the floor always runs")
    parser.add_argument("--repeats", type=int, default=30, help="most timed runs per cell")
    parser.add_argument("--budget", type=float, default=6.0, help="seconds of timed runs per cell")
    parser.add_argument("--rounds", type=int, default=2,
                        help="passes over the cells, the budget split between them (default 2)")
    parser.add_argument("--jobs", type=int, help="--quick: workers at once (default 2)")
    parser.add_argument("--threads", type=int, default=1, help="threads per peer (0: each one's default)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per worker")
    parser.add_argument("--from-json", type=Path, help="re-render the report from an earlier --json")
    parser.add_argument("--no-profile", action="store_true", help="skip profiling gradcli on missed targets")
    parser.add_argument("--cold", action="store_true",
                        help="only the cold path (W1-W5) and the start-up workloads (W6*)")
    parser.add_argument("--no-cold", action="store_true", help="skip the cold path")
    parser.add_argument("--cold-rounds", type=int, default=3,
                        help="fresh processes per peer on each cold workload, in alternating order")
    args = parser.parse_args(argv)
    if args.from_json:
        doc = json.loads(args.from_json.read_text())
        report.add_ratios(doc["results"])
        doc["targets"] = report.verdicts(doc["results"], doc.get("cold"))
        return _write(doc, args)
    workloads = _names(args.workloads, WORKLOADS, "workload", prefix=True)
    peers = [FLOOR] + [p for p in _names(args.peers, list(PEERS), "peer") if p != FLOOR]
    cold_workloads = [] if args.no_cold else [w for w in workloads if w in COLD]
    cold_peers = _cold_peers(args.peers, peers)
    if args.cold:
        workloads = [w for w in workloads if w in STARTUP or w in cold_workloads]
    replay = [w for w in workloads if not args.cold or w in STARTUP]
    load_before = os.getloadavg()
    results = ((_run_quick if args.quick else _run_full)(replay, peers, args)) if replay else []
    order = {(w, p): i for i, (w, p) in enumerate((w, p) for w in workloads for p in peers)}
    results.sort(key=lambda r: order[(r["workload"], r["peer"])])
    report.add_ratios(results)
    if not args.quick:
        _add_paired(results, replay, args)
    colds = _run_cold(cold_workloads, cold_peers, args) if cold_workloads else []
    targets = report.verdicts(results, colds)
    profiles = [] if args.quick or args.no_profile else _profile_misses(targets, args)
    command = "bench/run.py --quick" if args.quick else "bench/run.py --cold" if args.cold else "make bench"
    doc = {"command": command, "quick": args.quick, "cold_only": args.cold,
           "threads": args.threads, "rounds": 1 if args.quick else args.rounds, "budget": args.budget,
           "repeats": args.repeats,
           "load": [load_before, os.getloadavg()], "machine": report.machine(), "workloads": workloads,
           "peers": peers, "results": results, "cold": colds, "cold_peers": cold_peers,
           "targets": targets, "profiles": profiles}
    return _write(doc, args)


def _cold_peers(chosen: str | None, peers: list[str]) -> list[str]:
    """The peers timed cold: the chosen ones (default: the cheap ones), torch with gradcli (the reference)."""
    names = [p for p in peers if chosen or p in cold.DEFAULT_PEERS]
    if "gradcli" in names and cold.REFERENCE not in names:
        names.append(cold.REFERENCE)
    return names


def _run_cold(workloads: list[str], peers: list[str], args) -> list[dict]:
    """Cold cells (each a fresh process, in `rounds` passes of alternating order), then per workload
    one process alternating every peer's cold for the budget (the targets' paired medians)."""
    rounds = 1 if args.quick else max(1, args.cold_rounds)
    quick = ["--quick"] if args.quick else []
    print(f"cold path: {len(workloads)} workloads x {len(peers)} peers, {rounds} rounds", file=sys.stderr)
    cells: dict[tuple, list[dict]] = {}
    args.worker_flags = ["--cold", *quick]
    if args.quick:  # one process per peer for every workload: imports dominate at tiny sizes
        for p in peers:
            for r in run_worker(p, workloads, args):
                cells[(r["workload"], p)] = [r]
    for k in range(0 if args.quick else rounds):
        for w in workloads:
            for p in peers if k % 2 == 0 else reversed(peers):
                seen = cells.get((w, p))
                if seen and seen[0]["status"] != "ok":
                    continue
                done = run_worker(p, [w], args)
                _cold_progress(done)
                cells.setdefault((w, p), []).extend(done)
    ok = [p for p in peers if any(cells[(w, p)][0]["status"] == "ok" for w in workloads)]
    paired: dict[str, dict] = {}
    if len(ok) > 1:
        print(f"alternating {', '.join(ok)} cold in one process per workload", file=sys.stderr)
        args.worker_flags = ["--cold-with", ",".join(ok[1:]), "--budget", str(args.budget / 2),
                             "--repeats", str(args.repeats), *quick]
        groups = [workloads] if args.quick else [[w] for w in workloads]
        for group in groups:
            for entry in run_worker(ok[0], group, args):
                paired[entry["workload"]] = entry
    return [cold.pooled(cells[(w, p)], paired.get(w)) for w in workloads for p in peers]


def _cold_progress(results: list[dict]) -> None:
    for r in results:
        if r["status"] == "ok":
            print(f"  {r['workload']:7} {r['peer']:12} cold {r['cold_s'] * 1e3:10.1f} ms  "
                  f"+{r.get('cold_mb') or 0:8.1f} MB", file=sys.stderr, flush=True)
        else:
            print(f"  {r['workload']:7} {r['peer']:12} {r.get('reason', r['status'])}", file=sys.stderr,
                  flush=True)


def _run_quick(workloads: list[str], peers: list[str], args) -> list[dict]:
    """One process per peer (imports dominate at tiny sizes), two at once, the slowest first."""
    args.worker_flags = ["--quick", "--single"]
    slow = ["jax", "tf", "tf-function", "torch", "jax-jit"]
    groups = [(p, workloads) for p in sorted(peers, key=lambda p: slow.index(p) if p in slow else 9)]
    print(f"benchmark --quick: {len(workloads)} workloads x {len(peers)} peers", file=sys.stderr)
    results: list[dict] = []
    with ThreadPoolExecutor(max_workers=args.jobs or 2) as pool:
        for done in pool.map(lambda g: run_worker(g[0], g[1], args), groups):
            _progress(done)
            results += done
    return results


def _run_full(workloads: list[str], peers: list[str], args) -> list[dict]:
    """Each cell in its own process, one at a time, in `rounds` passes whose runs are pooled.

    The machine's speed drifts (other tenants, the host): passes that alternate the order
    of the peers spread a slow spell over several peers instead of one peer's whole cell.
    """
    rounds = max(1, args.rounds)
    args.worker_flags = ["--repeats", str(max(3, args.repeats // rounds)), "--min-runs", "3",
                         "--warmup", "2", "--budget", str(args.budget / rounds)]
    print(f"benchmark: {len(workloads)} workloads x {len(peers)} peers, {rounds} rounds", file=sys.stderr)
    cells: dict[tuple, list[dict]] = {}
    for k in range(rounds):
        for w in workloads:
            for p in peers if k % 2 == 0 else reversed(peers):
                seen = cells.get((w, p))
                if seen and (seen[0]["status"] != "ok" or seen[0]["n"] == 1):
                    continue  # not ok, or a single run already longer than the budget
                done = run_worker(p, [w], args)
                _progress(done)
                cells.setdefault((w, p), []).extend(done)
    return [_pooled(entries) for entries in cells.values()]


def _pooled(entries: list[dict]) -> dict:
    """One cell's rounds as one entry: all timed runs pooled; first round's build and first run."""
    first = dict(entries[0])
    if len(entries) == 1 or any(e["status"] != "ok" for e in entries):
        return next((e for e in entries if e["status"] != "ok"), first)
    times = [t for e in entries for t in e["times_s"]]
    first.update(rounds=len(entries), times_s=times, n=len(times), median_s=statistics.median(times),
                 min_s=min(times), max_s=max(times),
                 cpu_fraction=min(e.get("cpu_fraction", 1.0) for e in entries),
                 round_medians_s=[e["median_s"] for e in entries])
    if first.get("steps_per_s"):
        first["steps_per_s"] *= entries[0]["median_s"] / first["median_s"]
    for key in ("peak_mb", "traced_peak_mb"):
        values = [e[key] for e in entries if e.get(key) is not None]
        if values:
            first[key] = max(values)
    return first


def _add_paired(results: list[dict], workloads: list[str], args) -> None:
    """gradcli's ratio to the floor measured with their runs alternated in one process."""
    if "gradcli" not in {r["peer"] for r in results} or not workloads:
        return
    print("pairing gradcli with the floor in one process", file=sys.stderr)
    flags = args.worker_flags
    args.worker_flags = ["--paired", "--repeats", str(args.repeats), "--warmup", "2",
                         "--budget", str(args.budget / 2)]
    paired = {r["workload"]: r for r in run_worker("gradcli", workloads, args)}
    args.worker_flags = flags
    for r in results:
        if r["peer"] == "gradcli" and r["workload"] in paired:
            r.update({k: v for k, v in paired[r["workload"]].items() if k.startswith("paired_")})


def _profile_misses(targets: list[dict], args) -> list[dict]:
    """cProfile (W6: import times) of gradcli on each workload where a target is missed;
    for a missed cold target, bench/profile_cold.py's profile of the cold path (W4: 20,000 steps)."""
    profiles = []
    missed = [v["workload"] for v in targets if v["met"] is False and v["metric"] in REPLAY_METRICS]
    args.worker_flags += ["--profile"]
    for workload in dict.fromkeys(missed):
        print(f"profiling gradcli on {workload} (target missed)", file=sys.stderr)
        r = run_worker("gradcli", [workload], args)[0]
        if r.get("profile"):
            profiles.append({"workload": workload, "profile": r["profile"]})
    cold_missed = [v["workload"] for v in targets if v["met"] is False and v["metric"] not in REPLAY_METRICS]
    for workload in dict.fromkeys(cold_missed):
        print(f"profiling gradcli's cold path on {workload} (target missed)", file=sys.stderr)
        cmd = [sys.executable, str(HERE / "profile_cold.py"), "--workload", workload, "--top", "15",
               *(["--n", "20000"] if workload == "W4" and not args.quick else [])]
        path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "PYTHONPATH": path, **thread_env(args.threads)}
        proc = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True, timeout=args.timeout)
        text = proc.stdout.strip() if proc.returncode == 0 else f"profile failed: {_tail(proc.stderr)}"
        profiles.append({"workload": f"{workload} cold", "profile": text})
    return profiles


def _write(doc: dict, args) -> int:
    if args.json and args.json != args.from_json:
        args.json.write_text(json.dumps(doc, indent=1))
    if args.markdown:
        args.markdown.write_text(report.markdown(doc))
    for v in doc["targets"]:
        print(f"{v['workload']:7} {v['target']:40} {v['verdict']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
