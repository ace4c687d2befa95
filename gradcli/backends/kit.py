"""What an eager framework backend supplies (a Kit), and the helpers every backend shares.

Each of torch.py, jax.py and tensorflow.py defines one Kit class; the rest of
the eager machinery (eager.py, eager_program.py, eager_train.py) is written
once against this protocol. Nothing here imports a framework.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple, Protocol, Sequence

import numpy as np

from ..errors import BackendUnavailable
from ..ops.kernels import sum_to_axes
from . import installed  # noqa: F401 - its home is backends/__init__.py (read without numpy)


class Kit(Protocol):
    """One framework's tensors, raw ops and gradient machinery."""

    name: str                      # the backend's name
    label: str                     # how notes name the framework
    version: str
    ops: Mapping[str, Callable]    # op name (gradcli/ops) -> raw forward op(*tensors, **attrs)
    # op name (gradcli/ops) -> check(arrays, literal) -> [EdgeNote]
    checks: Mapping[str, Callable]
    unconnected_text: str          # what the framework's own autodiff does without a path
    norm_clip_epsilon: float | None  # the epsilon its own norm clipping adds, if any
    native_adam: str | None        # its own Adam, if that differs from TensorFlow 1's

    def constant(self, array) -> Any: ...
    def is_tensor(self, value) -> bool: ...
    def dtype_name(self, t) -> str: ...
    def shape(self, t) -> tuple: ...
    def numpy(self, t): ...
    def copy(self, t) -> Any: ...
    def broadcast_to(self, t, shape) -> Any: ...
    def static_conventions(self, experiment) -> list[tuple[str, str]]: ...

    def stop_gradient(self, t) -> Any: ...

    def custom(self, inputs: list, forward: Callable, backward: Callable) -> tuple:
        """forward(*inputs) untracked; going back, backward(inputs, outputs, dys) -> one gradient
        (or None) per input, dys holding None for integer outputs."""

    def gradient(self, build: Callable, x) -> tuple:
        """(the handle on x that y was built from, y = build(handle), d(sum y)/dx built so that
        it can be differentiated again; zeros where y does not reach x): grad(y, x)."""

    def differentiate(self, f: Callable, sources: Sequence) -> tuple[list, Callable]:
        """(f(sources), backward(i, seed) -> one gradient or None per source for output i)."""


# A note's kind says what difference it documents, and so what it may excuse in compare:
NONFINITE = "nonfinite"  # NaN or an infinity on one side where the other has a number: the only
                         # kind that may excuse a (non-finite) gap
FINITE = "finite"        # another number (a tie split, a gradient sent elsewhere): excuses nothing,
                         # since gradcli reports its own value, not the framework's
UNCONNECTED = "unconnected"  # what gradcli reports instead of the framework's answer: excuses nothing


class EdgeNote(NamedTuple):
    """One note an op's check gives: where is a bool array over the op's broadcast input shape,
    True at the elements the note is about; inputs, the positions of the op's inputs whose
    gradient differs there (None: every input)."""

    text: str
    where: Any
    kind: str = FINITE
    inputs: tuple | None = None


def unavailable(name: str, exc: object) -> BackendUnavailable:
    """The error for a framework that is missing or fails to import."""
    return BackendUnavailable(f"backend {name!r} needs the {name} package: "
                              f"pip install 'gradcli[{name}]' ({exc})")


def sum_to(kit, t, shape: tuple):
    """Sum t down to shape: undoes broadcasting (as the core's sum_to)."""
    axes = sum_to_axes(tuple(kit.shape(t)), tuple(shape))
    out = kit.ops["sum"](t, axis=axes, keepdims=True) if axes else t
    return kit.ops["reshape"](out, shape=tuple(shape)) if kit.shape(out) != tuple(shape) else out


def tie_note(module: str, fn: str):
    """A note check for maximum/minimum ties, which torch and jax split half and half."""
    def check(arrays, literal):
        x, y = arrays[0], arrays[1]
        tied = np.broadcast_to(x == y, np.broadcast_shapes(x.shape, y.shape))
        if np.any(tied):
            # both inputs' gradients differ (half each against all to x), by a finite amount
            return [EdgeNote(f"{fn} ties: {module}.{fn} splits the gradient of tied elements half "
                             "and half; gradcli follows TensorFlow and the numpy core (all of it to x)",
                             tied)]
        return []
    return check


