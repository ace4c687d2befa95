"""Every log axis gradcli draws (plot train's y, plot sweep's x and y, the report's): plain
tick labels and limits inside float64's range.

The house style turns mathtext off (text.parse_math: a `$` in a name is a dollar sign), but
matplotlib's own log formatter writes its labels as mathtext (`$\\mathdefault{10^{-2}}$`),
which was then drawn as written (tryout12 3.1). Here a power of ten is written as text with
Unicode superscripts (`10⁻²`, `2×10⁻²` on an axis short enough to label more than decades),
the labels matplotlib's LogFormatter would give, at the ticks it would give.

A diverging run's loss reaches 6e307 and a log axis padded by matplotlib's margins (or a lane
made above it) passes float64's largest number: the limits became inf, the axis kept one
label, and numpy warned on stderr (overflow in exp, multiply; tryout12 2.1). The limits here
are padded in decades and kept inside [tiny, max]; the locator leaves out a tick past max.
"""
from __future__ import annotations

import math

import numpy as np

MAX_DECADE = math.log10(np.finfo(np.float64).max)    # 308.25: 10 ** more is inf
MIN_DECADE = math.log10(np.finfo(np.float64).tiny)   # -307.65: normal numbers only
MANY = 12    # decades past which major ticks are every few decades, at round numbers
PAD = 0.05   # of the span in decades, each side (matplotlib's own margin)
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def power_text(x: float) -> str:
    """A positive number on a log axis as plain text: `10⁻²`, `10⁰`, `3×10⁵`."""
    exponent = math.floor(math.log10(x) + 1e-9)   # 1e-3 is 0.0009999... in binary
    coefficient = x / 10.0 ** exponent
    power = "10" + str(exponent).translate(SUPERSCRIPT)
    if abs(coefficient - round(coefficient)) < 1e-6:
        coefficient = round(coefficient)
    if coefficient == 1:
        return power
    return f"{coefficient:g}×{power}"


def decades(values) -> float | None:
    """How many powers of ten the positive finite values span (None when there are fewer than
    two such values, or when any finite value is 0 or negative): log10(max) - log10(min),
    never max / min, which overflows for 6e307 / 0.3."""
    v = np.asarray(values, dtype=np.float64).ravel()
    v = v[np.isfinite(v)]
    if v.size < 2 or np.any(v <= 0):
        return None
    return float(np.log10(v.max()) - np.log10(v.min()))


def limits(values, pad: float = PAD) -> tuple[float, float] | None:
    """(low, high) of a log axis showing every positive finite value, padded by `pad` of the
    span in decades each side, inside [10 ** MIN_DECADE, float64's max]; None without one."""
    v = np.asarray(values, dtype=np.float64).ravel()
    v = v[np.isfinite(v) & (v > 0)]
    if v.size == 0:
        return None
    lo, hi = float(np.log10(v.min())), float(np.log10(v.max()))
    span = hi - lo if hi > lo else 1.0   # one value: a decade around it
    return to_values(lo - pad * span, hi + pad * span)


def to_values(lo: float, hi: float) -> tuple[float, float]:
    """Limits given in decades as numbers, each kept inside float64's positive range."""
    lo, hi = (min(max(d, MIN_DECADE), MAX_DECADE) for d in (lo, hi))
    with np.errstate(over="ignore"):  # 10 ** 308.2547 rounds past max: inf, then max
        low, high = np.power(10.0, [lo, hi])
    return float(low), float(min(high, np.finfo(np.float64).max))


def set_log(ax, which: str, lims: tuple | None = None, **scale) -> None:
    """Make the x or y axis of ax a log axis with plain tick labels (and these limits)."""
    from matplotlib.ticker import LogFormatter, LogLocator, MaxNLocator

    class PlainLogFormatter(LogFormatter):
        """LogFormatter's choice of ticks to label, each written by power_text."""

        def __call__(self, x, pos=None):
            shown = super().__call__(x, pos)
            return power_text(abs(x)) if shown and x else shown

    class InRangeLogLocator(LogLocator):
        """LogLocator's ticks but those past float64's max (it adds one beyond each limit);
        on an axis of many decades the major ticks at round multiples of decades (10⁰, 10⁵⁰,
        10¹⁰⁰, not 10⁻¹⁵, 10²⁵, ...)."""

        def tick_values(self, vmin, vmax):
            if self._subs is not None and list(np.atleast_1d(self._subs)) == [1.0] \
                    and 0 < vmin < vmax and np.log10(vmax) - np.log10(vmin) > MANY:
                found = MaxNLocator(nbins=8, steps=[1, 2, 2.5, 5, 10], integer=True)
                ticks = found.tick_values(np.log10(vmin), np.log10(vmax))
                ticks = ticks[(ticks >= MIN_DECADE - 1) & (ticks <= MAX_DECADE)]
                return 10.0 ** ticks
            with np.errstate(over="ignore"):  # 10.0 ** 309: inf, left out below
                ticks = np.asarray(super().tick_values(vmin, vmax), dtype=np.float64)
            return ticks[np.isfinite(ticks)]

    x = which == "x"
    if lims is not None:  # no autoscaling as the scale changes: 6e307 padded is inf
        (ax.set_autoscalex_on if x else ax.set_autoscaley_on)(False)
    (ax.set_xscale if x else ax.set_yscale)("log", **scale)
    axis = ax.xaxis if x else ax.yaxis
    axis.set_major_locator(InRangeLogLocator(base=10.0))
    axis.set_minor_locator(InRangeLogLocator(base=10.0, subs="auto"))
    axis.set_major_formatter(PlainLogFormatter(base=10.0))
    axis.set_minor_formatter(PlainLogFormatter(base=10.0, labelOnlyBase=False))
    if lims is not None:
        (ax.set_xlim if x else ax.set_ylim)(*lims)
