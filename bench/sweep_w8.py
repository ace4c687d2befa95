"""W8: the sweep benchmark. 64 runs (8 seeds x 4 learning rates x 2 STEs) of bench/w8/w8.yaml,
a W5-like training spec, timed in one go on this machine:

  --jobs 1, --jobs 2, --dask (a local cluster of 2 workers), and the same 64 runs as
  separate `gradcli run` processes, one after another.

    python bench/sweep_w8.py [--quick] [--json FILE] [--markdown FILE]

Targets (the sweep issue): --jobs 2 at least 1.8x the throughput of --jobs 1; the sweep at
least 5x faster than separate processes; per-run overhead (--jobs 1 wall time over the sum
of the runs' own times) at most 1.1x; Dask within 1.3x of --jobs 2. Every mode must give
the same run files (times aside), or the numbers mean nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SPEC = HERE / "w8" / "w8.yaml"
sys.path.insert(0, str(REPO))

from bench.run import thread_env  # noqa: E402


def env() -> dict:
    return {**os.environ, **thread_env(1), "PYTHONPATH": str(REPO)}


CPU = {}  # label -> processor seconds of the command and everything it started


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], label: str | None = None) -> float:
    """Wall seconds of a command; its processor seconds (its processes and theirs, waited
    for) are added to CPU[label]: on a shared machine they do not depend on the load."""
    start, cpu = time.perf_counter(), children_cpu()
    proc = subprocess.run(argv, env=env(), cwd=REPO, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if label:
        CPU[label] = CPU.get(label, 0.0) + children_cpu() - cpu
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return elapsed


def runs_of(out: Path) -> dict:
    docs = {p.stem: json.loads(p.read_text()) for p in (out / "runs").glob("*.json")}
    return docs


def sweep(tmp: Path, name: str, extra: list[str], seeds: str) -> tuple[float, dict]:
    out = tmp / name
    wall = timed([sys.executable, "-m", "gradcli", "sweep", str(SPEC), "--seeds", seeds,
                  "--out", str(out), "--format", "json", *extra], name)
    return wall, runs_of(out)


def separate(runs: dict) -> float:
    """Every run as its own `gradcli run --set ...` process, one after another."""
    from gradcli.spec.sweep import set_text

    total = 0.0
    for doc in runs.values():
        sets = [a for k, v in doc["params"].items() for a in ("--set", set_text(k, v))]
        total += timed([sys.executable, "-m", "gradcli", "run", str(SPEC), *sets, "--no-numeric",
                        "--format", "json"], "separate")
    return total


CLUSTER = ("import time; from gradcli.cli_sweep import _dask_client; t = time.perf_counter(); "
           "client, cluster = _dask_client(None, 2); print(time.perf_counter() - t); "
           "client.close(); cluster.close()")


def cluster_start() -> float:
    """Seconds gradcli takes to start --dask's local cluster of 2 workers (the same call)."""
    proc = subprocess.run([sys.executable, "-c", CLUSTER], env=env(), cwd=REPO,
                          capture_output=True, text=True)
    return float(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else float("nan")


def with_scheduler(tmp: Path, seeds: str) -> tuple[float, dict]:
    """The sweep through --scheduler on a running cluster (a `dask scheduler` and two
    `dask worker --nthreads 1` on 127.0.0.1, started before the clock starts)."""
    import socket

    from dask.distributed import Client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dask, address = str(Path(sys.executable).parent / "dask"), f"tcp://127.0.0.1:{port}"
    quiet = dict(env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], **quiet)]
    procs += [subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--no-dashboard"],
                               **quiet) for _ in range(2)]
    try:
        with Client(address, timeout="120s") as client:
            client.wait_for_workers(2, timeout=120)
        return sweep(tmp, "scheduler", ["--scheduler", address], seeds)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=60)