def edge_note(module: str, op: str, where: str, theirs: str, ours: str, condition: Callable,
              kind: str = FINITE, inputs: tuple | None = (0,)):
    """A note check for an edge where the framework's own gradient differs from TensorFlow's:
    condition(*input arrays, literal flags) says where (elementwise, or one flag for all); kind,
    whether one side is NaN or infinite there (NONFINITE) or both are numbers (FINITE); inputs,
    which of the op's inputs get the differing gradient (None: all)."""
    def check(arrays, literal):
        with np.errstate(all="ignore"):
            hit = np.asarray(condition(*arrays, literal), dtype=bool)
        if not hit.any():
            return []
        return [EdgeNote(f"{op} {where}: the gradient is {theirs} in {module}, {ours} in TensorFlow "
                         "and the numpy core", hit, kind, inputs)]
    return check


def either(*checks):
    """One note check from several: the notes of those that apply."""
    def check(arrays, literal):
        return [note for c in checks for note in c(arrays, literal)]
    return check


def edge_notes(module: str) -> dict:
    """Where torch's and jax's autodiff give other numbers than TensorFlow's gradient kernels."""
    unchosen = "NaN where the upstream gradient is 0 (the branch a where() did not take)"
    return {
        # TensorFlow's SqrtGrad and ReciprocalGrad return 0 for a zero upstream gradient
        "sqrt": edge_note(module, "sqrt", "at x <= 0 or NaN", unchosen, "0",
                          lambda x, literal: ~(x > 0), NONFINITE),
        "reciprocal": edge_note(module, "reciprocal", "at x = 0 or NaN", unchosen, "0",
                                lambda x, literal: (x == 0) | np.isnan(x), NONFINITE),
        # about the exponent's gradient only: x's is the same number in every framework
        "pow": edge_note(module, "pow(x, y)", "with x < 0, or x NaN and y = 0",
                         "NaN in y (the log of x)", "0 (log(x) masked to 0 where x <= 0)",
                         lambda x, y, literal: (x < 0) | (np.isnan(x) & (y == 0)) if not literal[1]
                         else False, NONFINITE, (1,)),
        "maximum": _nan_x_note(module, "maximum"),
        "minimum": _nan_x_note(module, "minimum"),
    }


def _nan_x_note(module: str, fn: str):
    return edge_note(module, fn, "with x NaN", "sent to x", "sent to y",
                     lambda x, y, literal: np.isnan(x), FINITE, None)


def clip_as_tensorflow(x, lo, hi, *, where, isnan, stop, full_like):
    """tf.clip_by_value = maximum(minimum(x, hi), lo), its value and its gradient, from where():
    ties send the gradient to x, lo > hi gives lo, a NaN stays NaN and sends its gradient to lo."""
    if str(x.dtype).removeprefix("torch.").startswith(("int", "uint")):
        # an integer holds no NaN and no -0.0 (torch's full_like(int64, nan) overflowed)
        low = where(x <= hi, x, hi)
        return where(low >= lo, low, lo)
    low = where(x <= hi, x, where(isnan(x), stop(x), hi))
    # lo + -0.0 is lo exactly (signed zeros too); + NaN keeps minimum's NaN while lo gets dy
    nan_or_zero = stop(where(isnan(low), full_like(low, float("nan")), full_like(low, -0.0)))
    return where(low >= lo, low, lo + nan_or_zero)


# ----- ops every kit shares, written once on the kit's own ops -----
def along_axis(kit, name, x, axis):
    """argmax / argmin / max_with_argmax along one axis."""
    # A 0-d tensor is its own maximum, at index 0, as numpy's and the core's kernels take it;
    # TensorFlow's and jax's argmax refuse a 0-d input, so it goes in as one element.
    ops = kit.ops
    if kit.shape(x) == ():
        x, axis = ops["reshape"](x, shape=(1,)), 0
    return ops[name](x, axis=axis)


def zero_out(kit, x):
    """zero_out's forward: x with all but its first element zeroed, and that element's index."""
    shape = kit.shape(x)
    mask = np.zeros(shape, dtype=bool)
    if mask.size:
        mask.flat[0] = True
    return (kit.ops["where"](kit.constant(mask), x, kit.ops["zeros_like"](x)),
            kit.constant(np.asarray(np.int64(0))))


def summed_vjp(kit, fn, xs: list, floats: list, dys) -> tuple[list, list]:
    """The framework's own vjp of fn(*xs) for the inputs xs[i], i in floats, summed over the
    outputs' upstream gradients dys (None: that output gets none): (one per float input,
    one per input with None for the others)."""
    def f(sources):
        args = list(xs)
        for i, s in zip(floats, sources):
            args[i] = s
        out = fn(*args)
        return list(out) if isinstance(out, (tuple, list)) else [out]

    _, vjp = kit.differentiate(f, [xs[i] for i in floats])
    total = [None] * len(floats)
    for k, dy in enumerate(dys):
        if dy is not None:
            total = [b if a is None else a if b is None else a + b
                     for a, b in zip(total, vjp(k, dy))]
    grads = [None] * len(xs)
    for i, g in zip(floats, total):
        grads[i] = g
    return total, grads
