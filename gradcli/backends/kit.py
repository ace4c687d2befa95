"""What an eager framework backend supplies (a Kit), and the helpers every backend shares.

Each of torch.py, jax.py and tensorflow.py defines one Kit class; the rest of
the eager machinery (eager.py, eager_program.py, eager_train.py) is written
once against this protocol. Nothing here imports a framework.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import sys
from typing import Any, Callable, Mapping, Protocol, Sequence

import numpy as np

from ..errors import BackendUnavailable


class Kit(Protocol):
    """One framework's tensors, raw ops and gradient machinery."""

    name: str                      # the backend's name
    label: str                     # how notes name the framework
    version: str
    ops: Mapping[str, Callable]    # opset name -> raw forward op(*tensors, **attrs)
    checks: Mapping[str, Callable]  # opset name -> check(arrays, literal) -> note text or None
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

    def differentiate(self, f: Callable, sources: Sequence) -> tuple[list, Callable]:
        """(f(sources), backward(i, seed) -> one gradient or None per source for output i)."""


def installed(module: str, dists: tuple[str, ...]) -> tuple[bool, str]:
    """(available, "module version" or why not), without importing the framework."""
    if module in sys.modules and sys.modules[module] is None:
        return False, f"{module} is not installed"
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        return False, f"{module} is not installed"
    for dist in dists:
        try:
            return True, f"{module} {importlib.metadata.version(dist)}"
        except importlib.metadata.PackageNotFoundError:
            continue
    return True, f"{module} {getattr(sys.modules.get(module), '__version__', '(version unknown)')}"


def unavailable(name: str, exc: object) -> BackendUnavailable:
    """The error for a framework that is missing or fails to import."""
    return BackendUnavailable(f"backend {name!r} needs the {name} package: "
                              f"pip install 'gradcli[{name}]' ({exc})")


def sum_to(kit, t, shape: tuple):
    """Sum t down to shape: undoes broadcasting (as the core's sum_to)."""
    tshape = kit.shape(t)
    lead = len(tshape) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and tshape[lead + i] != 1)
    out = kit.ops["sum"](t, axis=axes, keepdims=True) if axes else t
    return kit.ops["reshape"](out, shape=tuple(shape)) if kit.shape(out) != tuple(shape) else out


def tie_note(module: str, fn: str):
    """A note check for maximum/minimum ties, which torch and jax split half and half."""
    def check(arrays, literal):
        x, y = arrays[0], arrays[1]
        if np.any(np.broadcast_to(x == y, np.broadcast_shapes(x.shape, y.shape))):
            return (f"{fn} ties: {module}.{fn} splits the gradient of tied elements half and half; "
                    "gradcli follows TensorFlow and the numpy core (all of it to x)")
        return None
    return check
