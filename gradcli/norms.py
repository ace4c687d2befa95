"""Euclidean norms and cosines of gradients over float64's whole range: the one place the run
summary (runner.summarize) and a sweep's gradient statistics (sweep/stats.py) compute them.

sqrt(sum(x**2)) overflows to inf once an element passes ~1e154 and underflows to 0 below
~1e-162: the gradients of exp(±400) gave norms inf / 0 and cosines 0 / 1 where the right ones
are 1.5e174 / 2.0e-174 and 0.908 / -1. Where the plain sum of squares lies safely inside the
range ([2**-900, 2**900]: no square overflows, and squares lost to underflow weigh less than
n * 2**-1074 against at least 2**-900), the plain formulas are kept, so that ordinary numbers
stay what they were, bit for bit. Elsewhere the vector is first divided by the power of two at
its largest |element| (an exact division), as LAPACK's dnrm2 scales. Written here rather than
taken from numpy: np.linalg.norm of a vector is sqrt(dot(x, x)), unscaled, and math.hypot
would walk a million-element gradient in Python.
"""
from __future__ import annotations

import numpy as np

_LOW, _HIGH = 2.0 ** -900, 2.0 ** 900          # where a plain sum of squares is exact enough
_LOW_NORM, _HIGH_NORM = 2.0 ** -450, 2.0 ** 450  # the norms of those sums


def norm(value) -> float:
    """‖value‖₂ (flattened, in float64); NaN when an element is NaN, inf when one is ±inf."""
    return _root(np.ravel(np.asarray(value, dtype=np.float64)), lambda x: np.sum(np.square(x)))


def rms_norm(rows: np.ndarray) -> float:
    """sqrt(mean_r ‖rows[r]‖²), over the rows of a 2-D array, scaled as norm."""
    return _root(rows, lambda x: np.mean(np.sum(np.square(x), axis=1)))


def _root(x: np.ndarray, mean_square) -> float:
    with np.errstate(all="ignore"):
        plain = mean_square(x)
        if _LOW <= plain <= _HIGH or (not np.isfinite(plain) and not np.isfinite(x).all()):
            return float(np.sqrt(plain))
        scale = power_of_two_scale(x)
        return 0.0 if scale == 0 else float(scale * np.sqrt(mean_square(x / scale)))


def cosine(a, b, norms: tuple[float, float] | None = None) -> float:
    """cos(a, b) in [-1, 1]: 1 when both are zero, 0 when one is; `norms`: (norm(a), norm(b))
    when the caller already has them."""
    a = np.ravel(np.asarray(a, dtype=np.float64))
    b = np.ravel(np.asarray(b, dtype=np.float64))
    na, nb = norms if norms is not None else (norm(a), norm(b))
    if na == 0 and nb == 0:
        return 1.0
    if na == 0 or nb == 0:
        return 0.0
    with np.errstate(all="ignore"):
        if not (_LOW_NORM <= na <= _HIGH_NORM and _LOW_NORM <= nb <= _HIGH_NORM) and (
                np.isfinite(na) and np.isfinite(nb)):
            # dot(a, b) or na * nb would leave the range: both directions in units of their
            # own largest element, whose norms are in [1, 2 sqrt(n)]
            a, b = a / power_of_two_scale(a), b / power_of_two_scale(b)
            na, nb = norm(a), norm(b)
        return float(np.clip(np.dot(a, b) / (na * nb), -1.0, 1.0))


def power_of_two_scale(x: np.ndarray) -> float:
    """The power of two p with max |x| / p in [1, 2) (0 for an empty or all-zero x); x / p is
    exact wherever it stays a normal number."""
    peak = float(np.max(np.abs(x))) if np.size(x) else 0.0
    return float(np.ldexp(1.0, np.frexp(peak)[1] - 1)) if peak else 0.0
