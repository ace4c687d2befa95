"""Whether a run's value meets its expected value within `expect.tolerance`, and how a miss
reads.

A float or boolean value is compared in float64 as numpy.allclose(value, expected, rtol,
atol, equal_nan=True): the tolerance spec-v1 gives `expect`. An integer value (int32, int64,
any numpy integer) is compared exactly, |a - e| <= atol + rtol * |e| in integer arithmetic:
float64 holds every integer only up to 2**53 and int64 reaches 2**63, so through float64
9007199254740993 met an expected 9007199254740992 with rtol 0 and atol 0 (audit11 E1).
Written here rather than with numpy: np.isclose and np.allclose turn integers into float64.

A float value beside an integer expectation float64 cannot hold (above 2**53) is compared
with it exactly too, as Python compares an int with a float: 9007199254740992.0 met an
expected 9007199254740993 with rtol 0 and atol 0 through float64. Other expectations keep
numpy.allclose's float64 comparison.

A miss shows both sides with enough digits to tell them apart (integers in full): 6
significant digits, more only where those read alike ("expected 1, got 1" told nothing).
"""
from __future__ import annotations

import math

import numpy as np

from .spelling import array_text
from .spelling import number_text as spelled

SHOWN = 6          # significant digits (fractional ones in an array) a miss starts with
MOST_SHOWN = 17    # enough for any two float64 numbers to read apart
THRESHOLD = 8      # an array longer than this is summarized ("...")
LINE = 1 << 30     # never wrapped


