"""What a line plot would otherwise hide: jumps, NaN and infinities, values off scale.

Pure numpy, so the rules are testable without drawing: the figure functions
draw what these return.
"""
from __future__ import annotations

import numpy as np

from .logaxis import decades as decade_span

JUMP_SHARE = 0.02   # a step bigger than this share of the series' range may be a jump ...
JUMP_RATIO = 4.0    # ... when it is this many times the typical step around it
WINDOW = 3
BIGGEST = float(np.finfo(np.float64).max)

# Where a series' marks sit, in axes coordinates (0 bottom, 1 top), and how they look.
EDGE = {"+inf": (0.97, "^", True), "above": (0.97, "^", False), "NaN": (0.03, "X", True),
        "-inf": (0.03, "v", True), "below": (0.03, "v", False)}
EDGE_TEXT = {"+inf": "+inf", "-inf": "-inf", "NaN": "NaN", "above": "off scale (above)",
             "below": "off scale (below)"}


def jumps(y) -> np.ndarray:
    """One flag per segment (between point i and i+1): the series jumps there, so the
    segment is not drawn (a vertical line would pretend that the values in between occur)."""
    y = np.asarray(y, dtype=np.float64)
    with np.errstate(all="ignore"):
        steps = np.abs(np.diff(y))
    finite = np.isfinite(y)
    if finite.sum() < 2:
        return np.zeros(max(len(y) - 1, 0), dtype=bool)
    with np.errstate(over="ignore"):  # -1.7e308 .. 1.7e308: inf, no jump is that big
        scale = float(np.max(y[finite]) - np.min(y[finite]))
    if _flat(float(np.min(y[finite])), float(np.max(y[finite]))):
        return np.zeros(len(steps), dtype=bool)
    flags = np.zeros(len(steps), dtype=bool)
    for i, step in enumerate(steps):
        if not np.isfinite(step) or step <= JUMP_SHARE * scale:
            continue
        around = np.concatenate([steps[max(0, i - WINDOW):i], steps[i + 1:i + 1 + WINDOW]])
        around = around[np.isfinite(around)]
        typical = float(np.median(around)) if around.size else 0.0
        flags[i] = step > JUMP_RATIO * typical
    return flags


