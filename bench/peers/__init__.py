"""The peers the benchmark compares, and the Case each peer builds for a workload.

A peer module defines w1..w6(d, variant) -> Case; d holds the workload's numpy
inputs and sizes (bench/workloads.py). A missing function, or one that raises
NotApplicable, makes that cell "n/a" with the reason given.

The cold path (bench/cold.py) times a case's build plus its first run. A peer
whose build does more than a one-shot needs (gradcli compiles a replay) defines
cold_w1..cold_w5(d, variant) -> Cold instead: the one-shot path, phase by phase.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np


@dataclass(frozen=True)
class Peer:
    """Where a peer's code lives, which variant of it runs, and what it needs installed."""

    module: str
    variant: str | None
    requires: tuple[str, ...]
    label: str


PEERS: dict[str, Peer] = {
    "numpy": Peer("numpy_floor", None, ("numpy",), "hand-written numpy (the floor)"),
    "gradcli": Peer("gradcli_core", None, ("gradcli",), "gradcli core, compiled replay"),
    "autograd": Peer("autograd_peer", None, ("autograd",), "HIPS autograd"),
    "torch": Peer("torch_peer", None, ("torch",), "torch eager, CPU"),
    "jax": Peer("jax_peer", "eager", ("jax",), "jax eager (no jit)"),
    "jax-jit": Peer("jax_peer", "jit", ("jax",), "jax.jit, compiled ahead"),
    "tf": Peer("tf_peer", "eager", ("tensorflow",), "tensorflow eager GradientTape"),
    "tf-function": Peer("tf_peer", "function", ("tensorflow",), "tf.function"),
}
FLOOR = "numpy"


class NotApplicable(Exception):
    """This peer does not run this workload, for the reason given."""


class Wrong(Exception):
    """The peer's outputs differ from the floor's (W6: the command failed)."""


class Absent(Exception):
    """What this peer needs for this workload is not installed (the reason says what)."""


def failure(entry: dict, exc: Exception) -> dict:
    """A peer's failure as its result entry: a failing peer is a result to report, not a crash."""
    for kind, status, prefix in ((NotApplicable, "n/a", ""), (Absent, "absent", "absent: "),
                                 (Wrong, "wrong", "wrong: ")):
        if isinstance(exc, kind):
            return {**entry, "status": status, "reason": f"{prefix}{exc}"}
    return {**entry, "status": "error", "reason": f"error: {type(exc).__name__}: {exc}"[:400]}


def leaves_to_numpy(out) -> list[np.ndarray]:
    """Flatten nested tuples/lists of framework values into numpy arrays, in order."""
    if isinstance(out, (tuple, list)):
        return [a for item in out for a in leaves_to_numpy(item)]
    if hasattr(out, "detach"):  # torch
        out = out.detach()
    return [np.asarray(out)]


@dataclass
class Case:
    """One prepared workload: run() is the timed forward+backward (or training loop)."""

    run: Callable[[], Any]
    to_numpy: Callable[[Any], list] = leaves_to_numpy
    reset: Callable[[], None] | None = None  # untimed, before every run (W5: initial weights)
    child_peak_mb: Callable[[], float] | None = None  # W6: peak RSS of the last child process
    profile: Callable[[], str] | None = None  # instead of cProfile of run() (W6: import times)
    notes: dict = field(default_factory=dict)


@dataclass
class Cold:
    """A one-shot's outputs (numpy), its phases' seconds and what it covers."""

    outputs: list
    phases: dict = field(default_factory=dict)  # name -> {"wall_s": .., "cpu_s": ..}, in order
    covers: str = ""
    forward_ops: int | None = None  # ops of the forward, for the per-op build costs


class Clock:
    """Wall and CPU seconds of consecutive phases: mark(name) ends the phase begun at the last mark."""

    def __init__(self) -> None:
        self.phases: dict = {}
        self._wall, self._cpu = time.perf_counter(), time.process_time()

    def mark(self, name: str) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        self.phases[name] = {"wall_s": wall - self._wall, "cpu_s": cpu - self._cpu}
        self._wall, self._cpu = wall, cpu
