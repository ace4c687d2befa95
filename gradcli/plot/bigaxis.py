"""Linear axes whose values reach float64's largest numbers, drawn in units of a power of ten.

A linear y axis holding -1.7e308 (a training loss driven to -inf, or 0 and 1.7e308 on one
axis, which gets no log axis since not every value is positive) ended plot train, plot sweep
and plot curve in `internal error: ValueError: arange: cannot compute length`: matplotlib's
linear locator multiplies its step by ten and passes float64's max, its margins around
-1.7e308 .. 1.7e308 are inf, and so are the lanes made below a -1.7e308 for a -inf.

Such an axis is drawn in units of 10^p (p the largest finite value's power of ten): the
values drawn are value / 10^p, between -18 and 18, where every locator, margin and lane
works as it does for any loss; the axis says `×10³⁰⁸` above its tick labels (as matplotlib's
own offset text would) and the legend says so in words. Every point stays where it is on
the axis: nothing is clipped or moved to a lane. plot curve's x axis (a --range reaching
1e300) is drawn so too, its unit at the axis' right end. Below HUGE nothing changes.
"""
from __future__ import annotations

import math

import numpy as np

from .logaxis import SUPERSCRIPT

HUGE = 1e300   # a finite value this big (either sign) puts the axis in units of 10^p


def power(values) -> int | None:
    """p when the largest finite |value| is at least HUGE (the axis is drawn in units of
    10^p, p its power of ten: 308 for 1.7e308), else None."""
    v = np.asarray(values, dtype=np.float64).ravel()
    v = np.abs(v[np.isfinite(v)])
    if v.size == 0 or v.max() < HUGE:
        return None
    return int(math.floor(math.log10(v.max())))


def scaled(values, p: int | None) -> np.ndarray:
    """The values as drawn on an axis in units of 10^p (as they are for p None); NaN and
    inf stay what they are."""
    v = np.asarray(values, dtype=np.float64)
    return v if p is None else v / 10.0 ** p


def unit(p: int) -> str:
    """`×10³⁰⁸`: what the axis' tick labels are multiplied by, in plain text."""
    return "×10" + str(p).translate(SUPERSCRIPT)


def note(p: int, which: str = "y") -> str:
    """The legend's words for an axis in units of 10^p (two short lines: never cut)."""
    where = "top" if which == "y" else "right end"  # where matplotlib puts the offset text
    return (f"{which} axis in units of 10{str(p).translate(SUPERSCRIPT)} ({unit(p)} at its "
            f"{where}):\nvalues near float64's largest, 1.8×10³⁰⁸")


def set_units(ax, p: int | None, which: str = "y") -> None:
    """Label the axis' ticks as numbers of 10^p, `×10^p` above them (nothing for p None)."""
    if p is None:
        return
    from matplotlib.ticker import ScalarFormatter

    class UnitFormatter(ScalarFormatter):
        """Plain tick labels of the values drawn (already in units of 10^p), the unit as the
        offset text where matplotlib writes its own `1e308`."""

        def get_offset(self):
            return unit(p)

    formatter = UnitFormatter(useOffset=False)
    formatter.set_scientific(False)
    (ax.yaxis if which == "y" else ax.xaxis).set_major_formatter(formatter)