def broken(x, y) -> tuple[np.ndarray, np.ndarray]:
    """x and y with a NaN point inserted inside every jump, which matplotlib leaves undrawn."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    at = np.flatnonzero(jumps(y)) + 1
    return np.insert(x, at, np.nan), np.insert(y, at, np.nan)


def nonfinite(y) -> dict[str, np.ndarray]:
    """Where the series is NaN, +inf and -inf: {"NaN": mask, "+inf": mask, "-inf": mask},
    only the kinds present."""
    y = np.asarray(y, dtype=np.float64)
    masks = {"NaN": np.isnan(y), "+inf": np.isposinf(y), "-inf": np.isneginf(y)}
    return {kind: mask for kind, mask in masks.items() if mask.any()}


def limits(series, pad: float = 0.08) -> tuple[float, float] | None:
    """y limits that show every finite value of the given series (padded), or None."""
    finite = [np.asarray(s, dtype=np.float64) for s in series if s is not None]
    finite = np.concatenate([s[np.isfinite(s)] for s in finite]) if finite else np.array([])
    if finite.size == 0:
        return None
    lo, hi = float(finite.min()), float(finite.max())
    if _flat(lo, hi):  # rounding noise around a constant is not worth a scale of 1e-15
        middle = (lo + hi) / 2
        return middle - max(1.0, abs(middle)) * 0.5, middle + max(1.0, abs(middle)) * 0.5
    # in halves, and inside float64's range: -1.7e308 .. 1.7e308 spans more than its max
    span = hi / 2 - lo / 2
    return max(lo - 2 * pad * span, -BIGGEST), min(hi + 2 * pad * span, BIGGEST)


def _flat(lo: float, hi: float) -> bool:
    """A series whose spread is float rounding (or nothing) around its size: a constant."""
    return hi - lo <= 1e-9 * max(1.0, abs(lo), abs(hi))


def off_scale(y, lims) -> dict[str, np.ndarray]:
    """Finite values outside the limits: {"above": mask, "below": mask}, only those present."""
    y = np.asarray(y, dtype=np.float64)
    if lims is None:
        return {}
    with np.errstate(invalid="ignore"):
        masks = {"above": np.isfinite(y) & (y > lims[1]), "below": np.isfinite(y) & (y < lims[0])}
    return {kind: mask for kind, mask in masks.items() if mask.any()}


def spans_decades(values, decades: float = 2.0) -> bool:
    """True when the positive finite values span more than this many powers of ten (log scale)."""
    found = decade_span(values)  # in decades: max / min overflowed for 6e307 / 0.3 (tryout12 2.1)
    return found is not None and found > decades


def draw_edges(ax, x, kinds: dict, label: str, color: str, levels: dict | None = None,
               **style) -> list:
    """Mark the points of each kind ({kind: mask}, from nonfinite and off_scale) at the axes'
    edge: +inf and above at the top, -inf, below and NaN at the bottom; levels ({kind: level
    in axes coordinates}, from lanes) puts a kind in its own lane instead. The marks are drawn
    over every line and shading, so that none hides them; style overrides the marker's look
    (a final value's star). Returns the lines drawn."""
    x, drawn = np.asarray(x), []
    for kind, mask in kinds.items():
        level, symbol, filled = EDGE[kind]
        level = (levels or {}).get(kind, level)
        look = {"marker": symbol, "markersize": 7, "color": color,
                "markerfacecolor": color if filled else "white", "markeredgecolor": color,
                "label": f"{label}: {EDGE_TEXT[kind]}", **style}
        drawn += ax.plot(x[mask], np.full(mask.sum(), level), linestyle="none",
                         transform=ax.get_xaxis_transform(), clip_on=False, zorder=12, **look)
    return drawn


LANE = 0.06   # the height of one lane of marks, in axes coordinates
TOP_KINDS = ("+inf", "above")


def lanes(series: list) -> tuple[dict, int, int]:
    """For [(label, {kind: mask})] of one axes: ({(label, kind): level}, lanes at the bottom,
    lanes at the top). Every series' kind has a lane of its own, so that the NaN marks of two
    series at the same x do not hide one another; -inf, below and NaN at the bottom, +inf
    and above at the top. A (label, kind) met again keeps its first lane."""
    levels, counts = {}, {"bottom": 0, "top": 0}
    for label, kinds in series:
        for kind in kinds:
            if (label, kind) in levels:
                continue
            side = "top" if kind in TOP_KINDS else "bottom"
            middle = (counts[side] + 0.5) * LANE
            levels[(label, kind)] = 1 - middle if side == "top" else middle
            counts[side] += 1
    return levels, counts["bottom"], counts["top"]


def reserve(lims, bottom: int, top: int) -> tuple[float, float] | None:
    """y limits that keep the data (lims) clear of the bottom and top lanes: the lanes lie
    outside the data's range, so a mark there cannot be read as a value (a NaN at y = 0)."""
    if lims is None or not (bottom or top):
        return lims
    low, high = bottom * LANE, top * LANE
    span = (lims[1] - lims[0]) / (1 - low - high)
    return lims[0] - low * span, lims[1] + high * span


def draw_lanes(ax, lims, levels: dict) -> None:
    """Shade the lanes (grey, under a dashed rule), name each lane's kind where a y tick label
    would be (NaN, +inf, ...), and keep the y ticks (values) out of them, half a lane clear
    of the rule so that a tick's label does not run into the lane's (the axes' y limits are
    set already); with no finite value at all (lims None) the y axis has no ticks."""
    from matplotlib.patches import Rectangle
    bottom = sum(kind not in TOP_KINDS for _, kind in levels)
    top = len(levels) - bottom
    for y0, count in ((0.0, bottom), (1 - top * LANE, top)):
        if not count:
            continue
        ax.add_patch(Rectangle((0, y0), 1, count * LANE, transform=ax.transAxes, zorder=0.5,
                               facecolor="#eeeeee", edgecolor="none"))
        rule = count * LANE if y0 == 0 else y0
        ax.plot([0, 1], [rule, rule], transform=ax.transAxes, color="#888888", linewidth=0.8,
                linestyle="--", zorder=0.6, label="_lane rule")
    for (_, kind), level in levels.items():
        ax.text(-0.008, level, EDGE_TEXT[kind].replace("off scale ", ""), transform=ax.transAxes,
                ha="right", va="center", fontsize=7, color="#333333")
    if lims is None:
        ax.set_yticks([])
        return
    low = bottom * LANE + LANE / 2 if bottom else 0.0
    high = 1 - top * LANE - LANE / 2 if top else 1.0
    to_axes = ax.transScale + ax.transLimits  # data -> axes coordinates, on a log axis too
    for minor in (False, True):
        ticks = ax.get_yticks(minor=minor)
        if len(ticks):
            where = to_axes.transform(np.column_stack([np.zeros(len(ticks)), ticks]))[:, 1]
            ax.set_yticks(ticks[(where >= low - 1e-9) & (where <= high + 1e-9)], minor=minor)