def miss(expected, actual, rtol: float, atol: float) -> str | None:
    """None when `actual` meets `expected` (an array of the same shape, or one number for
    every element); else what differed: "expected E, got A (max |diff| G; rtol R, atol T)"."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    if expected.shape != actual.shape and expected.ndim:
        return f"expected shape {expected.shape}, got {actual.shape}"
    if actual.dtype.kind in "iu":
        met, gap = _integer_met(expected, actual, rtol, atol)
        shown, actual = _as_written(expected), actual.astype(object)  # both unpadded, alike
    elif _beyond_float64(expected):
        met, gap = _exact_met(expected, actual.astype(np.float64), rtol, atol)
        shown, actual = _as_written(expected), actual.astype(np.float64).astype(object)
    else:
        exp64, act64 = expected.astype(np.float64), actual.astype(np.float64)
        if np.allclose(act64, exp64, rtol=rtol, atol=atol, equal_nan=True):
            return None
        met = np.isclose(act64, exp64, rtol=rtol, atol=atol, equal_nan=True)
        gap = _float_gap(act64, exp64)
        shown = exp64 if expected.dtype == object else expected  # bool stays true/false
    if met.all():
        return None
    said, got = _apart(shown, actual)
    where = ""
    if said == got and met.ndim:  # the difference is in the summarized part: name its first element
        at = np.unravel_index(int(np.argmin(met)), met.shape)
        there = _apart(np.broadcast_to(shown, actual.shape)[at], actual[at])
        where = f"; at [{', '.join(map(str, at))}]: expected {there[0]}, got {there[1]}"
    return (f"expected {said}, got {got} (max |diff| {_gap_text(gap)}; "
            f"rtol {rtol:g}, atol {atol:g}{where})")


def _integer_met(expected: np.ndarray, actual: np.ndarray, rtol: float,
                 atol: float) -> tuple[np.ndarray, object]:
    """(met elementwise, the largest |a - e|: an int, a Fraction, inf or NaN), exactly.

    Every finite float is a fraction n / 2**k, so scaling by the largest denominator makes
    the expected values, the tolerances and the values integers, and the comparison exact
    for any magnitude (Python ints do not overflow)."""
    from fractions import Fraction

    exp = expected.astype(object)  # Python ints and floats, as written
    finite = np.array([_finite(v) for v in exp.flat], dtype=bool).reshape(exp.shape)
    ratios = [v.as_integer_ratio() if ok else (0, 1) for v, ok in zip(exp.flat, finite.flat)]
    scale = max(d for _, d in ratios)
    scaled = np.fromiter((n * (scale // d) for n, d in ratios), dtype=object,
                         count=exp.size).reshape(exp.shape)
    (pa, qa), (pr, qr) = float(atol).as_integer_ratio(), float(rtol).as_integer_ratio()
    common = max(qa, qr * scale)  # all powers of two: the largest is their common multiple
    # Python ints, a - e cannot wrap; 1-d, as numpy makes a 0-d object result a Python int,
    # which np.abs would turn back into an int64
    a = actual.astype(object).reshape(-1)
    scaled = np.broadcast_to(scaled, actual.shape).reshape(-1)
    gap = np.abs(a * scale - scaled)
    bound = pa * (common // qa) + pr * (common // (qr * scale)) * np.abs(scaled)
    met = np.asarray(gap * (common // scale) <= bound, dtype=bool).reshape(actual.shape)
    met &= np.broadcast_to(finite, met.shape)  # an integer never meets NaN or inf
    if not finite.all():
        largest = math.nan if any(math.isnan(v) for v in exp[~finite].flat) else math.inf
    else:
        largest = Fraction(int(gap.max()), scale) if gap.size else 0
    return met, largest


def _beyond_float64(expected: np.ndarray) -> bool:
    """Whether expected holds an integer float64 cannot hold (9007199254740993 is read as
    ...992 there): a float value is then compared with it exactly (_exact_met)."""
    return expected.dtype.kind in "iuO" and any(
        isinstance(v, int) and not isinstance(v, bool) and _finite(v) and int(float(v)) != v
        for v in expected.astype(object).flat)


def _exact_met(expected: np.ndarray, actual: np.ndarray, rtol: float,
               atol: float) -> tuple[np.ndarray, object]:
    """(met elementwise, the largest |a - e|) for a float64 value beside integer expectations
    float64 cannot hold, exactly, as Python compares an int with a float: every finite float
    is a fraction, so |a - e| <= atol + rtol * |e| in fractions; a NaN or an infinity on
    either side as numpy.isclose (equal_nan=True) and numpy's gap. 9007199254740992.0 no
    longer meets 9007199254740993 with rtol 0 and atol 0, and the gap reads 1."""
    from fractions import Fraction

    exp = np.broadcast_to(expected.astype(object), actual.shape)
    met = np.zeros(actual.shape, dtype=bool)
    gaps, odd = [], False
    bound_a, bound_r = Fraction(float(atol)), Fraction(float(rtol))
    for at in np.ndindex(actual.shape):
        a, e = float(actual[at]), exp[at]
        if math.isfinite(a) and _finite(e):
            gap = abs(Fraction(a) - Fraction(e))
            met[at] = gap <= bound_a + bound_r * abs(Fraction(e))
            gaps.append(gap)
        else:
            odd = True
            met[at] = bool(np.isclose(a, float(e), rtol=rtol, atol=atol, equal_nan=True))
    if odd:
        largest = _float_gap(actual, np.asarray(exp, dtype=np.float64))
    else:
        largest = max(gaps, default=0)
    return met, largest


def _finite(value) -> bool:
    return isinstance(value, int) or math.isfinite(value)


def _float_gap(a: np.ndarray, b: np.ndarray) -> float:
    from .runner import max_gap  # its one definition: compare and summaries use it too
    return max_gap(a, b)


def _gap_text(gap) -> str:
    if isinstance(gap, int) or getattr(gap, "denominator", None) == 1:
        return str(int(gap))
    return spelled(float(gap), ".3g")


def _as_written(expected: np.ndarray) -> np.ndarray:
    """An expected array beside an integer value, as Python numbers: whole ones as ints, both
    shown in full (_text)."""
    values = [int(v) if _finite(v) and float(v).is_integer() else v
              for v in expected.astype(object).flat]
    return np.fromiter(values, dtype=object, count=len(values)).reshape(expected.shape)


def _apart(expected, actual) -> tuple[str, str]:
    """Both texts with the fewest digits (from SHOWN) that tell them apart; with SHOWN
    where none do (the difference is summarized away, or there is none to see)."""
    for digits in range(SHOWN, MOST_SHOWN + 1):
        texts = _text(expected, digits), _text(actual, digits)
        if texts[0] != texts[1]:
            return texts
    return _text(expected, SHOWN), _text(actual, SHOWN)


def _text(value, digits: int) -> str:
    """An integer value and its expectation (Python numbers) in full, the shortest text of
    a float beside them; a float value and its expectation with `digits`."""
    array = np.asarray(value)
    if array.ndim:  # one line: a failure is one line of the report
        options = ({"formatter": {"object": spelled}} if array.dtype == object
                   else {"precision": digits})
        return array_text(array, threshold=THRESHOLD, max_line_width=LINE, **options)
    item = array.item()
    exact = isinstance(item, int) or array.dtype == object
    return spelled(item, "" if exact else f".{digits}g")
