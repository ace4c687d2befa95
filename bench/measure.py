"""How a Case is measured: wall time of repeated runs, peak memory of a run, a profile.

Peak memory is the growth of resident memory during the first run after the
build: VmHWM after it minus VmRSS before it, the kernel's high-water mark reset
just before, with glibc's mmap threshold fixed at 64 KiB and free heap returned
to the OS first, so every large buffer is mapped when allocated and unmapped
when freed. That sees numpy's, torch's, XLA's and TensorFlow's allocations
alike, and the pools TensorFlow and XLA keep freed memory in, as they grow.
"""
from __future__ import annotations

import atexit
import cProfile
import ctypes
import gc
import io
import os
import pstats
import re
import shutil
import subprocess
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

from bench.peers import Wrong

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def _malloc(mmap_threshold: int, trim_threshold: int, trim: bool = False) -> bool:
    """Fix glibc's mmap and trim thresholds (and return free heap to the OS); False off glibc."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(_M_MMAP_THRESHOLD, mmap_threshold)
        libc.mallopt(_M_TRIM_THRESHOLD, trim_threshold)
        if trim:
            libc.malloc_trim(0)
    except (OSError, AttributeError):
        return False
    return True


def settle_allocator() -> None:
    """Put glibc's allocator in the state any process reaches once it frees a large block.

    glibc raises its mmap threshold (to at most 32 MiB) and its trim threshold (to twice that)
    when it frees a large mapped block; until then every large temporary is mapped, faulted in
    and unmapped again. Whether a peer's own setup happened to free such a block would move its
    times by 12-40% on these workloads, so every worker starts from the raised thresholds.
    """
    if not _malloc(30 * 2**20, 60 * 2**20):
        block = np.empty(30 * 2**20, dtype=np.uint8)  # elsewhere: free a large block instead
        del block


def trim_heap() -> None:
    """Return free heap to the OS (settled thresholds kept): the next run faults its memory in
    again, as a fresh process's first run does, instead of reusing pages an earlier run touched."""
    _malloc(30 * 2**20, 60 * 2**20, trim=True)


def time_runs(case, repeats: int, budget_s: float, min_runs: int, cpu: list | None = None) -> list[float]:
    """Wall seconds per run: `repeats` runs, fewer once `budget_s` is spent and min_runs are done.

    cpu, if given, receives each run's process CPU seconds: well below the wall time means the
    process waited (another process had the core), and the wall time overstates the work.
    """
    times: list[float] = []
    for _ in range(repeats):
        if case.reset:
            case.reset()
        cpu_start, start = time.process_time(), time.perf_counter()
        out = case.run()
        times.append(time.perf_counter() - start)
        if cpu is not None:
            cpu.append(time.process_time() - cpu_start)
        del out
        if len(times) >= min_runs and sum(times) >= budget_s:
            break
    return times


def _status_kb(key: str) -> int:
    with open("/proc/self/status") as f:
        return int(re.search(rf"^{key}:\s+(\d+)", f.read(), re.M).group(1))


def rss_growth(run) -> tuple[float | None, float, object]:
    """(growth of resident memory in MiB, None where Linux cannot tell; seconds; output) of run()."""
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset the peak resident set size (VmHWM)
        before = _status_kb("VmRSS")
    except OSError:
        before = None
    start = time.perf_counter()
    out = run()
    seconds = time.perf_counter() - start
    if before is None:
        return None, seconds, out
    return max(_status_kb("VmHWM") - before, 0) / 1024, seconds, out


def first_run_memory(run) -> tuple[float | None, float, object]:
    """rss_growth of run() with every block of 64 KiB or more mapped when allocated and unmapped
    when freed, and free heap returned to the OS first: growth then means memory the run used."""
    _malloc(64 * 2**10, 128 * 2**10, trim=True)
    try:
        return rss_growth(run)
    finally:
        settle_allocator()


def traced_peak_mb(case) -> float:
    """Peak of Python and numpy allocations (MiB) during one run, by tracemalloc."""
    if case.reset:
        case.reset()
    gc.collect()
    tracemalloc.start()
    try:
        out = case.run()
        peak = tracemalloc.get_traced_memory()[1]
        del out
    finally:
        tracemalloc.stop()
    return peak / 2**20


