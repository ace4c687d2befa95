"""The argument and gradient shape rules that the core and the eager backends share, each
written once: an op's axes and index items, normalized and checked against its input's
shape, and how a gradient rule's result is fitted to its input (or refused, with the error).

Plain functions over shapes and dtype names (numpy and errors alone): the core applies them
to its tensors (ops_array.py, autodiff.py's _fit), the eager backends to a kit's
(backends/eager_args.py, backends/eager.py's _fit).
"""
from __future__ import annotations

import numpy as np

from ..errors import GradientError, GraphError

_NO_BYTES = np.dtype([])  # itemsize 0: index a stand-in array without allocating


# ----- an op's arguments -----
def axes(axis, shape: tuple) -> tuple[int, ...] | None:
    """A reduction's axis (None: all; an int; several) as non-negative axes of shape."""
    if axis is None:
        return None
    ndim = len(shape)
    items = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    for a in items:
        if not -ndim <= a < max(ndim, 1):  # a 0-d tensor takes axis 0, as numpy's kernels do
            raise GraphError(f"axis {a} is out of range for a tensor of shape {shape}")
    return tuple(int(a) % max(ndim, 1) for a in items)


def permutation(axes, ndim: int) -> tuple[int, ...]:
    """transpose's axes: as given, or all of them reversed (None)."""
    return tuple(reversed(range(ndim))) if axes is None else tuple(int(a) for a in axes)


_MAX_SIZE = np.iinfo(np.intp).max


def as_shape(shape) -> tuple[int, ...]:
    """A shape attribute (reshape's, a random draw's: one int or several) as a tuple of ints."""
    dims = (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)
    size = 1
    for dim in dims:
        if dim > 0:
            size *= dim
    if size > _MAX_SIZE:  # numpy's own limit, for every backend (TF's Tile overflows past it)
        raise GraphError(f"shape {list(dims)} is too big: its dimensions (zeros left out) "
                         f"multiply to more than {_MAX_SIZE:,}, the largest size of an array")
    return dims


def one_axis(axis, shape: tuple) -> int:
    """The one axis of argmax, argmin and max_with_argmax, non-negative."""
    return axes(int(axis), shape)[0]


def index_items(index, shape: tuple | None = None) -> tuple:
    """Index items as numpy takes them (lists become int64 arrays); booleans refused. Given
    shape, checked to fit it (the eager backends: the frameworks' own errors differ; the core's
    numpy kernel raises numpy's, as a GraphError)."""
    items = []
    for item in (index if isinstance(index, tuple) else (index,)):
        if isinstance(item, list):
            item = np.asarray(item, dtype=np.int64)
        elif isinstance(item, (bool, np.bool_)):
            raise GraphError("indexing with a boolean is not supported; index with numbers")
        items.append(item)
    items = tuple(items)
    if shape is not None:
        try:
            indexed_shape(shape, items)
        except (IndexError, TypeError, ValueError) as exc:
            raise GraphError(f"index {index!r} does not fit a tensor of shape {shape}: "
                             f"{exc}") from None
    return items


def indexed_shape(shape: tuple, items: tuple) -> tuple:
    """The shape of x[items] for an x of shape, found without allocating (numpy's IndexError,
    TypeError or ValueError where the items do not fit)."""
    return np.broadcast_to(np.empty((), _NO_BYTES), shape)[items].shape


# ----- a gradient rule's result, fitted to its input -----
def not_a_gradient(name: str, op: str, i: int, value) -> GradientError:
    """The error for a rule that returned neither a tensor, a number nor None."""
    return GradientError(f"gradient {name!r} for op {op!r} returned a {type(value).__name__} for "
                         f"input {i}; expected a tensor, a number or None", gradient=name)


def fitting(name: str, op: str, i: int, g: tuple[str, tuple], x: tuple[str, tuple],
            strict: bool, x_name: str | None = None) -> tuple[bool, str | None]:
    """How a rule's gradient g (dtype name, shape) is brought to its input x's: (cast to x's
    dtype?, None | "broadcast" (a scalar) | "sum" (broadcasting undone)), or the error.

    A float gradient of another float dtype is wrong, not cast. Built-in rules leave
    broadcasting to be undone here; a user-written rule (strict) must return the input's shape
    or a scalar, as spec-v1 says: summing its result down would hide a wrong gradient behind a
    plausible one.
    """
    (gd, gs), (xd, xs) = g, x
    cast = gd != xd
    if cast and gd.startswith("float"):
        raise GradientError(f"gradient {name!r} for op {op!r} returned {gd} for input {i} of "
                            f"dtype {xd}", gradient=name)
    if gs == xs:
        return cast, None
    if gs == ():
        return cast, "broadcast"
    try:
        fits = not strict and np.broadcast_shapes(gs, xs) == gs
    except ValueError:
        fits = False
    if not fits:
        shown = f"input {i}" if x_name is None else f"input {i} ({x_name})"
        raise GradientError(f"gradient {name!r} for op {op!r} returned shape {gs} for {shown} "
                            f"of shape {xs}; expected {xs} (a scalar is broadcast)",
                            gradient=name)
    return cast, "sum"
