"""Check a sweep's values before anything runs: each swept value applied to the base spec.

A run applies its values the way `--set` does, so a bad key or value would only fail
when the runs start, and be reported as `--set KEY`. Here every key of the `sweep:`
block is applied with each of its values in turn (a zip: each step's values together)
to the base spec, and the spec is built: an error is placed at the sweep block's key
or value. `--param` axes are checked the same way and named `--param KEY`.
Bounded: one build per value of each key (the sum of the lists' lengths), never the
grid's product; the grid's run count is checked first, and the spec text all those
builds read is capped at MAX_CHECK_TEXT (docs/untrusted.md).
"""
from __future__ import annotations

import math

from gradcli.errors import SpecError
from gradcli.spec.build import build_experiment
from gradcli.spec.document import Map, Seq, YNode, to_plain
from gradcli.spec.fields import fail, sub
from gradcli.spec.opcount import MAX_OPS, count_ops
from gradcli.spec.overrides import apply_overrides, replace_node
from gradcli.spec.shared_loads import loads_shared
from gradcli.spec.sweep import MAX_RUNS, ZIP, Axis, set_text

MAX_CHECK_TEXT = 16 << 20  # characters of spec text loaded, in all, to check a sweep's values


def check_sweep(root: Map, path: str, overrides=(), params: list[Axis] = ()) -> None:
    """Raise a SpecError for the first swept value (of the spec's sweep block, then of
    `params`) with which the spec does not load. `overrides` are --set texts applied to
    every run; keys that `params` sweep are not checked in the sweep block (replaced)."""
    block = root.get("sweep")
    base = Map({k: v for k, v in root.items.items() if k != "sweep"}, root.mark, root.size)
    base = apply_overrides(base, overrides)
    replaced = {k for axis in params for k in axis.keys}
    block_axes = []  # each axis of the block: its columns (one key, or a zip's keys)
    if isinstance(block, Map):
        for key, (key_node, value) in block.items.items():
            if key == ZIP and isinstance(value, Map):
                columns = [(k, kn, v, sub("sweep.zip", k)) for k, (kn, v) in value.items.items()
                           if k not in replaced]
            else:
                columns = [] if key in replaced else [(key, key_node, value, sub("sweep", key))]
            columns = [c for c in columns if isinstance(c[2], Seq)]
            if columns:
                block_axes.append(columns)
    lengths = [min(len(c[2].items) for c in columns) for columns in block_axes]
    _bounded(lengths + [len(axis.values) for axis in params], len(root.mark.source.text),
             block if isinstance(block, Map) else None, params)
    with loads_shared():  # a data: file is read and parsed once, not once per value
        for columns in block_axes:
            _check_steps(base, path, columns)
        for axis in params:
            for step in axis.values:
                _check_param(base, path, axis.keys, step)


def _bounded(lengths: list[int], text_size: int, block: Map | None, params) -> None:
    """Refuse, before any load, a sweep past the run limit or one whose checks would load
    more than MAX_CHECK_TEXT characters of spec (one load per value of each key)."""
    def refuse(message: str, hint: str | None = None) -> SpecError:
        if block is not None:
            return fail(block, "sweep", message, hint)
        return SpecError(message, key=f"--param {params[0].keys[0]}", hint=hint)

    if math.prod(lengths) > MAX_RUNS:
        raise refuse(f"the sweep has {math.prod(lengths)} runs; the limit is {MAX_RUNS}")
    if sum(lengths) * text_size > MAX_CHECK_TEXT:
        raise refuse(f"checking the sweep's values loads the spec once per value: "
                     f"{sum(lengths)} loads of {text_size} characters; the limit is "
                     f"{MAX_CHECK_TEXT:,} characters of spec text in all",
                     "sweep fewer values (--seeds N gives seeds without this check)")


def _check_steps(base: Map, path: str, columns) -> None:
    """Each step of one axis (one key, or a zip's keys taken element by element)."""
    for index in range(min(len(c[2].items) for c in columns)):
        root = base
        for key, key_node, seq, _ in columns:
            root = replace_node(root, key, seq.items[index], key_node.mark)
        try:
            _build(root, path)
        except SpecError as exc:
            key, key_node, seq, where = columns[0] if len(columns) == 1 else \
                _culprit(columns, index, exc)
            raise _placed(exc, key, key_node, seq.items[index], where) from None


def _culprit(columns, index: int, exc: SpecError):
    """The zip column whose key or value the error is placed at (else the first)."""
    for column in columns:
        for node in (column[1], column[2].items[index]):
            if _at(exc, node):
                return column
    return columns[0]


def _at(exc: SpecError, node: YNode | None) -> bool:
    if node is None or exc.line is None:
        return False
    location = node.mark.location()
    return (exc.line, exc.column) == (location.line, location.column)


def _placed(exc: SpecError, key: str, key_node, value: YNode, where: str) -> SpecError:
    """The error as it is when it already points at the sweep's key or value; else placed
    at the value, naming the key and value that led to it."""
    if _at(exc, key_node) or _at(exc, value):
        return exc
    said = f"{exc.key}: " if exc.key else ""
    return fail(value, where, f"with {key}={to_plain(value)!r}: {said}{exc.bare_message}",
                exc.hint)


def _check_param(base: Map, path: str, keys, step) -> None:
    try:
        _build(apply_overrides(base, [set_text(k, v) for k, v in zip(keys, step)]), path)
    except SpecError as exc:
        shown = ", ".join(f"{k}={v!r}" for k, v in zip(keys, step))
        said = exc.key.replace("--set ", "", 1) + ": " if exc.key else ""
        raise SpecError(f"with {shown}: {said}{exc.bare_message}", key=f"--param {keys[0]}",
                        hint=exc.hint) from None


def _build(root: Map, path: str) -> None:
    count_ops(build_experiment(root, path), MAX_OPS)
