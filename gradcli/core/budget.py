"""A memory budget: refuse an op before its result is allocated, not after.

An op's result shape follows from its inputs' shapes and its attributes, so it
is known before the kernel runs: `admit` refuses an op whose result alone, or
together with everything built under the same budget, would pass the budget.
The core calls it from make_op (and before a random draw); the eager backends
call it before each framework op, with one ledger per build. Outside
`memory_budget()` nothing is limited: `import gradcli` users opt in.
"""
from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np

from ..errors import GraphError
from ..ops import DRAWS, OPS
from .shapes import as_shape, indexed_shape

GiB = 1 << 30
DEFAULT_TOTAL = 2 * GiB        # what one run's graph may hold; one tensor may take half
_BOOLEAN = frozenset(name for name, spec in OPS.items() if spec.result == "bool")
# Ops whose result shape is their `shape` attribute: the table's draws and the core's own
# gradient helpers (ops_array.py: not in the table).
_SHAPE_ATTR = frozenset(DRAWS) | {"broadcast_to", "sum_to", "getitem_grad"}
# Views of their input: their result is not new memory unless numpy must copy.
_VIEWS = frozenset({"reshape", "transpose", "broadcast_to", "identity", "getitem"})


class MemoryBudget:
    """Bytes a run may hold in tensors (`total`) and in one tensor (`tensor`: half of it)."""

    __slots__ = ("total", "tensor", "used", "hint")

    def __init__(self, total: int = DEFAULT_TOTAL, hint: str = "") -> None:
        if total <= 0:
            raise GraphError(f"a memory budget must be positive, got {total}")
        self.total, self.tensor, self.used, self.hint = int(total), int(total) // 2, 0, hint

    def fresh(self) -> "MemoryBudget":
        """A ledger with the same limits and nothing spent (one per eager build)."""
        return MemoryBudget(self.total, self.hint)

    def admit(self, op: str, shapes, dtypes, attrs, *, count: bool = False) -> None:
        """Refuse `op` (input shapes and dtypes, attributes) if its result passes the budget.

        With `count`, the predicted result is counted as spent (eager frameworks, whose
        tensors are not inspected); the core counts what its kernels really allocate.
        """
        shape = result_shape(op, [tuple(s) for s in shapes], attrs)
        if shape is None:
            return  # shapes that do not fit: the kernel itself raises a clear error
        dtype = result_dtype(op, dtypes, attrs)
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes > self.tensor:
            raise GraphError(f"op {op!r} would make a tensor of shape {list(shape)} {dtype} "
                             f"({size_text(nbytes)}); the memory budget allows "
                             f"{size_text(self.tensor)} per tensor{self._hint()}")
        if op not in _VIEWS and self.used + nbytes > self.total:
            raise GraphError(f"op {op!r} would make a tensor of shape {list(shape)} {dtype} "
                             f"({size_text(nbytes)}) while the graph already holds "
                             f"{size_text(self.used)}; the memory budget allows "
                             f"{size_text(self.total)} in all{self._hint()}")
        if count and op not in _VIEWS:
            self.used += nbytes

    def spend(self, values, inputs) -> None:
        """Count the arrays a kernel really allocated (not views, not its inputs passed on)."""
        for value in values:
            if (isinstance(value, np.ndarray) and value.base is None
                    and not any(value is v for v in inputs)):
                self.used += value.nbytes

    def _hint(self) -> str:
        return f" ({self.hint})" if self.hint else ""


_active: MemoryBudget | None = None


def active() -> MemoryBudget | None:
    """The budget ops are built under, or None."""
    return _active


@contextmanager
def memory_budget(total: int = DEFAULT_TOTAL, hint: str = ""):
    """Build ops under a budget of `total` bytes (`total // 2` per tensor); yields it."""
    global _active
    outer, _active = _active, MemoryBudget(total, hint)
    try:
        yield _active
    finally:
        _active = outer


def size_text(nbytes: int) -> str:
    """1.5 GiB, 300 MiB, 12 KiB, 7 bytes."""
    for unit, scale in (("GiB", GiB), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            value = nbytes / scale  # three digits, never an exponent (1009 MiB, not 1.01e+03)
            return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{nbytes} bytes"


def parse_size(text: str) -> int:
    """'16GiB', '512 MiB', '2G', '1e9' -> bytes; a ValueError names what is expected."""
    units = {"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "kb": 1000, "m": 1 << 20,
             "mib": 1 << 20, "mb": 10 ** 6, "g": GiB, "gib": GiB, "gb": 10 ** 9,
             "t": 1 << 40, "tib": 1 << 40, "tb": 10 ** 12}
    cleaned = text.strip().lower().replace(" ", "")
    number = cleaned.rstrip("kmgtib")
    unit = cleaned[len(number):]
    try:
        value = float(number) * units[unit]
    except (KeyError, ValueError):
        raise ValueError(f"expected a size such as 16GiB, 512MiB or 1e9 (bytes), got {text!r}") \
            from None
    if not math.isfinite(value) or value < 1:
        raise ValueError(f"expected a positive size, got {text!r}")
    return int(value)


# ----- result shapes, from input shapes and attributes alone -----
def result_shape(op: str, shapes: list[tuple], attrs) -> tuple | None:
    """The shape `op` will produce, or None when the inputs do not fit (the kernel says why)."""
    if op in _SHAPE_ATTR:
        return as_shape(attrs["shape"])
    if op == "matmul":
        return _matmul(*shapes) if len(shapes) == 2 else None
    if op == "one_hot":
        return shapes[0] + (int(attrs["depth"]),)
    if op == "getitem":
        try:
            return indexed_shape(shapes[0], attrs["index"])
        except (IndexError, TypeError, ValueError):
            return None
    if op in ("concat", "stack"):
        return _joined(op, shapes, int(attrs.get("axis", 0)))
    if op == "reshape":
        return shapes[0]  # the same elements
    return _broadcast(shapes)  # elementwise ops; an upper bound for reductions


def result_dtype(op: str, dtypes, attrs) -> np.dtype:
    if op in _BOOLEAN:
        return np.dtype(bool)
    if attrs.get("dtype") is not None:
        return np.dtype(attrs["dtype"])
    return np.result_type(*[np.dtype(d) for d in dtypes]) if dtypes else np.dtype(np.float64)


def _broadcast(shapes: list[tuple]) -> tuple | None:
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        for i, n in enumerate(shape, ndim - len(shape)):
            if n != 1:
                if out[i] not in (1, n):
                    return None
                out[i] = n
    return tuple(out)


def _matmul(a: tuple, b: tuple) -> tuple | None:
    if not a or not b:
        return None
    a2, b2 = ((1,) + a if len(a) == 1 else a), (b + (1,) if len(b) == 1 else b)
    batch = _broadcast([a2[:-2], b2[:-2]])
    if batch is None or a2[-1] != b2[-2]:
        return None
    return batch + ((a2[-2],) if len(a) > 1 else ()) + ((b2[-1],) if len(b) > 1 else ())


def _joined(op: str, shapes: list[tuple], axis: int) -> tuple | None:
    if not shapes:
        return None
    first = shapes[0]
    ndim = len(first) + (op == "stack")
    if not -ndim <= axis < max(ndim, 1) or any(len(s) != len(first) for s in shapes):
        return None
    axis %= max(ndim, 1)
    if op == "stack":
        return first[:axis] + (len(shapes),) + first[axis:]
    return first[:axis] + (sum(s[axis] for s in shapes),) + first[axis + 1:]
