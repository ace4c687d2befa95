"""Euclidean norms, cosines, means and spreads of gradients over float64's whole range: the one
place the run summary (runner.summarize) and a sweep's statistics (sweep/stats.py) compute them.

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


def mean_rows(x: np.ndarray) -> np.ndarray:
    """The mean over axis 0 (the runs) of a 2-D array of finite numbers; where the plain mean's
    sum overflows (two runs near 1e308), that column's mean is taken in units of the power of
    two at its largest |element| (an exact division), so it is finite, as every mean of finite
    numbers is. The other columns keep the plain mean, bit for bit."""
    with np.errstate(all="ignore"):
        plain = np.mean(x, axis=0)
        bad = ~np.isfinite(plain)
        if bad.any():
            column = x[:, bad]
            scale = np.ldexp(1.0, np.frexp(np.max(np.abs(column), axis=0))[1] - 1)
            plain[bad] = np.mean(column / scale, axis=0) * scale
    return plain


def scaled_difference(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, float]:
    """(d, p) with a − b = d · p for finite a and b: (a − b, 1.0) where no element of a − b
    overflows (the plain numbers), else both in units of the power of two p at their largest
    |element| (1e308 − (−1e308) would be inf). The norm of the difference is norm(d) · p."""
    with np.errstate(all="ignore"):
        d = a - b
        if np.isfinite(d).all() or not (np.isfinite(a).all() and np.isfinite(b).all()):
            return d, 1.0
        p = max(power_of_two_scale(a), power_of_two_scale(b))
        return a / p - b / p, p


def deviation_stats(values: np.ndarray) -> tuple[float, float]:
    """(mean, std with ddof 1) of one column's finite values (at least two): numpy's, and where
    either overflows (values near 1e308, or spread over 1e154, whose squares overflow), from
    the overflow-safe mean and norm: std = ‖x − mean‖ / sqrt(n − 1)."""
    with np.errstate(all="ignore"):
        mean, std = float(values.mean()), float(values.std(ddof=1))
        if np.isfinite(mean) and np.isfinite(std):
            return mean, std
        mean = float(mean_rows(values.reshape(-1, 1))[0])
        d, p = scaled_difference(values, np.full_like(values, mean))
        return mean, float(norm(d) / np.sqrt(values.size - 1) * p)
