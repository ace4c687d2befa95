"""The straight-through-estimator figure: forward value above, the three derivatives below."""
from __future__ import annotations

import textwrap

import numpy as np

from ..printable import printable
from . import bigaxis, fit, marks, pyplot
from .fit import middle
from .style import BLACK, BLUE, GREEN, VERMILLION, styled
from .text import FigureText
from .text import title as set_title

NAME = 40  # characters of a name inside the title (the figure then fits every text)


def curve_figure(curve, text: FigureText | None = None):
    """A Figure of a Curve: two stacked axes sharing x; the region where the overridden
    gradient differs from the true one (both finite) is shaded; jumps are left open, non-finite and
    off-scale points are marked at the axes' edge. `text` replaces gradcli's words."""
    plt = pyplot()
    text = text or FigureText()
    text.check_axes(2, "the output above, its gradients below")
    x_p = bigaxis.power(curve.x)  # a --range reaching 1e300: the x axis in units of 10^p too
    x = bigaxis.scaled(curve.x, x_p)
    with styled(plt):
        fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7.2, 6.0),
                                          height_ratios=[1, 1.25], layout="constrained")
        set_title(fig, curve.name, text)
        # names cut before the title is wrapped, so that it stays a few lines
        output, name = middle(curve.output, NAME), middle(curve.input, NAME)
        swept = f"{name}{curve.element}"
        title = [f"{output} along {swept} (backend {curve.backend})"]
        if curve.element:  # which element moves, and why that one; the others stay put
            title.append(f"{swept} swept" + (f" ({curve.chosen})" if curve.chosen else "")
                         + f"; the other elements of {name} keep the spec's values")
        if curve.batch:  # a data spec: the first batch's features, as the run tables say
            title.append(curve.batch)
        subtitle = ("\n".join(textwrap.fill(printable(t), 90) for t in title)
                    if text.subtitle is None else printable(text.subtitle))
        top.set_title(subtitle, fontsize=9.5)
        # an axes reaching 1e300 (-1.7e308, or 0 and 1.7e308) in units of 10^p: in float64's
        # own units matplotlib's locator and the lanes pass its max (internal error)
        top_p = bigaxis.power(curve.forward)
        forward = bigaxis.scaled(curve.forward, top_p)
        bigaxis.set_units(top, top_p)
        top_lims = marks.limits([forward])
        _axes(top, x, [(f"forward {curve.output}", forward, BLACK, "-", None)], top_lims)
        top.set_ylabel(printable(text.ylabel(0, f"{curve.output} (output value)")))
        top.legend(*_noted(top, top_p), loc="best",
                   title=printable(text.legend_title) if text.legend_title else None)

        grad = f"∂{curve.output}/∂{curve.input}{curve.element}"
        p = bigaxis.power(np.concatenate([np.ravel(g) for g in (curve.true, curve.overridden,
                                                                curve.numeric) if g is not None]))
        true, overridden, numeric = (None if g is None else bigaxis.scaled(g, p)
                                     for g in (curve.true, curve.overridden, curve.numeric))
        bigaxis.set_units(bottom, p)
        lims = marks.limits([true, overridden]) or marks.limits([numeric])
        if true is not None and overridden is not None:
            # only where both are numbers: a NaN or inf has its lane, and shading it from 0
            # (or from 1.8e308) would draw a value that is not there; compared as computed
            # (atol 1e-12 in units of 10^308 would take every gradient for 0)
            finite = np.isfinite(curve.overridden) & np.isfinite(curve.true)
            differ = finite & ~np.isclose(curve.overridden, curve.true, rtol=1e-6, atol=1e-12)
            if differ.any():
                bottom.fill_between(x, np.where(finite, overridden, 0.0), np.where(finite, true, 0.0),
                                    where=differ, color=VERMILLION, alpha=0.16, linewidth=0,
                                    label="overridden ≠ true")
        _axes(bottom, x, [
            ("true derivative", true, BLUE, "-", None),
            ("overridden gradient (used by training)", overridden, VERMILLION, "--", None),
            ("numeric derivative (central differences)", numeric, GREEN, ":", "o")], lims)
        bottom.set_ylabel(printable(text.ylabel(1, f"{grad} (gradient)")))
        bottom.set_xlabel(f"{swept}: input value swept" if text.xlabel is None else printable(text.xlabel))
        # below the axes: "best" does not avoid the shaded region (a fill is not a line)
        bigaxis.set_units(bottom, x_p, "x")
        bottom.legend(*_noted(bottom, p, x_p), loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2)
        fit.figure(fig, legend_share=0.4)
    return fig


def _noted(ax, p: int | None, x_p: int | None = None) -> tuple[list, list]:
    """The axes' legend entries, and the words for a y (x) axis in units of 10^p (x_p)."""
    from matplotlib.lines import Line2D
    handles, labels = ax.get_legend_handles_labels()
    for power, which in ((p, "y"), (x_p, "x")):
        if power is not None:
            handles.append(Line2D([], [], linestyle="none"))
            labels.append(bigaxis.note(power, which))
    return handles, labels


def _axes(ax, x, series: list, lims) -> None:
    """The series [(label, y or None, colour, dash, marker)] of one axes, their NaN, inf and
    off-scale points each in a lane of its own outside the data's range (shaded), so that
    no mark hides another's or sits where it would read as a value."""
    series = [(label, np.asarray(y, dtype=np.float64), *rest) for label, y, *rest in series
              if y is not None]
    kinds = [{**marks.nonfinite(y), **marks.off_scale(y, lims)} for _, y, *_ in series]
    levels, bottom, top = marks.lanes([(label, k) for (label, *_), k in zip(series, kinds)])
    for (label, y, color, dash, marker), kind in zip(series, kinds):
        shown = y.copy()
        for name, mask in kind.items():
            if name in ("above", "below"):
                shown[mask] = np.nan
        bx, by = marks.broken(x, shown)
        every = max(1, len(x) // 25)
        ax.plot(bx, by, color=color, linestyle=dash, label=label, marker=marker, markersize=3.2,
                markevery=every if marker else None, gid=label)
        marks.draw_edges(ax, x, kind, label.split(" (")[0], color,
                         {k: level for (name, k), level in levels.items() if name == label})
    shown_lims = marks.reserve(lims, bottom, top)
    if shown_lims is not None:
        ax.set_ylim(*shown_lims)
    marks.draw_lanes(ax, lims, levels)
