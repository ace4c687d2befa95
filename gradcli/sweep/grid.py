"""The runs of a sweep: the spec's `sweep:` axes, changed by --param and --seeds, as a grid.

A run is its id and its params ({dotted key: value}); its spec is the sweep's
spec with `--set KEY=VALUE` for each param. Runs are numbered in grid order
(the last axis varies fastest), so the same command always gives the same ids.
"""
from __future__ import annotations

import itertools

from ..errors import GradcliError
from ..record import record
from ..spec.sweep import MAX_RUNS, MAX_VALUES, Axis, SweepSpec, set_text

SEED = "seed"


@record
class Run:
    """One run of the grid."""

    id: str
    params: dict

    @property
    def overrides(self) -> list[str]:
        return [set_text(k, v) for k, v in self.params.items()]


@record
class Grid:
    """Every run of a sweep, and the swept keys in column order."""

    keys: tuple[str, ...]
    runs: tuple[Run, ...]

    @property
    def group_keys(self) -> tuple[str, ...]:
        """The keys a report groups by: every swept key but seed."""
        return tuple(k for k in self.keys if k != SEED)


def parse_seeds(text: str) -> range:
    """--seeds N (0 … N−1) or --seeds A:B (A … B−1), as Python's range."""
    first, sep, last = text.partition(":")
    try:
        start, stop = (int(first), int(last)) if sep else (0, int(first))
    except ValueError:
        raise GradcliError(f"--seeds expects N or A:B (whole numbers), got {text!r}") from None
    if stop <= start or start < 0:
        raise GradcliError(f"--seeds {text} gives no seeds >= 0; use N or A:B with 0 <= A < B")
    if stop - start > MAX_VALUES:  # before any seed is made: a range's values come later
        raise GradcliError(f"--seeds {text} gives {stop - start} seeds; the limit is "
                           f"{MAX_VALUES} values of one swept key")
    return range(start, stop)


def axes(spec: SweepSpec | None, params: list[Axis], seeds: range | None) -> list[Axis]:
    """The spec's axes, where each --param (and --seeds) replaces its key or adds an axis."""
    out = list(spec.axes) if spec is not None else []
    extra = list(params)
    if seeds is not None:
        extra.append(Axis((SEED,), tuple((s,) for s in seeds)))
    for axis in extra:
        (key,) = axis.keys
        out = [a for a in (_without(a, key) for a in out) if a is not None]
        replaced = [i for i, a in enumerate(spec.axes if spec else ()) if key in a.keys]
        position = min(replaced[0], len(out)) if replaced else len(out)
        out.insert(position, axis)
    return out


def _without(axis: Axis, key: str) -> Axis | None:
    """The axis with one key taken out (a zip keeps its other keys), None if nothing is left."""
    if key not in axis.keys:
        return axis
    keep = [i for i, k in enumerate(axis.keys) if k != key]
    if not keep:
        return None
    return Axis(tuple(axis.keys[i] for i in keep), tuple(tuple(v[i] for i in keep)
                                                          for v in axis.values))


def grid(all_axes: list[Axis]) -> Grid:
    """Every combination of the axes' steps, in order."""
    if not all_axes:
        raise GradcliError("nothing to sweep: the spec has no sweep block, and neither --param "
                           "nor --seeds was given")
    total = 1
    for axis in all_axes:
        total *= len(axis.values)
    if total > MAX_RUNS:
        raise GradcliError(f"the sweep has {total} runs; the limit is {MAX_RUNS}")
    keys = tuple(k for axis in all_axes for k in axis.keys)
    width = len(str(total - 1))
    runs = []
    for n, steps in enumerate(itertools.product(*(axis.values for axis in all_axes))):
        values = [v for step in steps for v in step]
        runs.append(Run(f"{n:0{width}d}", dict(zip(keys, values))))
    return Grid(keys, tuple(runs))