def same(a: dict, b: dict) -> bool:
    strip = lambda docs: {k: {**v, "time": None, "cpu": None} for k, v in docs.items()}  # noqa: E731
    return strip(a) == strip(b)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 seeds (16 runs) instead of 8")
    parser.add_argument("--json", default=None)
    parser.add_argument("--markdown", default=None)
    args = parser.parse_args(argv)
    seeds = "2" if args.quick else "8"
    tmp = Path(tempfile.mkdtemp(prefix="gradcli-w8-"))
    try:
        wall1, runs1 = sweep(tmp, "jobs1", ["--jobs", "1"], seeds)
        wall2, runs2 = sweep(tmp, "jobs2", ["--jobs", "2"], seeds)
        walld, runsd = sweep(tmp, "dask", ["--dask", "--jobs", "2"], seeds)
        walls, runss = with_scheduler(tmp, seeds)
        wall_sep = separate(runs1)
        start = cluster_start()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    own = sum(d["time"] for d in runs1.values())
    own_cpu = sum(d["cpu"] for d in runs1.values())
    n = len(runs1)
    failed = sum(1 for d in runs1.values() if d.get("error"))
    results = {
        "runs": n, "failed": failed,
        "identical": all(same(runs1, other) for other in (runs2, runsd, runss)),
        "wall": {"jobs1": wall1, "jobs2": wall2, "dask2": walld, "scheduler2": walls,
                 "separate": wall_sep},
        "own_time_sum": own, "own_cpu_sum": own_cpu, "cpu": CPU,
        "cores": os.cpu_count(), "dask_cluster_start": start,
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "targets": [
            {"name": "--jobs 2 throughput / --jobs 1", "value": wall1 / wall2, "target": ">= 1.8",
             "met": wall1 / wall2 >= 1.8},
            {"name": "separate processes / sweep (--jobs 1)", "value": wall_sep / wall1,
             "target": ">= 5", "met": wall_sep / wall1 >= 5},
            {"name": "separate processes / sweep (--jobs 2, the cores)", "value": wall_sep / wall2,
             "target": ">= 5", "met": wall_sep / wall2 >= 5},
            {"name": "per-run overhead: --jobs 1 wall / sum of own times", "value": wall1 / own,
             "target": "<= 1.1", "met": wall1 / own <= 1.1},
            {"name": "Dask (2 workers) / --jobs 2", "value": walld / wall2, "target": "<= 1.3",
             "met": walld / wall2 <= 1.3},
            {"name": "Dask without its cluster's start / --jobs 2 (for the note)",
             "value": (walld - start) / wall2, "target": "<= 1.3",
             "met": (walld - start) / wall2 <= 1.3},
            {"name": "--scheduler on a running cluster of 2 workers / --jobs 2",
             "value": walls / wall2, "target": "<= 1.3", "met": walls / wall2 <= 1.3},
            {"name": "processor time: separate processes / sweep (--jobs 1)",
             "value": CPU["separate"] / CPU["jobs1"], "target": ">= 5",
             "met": CPU["separate"] / CPU["jobs1"] >= 5},
            {"name": "processor time: --jobs 1 sweep / sum of the runs' own",
             "value": CPU["jobs1"] / own_cpu, "target": "<= 1.1", "met": CPU["jobs1"] / own_cpu <= 1.1},
            {"name": "processor time: Dask (2 workers) / --jobs 2",
             "value": CPU["dask"] / CPU["jobs2"], "target": "<= 1.3",
             "met": CPU["dask"] / CPU["jobs2"] <= 1.3},
        ],
    }
    text = markdown(results, args.quick)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(text)
    return 0 if results["identical"] and not failed else 1


def markdown(r: dict, quick: bool) -> str:
    lines = [f"# W8: a sweep of {r['runs']} runs{' (--quick)' if quick else ''}", "",
             f"{r['cores']} cores, load average {', '.join(f'{x:.1f}' for x in r['load_average'] or ())}"
             f"; every mode gave the same run files: {'yes' if r['identical'] else 'NO'}; "
             f"failed runs: {r['failed']}.", "",
             "| mode | wall (s) |", "|---|---:|"]
    lines += [f"| {k} | {v:.2f} |" for k, v in r["wall"].items()]
    lines += [f"| sum of the runs' own times (--jobs 1) | {r['own_time_sum']:.2f} |",
              f"| processor seconds: {', '.join(f'{k} {v:.1f}' for k, v in r['cpu'].items())}; "
              f"the runs' own {r['own_cpu_sum']:.1f} | |",
              f"| starting --dask's local cluster (measured apart) | {r['dask_cluster_start']:.2f} |",
              "",
              "| target | value | wanted | met |", "|---|---:|---|---|"]
    lines += [f"| {t['name']} | {t['value']:.2f} | {t['target']} | {'yes' if t['met'] else 'NO'} |"
              for t in r["targets"]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
