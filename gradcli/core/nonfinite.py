"""Where a NaN or an infinity was born: op origins and a checked walk of the graph.

`origin(label)` tags every op built inside it with an opaque label (the spec
interpreter passes the sub-expression being evaluated); gradient ops carry the
origin of the forward op they differentiate. `find_nonfinite` replays the ops
behind some fetches one by one, outside the fast replay, and names the first
op that turned finite inputs into a non-finite value. It is a separate walk
so that replay itself does no per-op checking: call it when a result is
non-finite.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ..errors import GraphError
from .graph import Tensor, current_value, walk_ops
from .origins import ORIGIN


class origin:
    """Context manager: ops built inside carry `label` as their `origin` (innermost wins)."""

    __slots__ = ("label", "previous")

    def __init__(self, label) -> None:
        self.label = label

    def __enter__(self) -> "origin":
        self.previous = ORIGIN.current
        ORIGIN.current = self.label
        return self

    def __exit__(self, *exc) -> None:
        ORIGIN.current = self.previous


class NonFinite:
    """A non-finite fetch and where it was born: the op, its origin and what it produced."""

    __slots__ = ("fetch", "op", "origin", "output", "value", "born")

    def __init__(self, fetch: Tensor, op, output: Tensor, value: str, born: str) -> None:
        self.fetch = fetch        # the tensor asked about
        self.op = op              # the first op that made a non-finite value from finite inputs
        self.origin = op.origin   # its origin label (None when built outside gc.origin)
        self.output = output      # the op's output that became non-finite
        self.value = value        # what the fetch holds: "nan", "inf" or "-inf"
        self.born = born          # what the op produced

    def __repr__(self) -> str:
        return (f"<NonFinite {self.fetch.name} is {self.value}: born as {self.born} at "
                f"{self.op.name} (origin {self.origin!r})>")


def kind(value) -> str | None:
    """'nan', 'inf' or '-inf' for the first non-finite element of value; None if all finite."""
    array = np.asarray(value)
    if array.dtype.kind not in "fc":
        return None
    bad = ~np.isfinite(array)
    if not bad.any():
        return None
    first = array[bad].flat[0] if array.ndim else array[()]
    if np.isnan(first):
        return "nan"
    return "inf" if first > 0 else "-inf"


def find_nonfinite(fetches, feed: Mapping[Tensor, object] | None = None):
    """For each fetch, a NonFinite saying where its NaN or infinity was born, or None if finite.

    One tensor gives one answer, a list a list. The birth is the first op in
    evaluation order, among the ops whose non-finite values reach the fetch,
    whose inputs were all finite and whose output was not; a non-finite leaf
    (constant or variable) is its own birth.
    """
    single = isinstance(fetches, Tensor)
    fetch_list = [fetches] if single else list(fetches)
    for t in fetch_list:
        if not isinstance(t, Tensor):
            raise GraphError(f"find_nonfinite() takes tensors, got {type(t).__name__}")
    fed = {t.uid: (t, np.asarray(v, dtype=t.dtype)) for t, v in (feed or {}).items()}
    ops = walk_ops(fetch_list, stop=lambda t: t.uid in fed)
    remaining = _uses(ops, fetch_list)
    values: dict[int, object] = {}
    births: dict[int, tuple] = {}  # tensor uid -> (order, op, output, born) of its earliest birth
    for uid, (t, value) in fed.items():  # a fed non-finite value is born where it is fed
        values[uid] = value
        if kind(value) is not None:
            births[uid] = (-1, t.op, t, kind(value))
    with np.errstate(all="ignore"):
        for order, op in enumerate(ops):
            if op.inputs:
                result = op.kernel(*[values[t.uid] for t in op.inputs])
                outs = result if len(op.outputs) > 1 else (result,)
            else:
                outs = [current_value(t) for t in op.outputs]
            inherited = min((births[t.uid] for t in op.inputs if t.uid in births),
                            default=None, key=lambda b: b[0])
            for t, value in zip(op.outputs, outs):
                values[t.uid] = value
                born = kind(value)
                if born is not None:
                    births[t.uid] = inherited or (order, op, t, born)
            for t in op.inputs:  # drop what no later op needs
                remaining[t.uid] -= 1
                if remaining[t.uid] == 0:
                    values.pop(t.uid, None)
    found = []
    for t in fetch_list:
        value = kind(values[t.uid]) if t.uid in values else None
        if value is None:
            found.append(None)
            continue
        _, op, output, born = births[t.uid]
        found.append(NonFinite(t, op, output, value, born))
    return found[0] if single else found


def _uses(ops, fetches) -> dict[int, int]:
    """How many times each tensor is read; fetches are read once more, at the end."""
    uses: dict[int, int] = {}
    for op in ops:
        for t in op.inputs:
            uses[t.uid] = uses.get(t.uid, 0) + 1
    for t in fetches:
        uses[t.uid] = uses.get(t.uid, 0) + 1
    return uses
