"""What the oracle tests share: specs written as YAML text, run through the user's path
(load_spec_text -> runner.run) on every backend, and float64 comparisons with a reference
computed in the test itself (numpy, or TensorFlow called directly).

Nothing here computes a reference value: that is each test's job.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from gradcli import runner
from gradcli.spec import load_spec_text

# Two float64 kernels for the same function (numpy's and a framework's) may differ by a few ulps.
RTOL, ATOL = 1e-9, 1e-12


def run_spec(text: str, backend: str, *, numeric: bool = False):
    """The user's path: the spec's YAML text loaded and run on one backend."""
    return runner.run(load_spec_text(text, path="oracle.yaml"), backend=backend, numeric=numeric)


def literal(value) -> str:
    """A numpy array (or number) as a YAML flow literal that reads back bit for bit."""
    array = np.asarray(value)
    if array.ndim == 0:
        item = array.item()
        if isinstance(item, bool):
            return "true" if item else "false"
        if isinstance(item, int):
            return str(item)
        text = repr(float(item))
        mantissa, e, exponent = text.partition("e")
        return f"{mantissa}.0e{exponent}" if e and "." not in mantissa else text  # YAML needs the dot
    return "[" + ", ".join(literal(v) for v in array) + "]"


def mismatch(label: str, actual, expected, rtol: float = RTOL, atol: float = ATOL) -> list[str]:
    """[] when actual matches expected (None only matches None); else one line saying how not."""
    if actual is None or expected is None:
        return [] if actual is None and expected is None else [f"{label}: got {actual!r}, "
                                                                f"expected {expected!r}"]
    a, e = np.asarray(actual), np.asarray(expected)
    if a.shape != e.shape:
        return [f"{label}: shape {a.shape}, expected {e.shape}"]
    if e.dtype.kind in "biu" or a.dtype.kind in "biu":
        if a.dtype.kind != e.dtype.kind:
            return [f"{label}: dtype {a.dtype}, expected {e.dtype}"]
        return [] if np.array_equal(a, e) else [f"{label}: {a.ravel()[:8]}, expected {e.ravel()[:8]}"]
    a, e = a.astype(np.float64), e.astype(np.float64)
    if np.allclose(a, e, rtol=rtol, atol=atol, equal_nan=True):
        return []
    with np.errstate(all="ignore"):
        gap = np.nanmax(np.abs(a - e)) if a.size else 0.0
    return [f"{label}: {np.round(a.ravel()[:6], 9)}, expected {np.round(e.ravel()[:6], 9)} "
            f"(max |diff| {gap:.3g})"]


def check(failures: list[str]) -> None:
    """Fail with every mismatch at once, so one run shows the whole picture."""
    assert not failures, "\n".join(failures)


def tensorflow():
    """TensorFlow, imported quietly: the reference framework of the seeds."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return pytest.importorskip("tensorflow")
