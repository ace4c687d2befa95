"""The `sweep:` block of a spec and `--param KEY=V1,V2,...`: which keys a sweep varies, and how.

    sweep:                        # a grid: every combination runs
      seed: [0, 1, 2]
      train.optimizer.lr: [0.01, 0.1]
      zip:                        # lists of equal length, taken element by element
        train.steps: [10, 20]     #   (one axis of the grid)
        inputs.c.value: [0.5, 1.0]

Keys are the dotted keys of `--set`; values are YAML values, handed to the run
as `--set KEY=VALUE`. Nothing here runs anything: the sweep package builds the grid.
"""
from __future__ import annotations

import math

from gradcli.errors import SpecError
from gradcli.record import record
from gradcli.spec.document import Map, Seq, Source, YNode, compose, to_plain
from gradcli.spec.fields import describe, expect_list, expect_map, fail, sub

MAX_VALUES = 10_000    # values of one key (a sweep is a list of runs, not a data set)
MAX_RUNS = 100_000     # runs of one sweep: the product of its axes' lengths
ZIP = "zip"


@record
class Axis:
    """One dimension of the grid: its keys (several for a zip) and, per step, their values."""

    keys: tuple[str, ...]
    values: tuple[tuple, ...]   # one tuple of plain values per step, aligned with keys


@record
class SweepSpec:
    """The axes of a sweep, in the order they were written (the grid's order)."""

    axes: tuple[Axis, ...]

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(k for axis in self.axes for k in axis.keys)


def build_sweep(node: YNode | None) -> SweepSpec | None:
    """The spec's `sweep:` block, checked; None when the spec has none."""
    if node is None:
        return None
    root = expect_map(node, "sweep", "a mapping of dotted keys to lists of values, or zip:")
    axes = []
    for key, (key_node, value) in root.items.items():
        if key == ZIP:
            axes.append(_zip(expect_map(value, "sweep.zip", "a mapping of dotted keys to lists "
                                                             "of equal length")))
        else:
            check_key(key, key_node, sub("sweep", key))
            axes.append(Axis((key,), tuple((v,) for v in _values(value, sub("sweep", key)))))
    sweep = SweepSpec(tuple(axes))
    _no_repeats(sweep.keys, root)
    return sweep


def _zip(node: Map) -> Axis:
    keys, columns, length = [], [], None
    for key, (key_node, value) in node.items.items():
        check_key(key, key_node, sub("sweep.zip", key))
        column = _values(value, sub("sweep.zip", key))
        if length is not None and len(column) != length:
            raise fail(value, sub("sweep.zip", key),
                       f"has {len(column)} values; the zip's first key has {length}",
                       "zip takes the lists element by element: give every key as many values")
        length = len(column)
        keys.append(key)
        columns.append(column)
    if not keys:
        raise fail(node, "sweep.zip", "the zip names no keys")
    return Axis(tuple(keys), tuple(zip(*columns)))


def _values(node: YNode | None, key: str) -> list:
    seq = expect_list(node, key, "a list of values")
    if not seq.items:
        raise fail(seq, key, "the list of values is empty: the sweep would run nothing")
    if len(seq.items) > MAX_VALUES:
        raise fail(seq, key, f"{len(seq.items)} values; the limit is {MAX_VALUES}")
    return [to_plain(item) for item in seq.items]


def check_key(key: str, at, where: str) -> None:
    """A dotted --set key that a run may change (never the sweep itself)."""
    parts = key.split(".")
    if not key or any(not p.strip() or p != p.strip() for p in parts):
        raise _error(at, where, f"{key!r} is not a dotted key such as train.optimizer.lr")
    if parts[0] in ("sweep", ZIP):
        raise _error(at, where, f"a sweep cannot vary {parts[0]!r} itself")


def _error(at, where: str, message: str) -> SpecError:
    return SpecError(message, key=where) if at is None else fail(at, where, message)


def _no_repeats(keys, at) -> None:
    seen = set()
    for key in keys:
        if key in seen:
            raise fail(at, "sweep", f"{key!r} is swept twice (once in zip, once in the grid)")
        seen.add(key)


def parse_param(text: str) -> Axis:
    """`--param KEY=V1,V2,...` as an axis: the values are read as a YAML flow list, so
    `--param inputs.x=[1,2],[3,4]` gives two lists and `--param s=a,b` two strings."""
    key, sep, values = text.partition("=")
    key = key.strip()
    where = f"--param {key}"
    if not sep or not key:
        raise SpecError(f"--param expects KEY=V1,V2,... such as train.optimizer.lr=0.01,0.1, "
                        f"got {text!r}")
    check_key(key, None, where)
    node = compose(Source("--param", f"[{values}]", from_set=True, set_key=key))
    if isinstance(node, Seq) and not node.items:
        raise SpecError(f"the list of values is empty: give them as {key}=V1,V2,... such as "
                        f"{key}=0.01,0.1", key=where)
    if not isinstance(node, Seq):
        raise SpecError(f"expected values separated by commas, got {describe(node)}", key=where)
    if len(node.items) > MAX_VALUES:
        raise SpecError(f"{len(node.items)} values; the limit is {MAX_VALUES}", key=where)
    return Axis((key,), tuple((to_plain(v),) for v in node.items))


def set_text(key: str, value) -> str:
    """`KEY=VALUE` for --set: the value as JSON, which YAML reads back as the same value
    (a string stays a string, a list a list)."""
    if isinstance(value, float) and not math.isfinite(value):  # JSON has no spelling for them
        return f"{key}={'.nan' if math.isnan(value) else ('.inf' if value > 0 else '-.inf')}"
    import json  # only for a spec with a sweep: block (check and run of any other import no json)

    return f"{key}={json.dumps(value)}"
