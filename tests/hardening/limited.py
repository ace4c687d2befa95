"""Run gradcli commands in a child process whose address space is capped (RLIMIT_AS).

A memory attack that slips past gradcli's own budget then fails inside the
child (a MemoryError, a failed allocation) instead of taking the machine; the
test sees it in the output. Usage from a test:
    results = run_limited([["run", "spec.yaml"], ...], limit_bytes=3 << 30)
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

GiB = 1 << 30
WORKER = Path(__file__).with_name("limited_worker.py")
REPO = Path(__file__).parents[2]


def run_limited(jobs: list[list[str]], limit_bytes: int = 3 * GiB, timeout: float = 600,
                cwd: Path | None = None) -> list[dict]:
    """Each job's {"exit_code", "stdout", "stderr"}, all run in one capped child process."""
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "NO_COLOR": "1", "COLUMNS": "200"}
    done = subprocess.run([sys.executable, str(WORKER), str(limit_bytes), json.dumps(jobs)],
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    assert done.returncode == 0, f"the worker died ({done.returncode}): {done.stderr[-3000:]}"
    return json.loads(done.stdout)


def problems(result: dict) -> list[str]:
    """What must never happen on any spec: a traceback, an internal error, running out of memory."""
    text = result["stdout"] + result["stderr"]
    found = []
    if result["exit_code"] not in (0, 1, 2):
        found.append(f"exit code {result['exit_code']}")
    for sign in ("Traceback", "internal error", "out of memory", "Unable to allocate",
                 "MemoryError", "std::bad_alloc", "OOM", "Resource exhausted"):
        if sign in text:
            found.append(f"{sign!r} in the output")
    return found