def profile(case, min_seconds: float = 1.0, top: int = 14) -> str:
    """cProfile of repeated runs (at least min_seconds), the top functions by own time."""
    prof = cProfile.Profile()
    spent, runs = 0.0, 0
    while spent < min_seconds or runs < 2:
        if case.reset:
            case.reset()
        start = time.perf_counter()
        prof.enable()
        case.run()
        prof.disable()
        spent += time.perf_counter() - start
        runs += 1
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out).strip_dirs().sort_stats("tottime")
    stats.print_stats(top)
    text = out.getvalue()
    body = text[text.find("   ncalls"):].rstrip()
    return f"{runs} runs profiled\n{body}"


_PYCACHE: list[str] = []


def python_env() -> dict:
    """The environment of a user's Python: bytecode cached (here in a private directory).

    Without it (PYTHONDONTWRITEBYTECODE=1, as some sandboxes set) every start recompiles the
    source of an editable install, while pip-installed packages like numpy come precompiled.
    """
    if not _PYCACHE:
        _PYCACHE.append(tempfile.mkdtemp(prefix="bench-pycache-"))
        atexit.register(shutil.rmtree, _PYCACHE[0], True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": _PYCACHE[0]}


def run_child(argv: list[str], cwd: str | None = None) -> tuple[float, float]:
    """(wall seconds from start to exit, peak RSS in MiB) of a child process; raises on failure."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=python_env(), stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        if code != 0:
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()[-1:] or ["(no stderr)"]
            raise Wrong(f"`{' '.join([Path(argv[0]).name, *argv[1:3]])}` exited {code}: {tail[0]}")
    return seconds, usage.ru_maxrss / 1024


def import_profile(argv: list[str], cwd: str | None = None, top: int = 15) -> str:
    """The slowest imports of a child process, from python -X importtime: by cumulative time, and
    by cumulative time beyond numpy's (what a command pays on top of `python -c 'import numpy'`)."""
    env = {**python_env(), "PYTHONPROFILEIMPORTTIME": "1"}
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    rows = parse_importtime(proc.stderr)
    total = sum(r["cum"] for r in rows if r["depth"] == 0)
    numpy_us = sum(r["numpy"] for r in rows if r["depth"] == 0)
    lines = [f"wall {wall * 1e3:.0f} ms, of which imports {total / 1e3:.0f} ms, numpy's "
             f"{numpy_us / 1e3:.0f} ms (python -X importtime)", "cumulative ms   self ms  depth  module"]
    for r in sorted(rows, key=lambda r: -r["cum"])[:top]:
        lines.append(f"{r['cum'] / 1e3:14.1f} {r['self'] / 1e3:9.1f} {r['depth']:6}  {r['name']}")
    lines += ["beyond numpy: cumulative ms without numpy's subtrees",
              "cumulative ms   self ms  depth  module"]
    beyond = [r for r in rows if not _is_numpy(r["name"])]
    for r in sorted(beyond, key=lambda r: -(r["cum"] - r["numpy"]))[:top]:
        beyond_ms = (r["cum"] - r["numpy"]) / 1e3
        lines.append(f"{beyond_ms:14.1f} {r['self'] / 1e3:9.1f} {r['depth']:6}  {r['name']}")
    return "\n".join(lines)


def _is_numpy(name: str) -> bool:
    return name == "numpy" or name.startswith("numpy.")


def parse_importtime(stderr: str) -> list[dict]:
    """-X importtime's lines as dicts (name, self and cumulative µs, depth, numpy: µs of numpy's
    subtrees inside it), rebuilt as a tree from the post-order the lines come in."""
    rows: list[dict] = []
    pending: list[dict] = []
    for line in stderr.splitlines():
        parts = line.split("|")
        if not (line.startswith("import time:") and len(parts) == 3 and parts[1].strip().isdigit()):
            continue
        name = parts[2].rstrip()
        depth = (len(name) - len(name.lstrip())) // 2
        row = {"name": name.strip(), "self": int(parts[0].split(":")[1]), "cum": int(parts[1]),
               "depth": depth}
        children = []
        while pending and pending[-1]["depth"] > depth:
            children.append(pending.pop())
        row["numpy"] = row["cum"] if _is_numpy(row["name"]) else sum(c["numpy"] for c in children)
        pending.append(row)
        rows.append(row)
    return rows
