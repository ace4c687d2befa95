"""The sweep figure: a column of results.csv against a swept key, mean ± 1 std over the runs
that share each x (and hue) value: seeds and the other swept keys, named in the subtitle.

`sweep_series` gathers what is drawn (testable without drawing): each point's mean, std and
count are sweep/stats.column_stats of the runs' cells, the numbers of `gradcli sweep`'s report;
`sweep_figure` draws it: one line per value of the hue key, a band of ±1 standard
deviation (ddof 1) around each mean, the group sizes in the legend. A key whose values
are not all numbers (override_map.sign: [identity, hardtanh]), and `seed`, get a categorical axis,
drawn as points with error bars (a line between unordered values would be made up).

A column whose values cannot leave a range (`bounds`: an accuracy, a sign agreement in
[0, 1], a cosine in [-1, 1]) has its band and error bars clipped to the range: mean ± std
of accuracies near 1 passes 1, which no run can reach. The std itself is not changed.
"""
from __future__ import annotations

import math
import re
import textwrap
from dataclasses import dataclass, field, replace

import numpy as np

from ..printable import printable
from ..sweep.stats import column_stats, zero_true
from . import bigaxis, fit, logaxis, marks, pyplot
from .fit import middle
from .style import BAND_ALPHA, line_style, marked, styled
from .sweep_dir import SweepDir, check_column, check_key, fail, is_number, number, run_doc, selected
from .sweep_notes import coincide, dropped, notes
from .text import FigureText
from .text import title as set_title
from .train import STEP_LABEL

STEP_TEXT = "training step"
NAME = 40  # characters of a name inside the subtitle (the figure then fits every text)
BIGGEST = float(np.finfo(np.float64).max)
NOTE_WIDTH = 100  # characters of a legend note's line (the degenerate note takes three)


@dataclass
class SweepLine:
    label: str           # the hue key's value, or "mean" without a hue
    mean: np.ndarray     # per x position (NaN where the group has no finite value)
    std: np.ndarray      # ddof 1; NaN where the group has fewer than two runs
    n: np.ndarray        # runs per x position (finite values only)
    runs: np.ndarray | None = None  # runs per x position, those without a finite value too
    x: np.ndarray | None = None     # the line's own x positions (a learning curve's steps)


@dataclass
class SweepSeries:
    x_key: str
    y_column: str
    hue_key: str | None
    x_values: list                    # the swept values, as in results.csv
    positions: np.ndarray             # where they sit on the x axis
    categorical: bool
    lines: list
    failed: int = 0                   # failed runs without a result, left out
    nonfinite: int = 0                # runs whose y is empty, NaN or infinite, left out
    pooled: list = field(default_factory=list)  # other swept keys (but seed) averaged over
    bounds: tuple | None = None       # (lo, hi) the column cannot leave, else None
    sizes: dict = field(default_factory=dict)   # pooled key -> how many values it takes
    observed: tuple | None = None     # (lowest, highest) finite value of the runs drawn
    fixed: dict = field(default_factory=dict)   # --where: swept key -> the one value kept
    curve: bool = False               # a learning curve (x: the training step)
    shorter: int = 0                  # curve: runs that end before their line's last step
    unread: int = 0                   # curve: runs with a result but no readable run file
    dropped: list = field(default_factory=list)  # x values not drawn: (value, runs, failed)
    zero_true: list = field(default_factory=list)  # "out/in" pairs whose true gradient is 0

    def xs(self, line: SweepLine) -> np.ndarray:
        return self.positions if line.x is None else line.x

    def band(self, line: SweepLine) -> tuple[np.ndarray, np.ndarray]:
        """The drawn band of a line: mean ∓ std, clipped to the column's bounds (NaN stays)."""
        with np.errstate(over="ignore"):  # 6e307 + 1e308 is inf: drawn at float64's max
            lower, upper = line.mean - line.std, line.mean + line.std
        lower, upper = np.clip(lower, -BIGGEST, BIGGEST), np.clip(upper, -BIGGEST, BIGGEST)
        if self.bounds is not None:
            lower, upper = np.clip(lower, *self.bounds), np.clip(upper, *self.bounds)
        return lower, upper

    def clipped(self) -> bool:
        """Whether any band reaches past the bounds (the subtitle then says it was clipped)."""
        if self.bounds is None:
            return False
        lo, hi = self.bounds
        with np.errstate(invalid="ignore", over="ignore"):
            return any(np.any(line.mean - line.std < lo) or np.any(line.mean + line.std > hi)
                       for line in self.lines)

    def crosses_zero(self) -> str | None:
        """"below" when every run drawn is >= 0 (a loss) and a band reaches below 0, "above"
        when every run is <= 0 and a band reaches above 0, else None. The band is right (mean
        ± std is a spread, not a range of runs) but reads as a sign no run has: the legend
        says so. Past the runs' range otherwise (above the highest loss) needs no word."""
        if self.observed is None:
            return None
        lo, hi = self.observed
        lower = np.concatenate([self.band(line)[0] for line in self.lines])
        upper = np.concatenate([self.band(line)[1] for line in self.lines])
        with np.errstate(invalid="ignore"):
            if lo >= 0 and np.any(lower < 0):
                return "below"
            if hi <= 0 and np.any(upper > 0):
                return "above"
        return None

    def log_y(self) -> bool:
        """Whether y is drawn on a log axis, by plot train's rule (marks.spans_decades): the
        means drawn are all positive and span more than two decades (a diverging sweep's
        losses up to 1e308 drew every other curve on 0; final losses of 1e-7 .. 140)."""
        return marks.spans_decades(np.concatenate([line.mean for line in self.lines]))

    def notes(self) -> list:
        """What the legend says besides the lines: runs left out, x values not drawn, ..."""
        return notes(self)

    def band_text(self) -> str:
        """What a point and its band are (the subtitle's and the report caption's words): "mean
        ± 1 std (ddof 1) over 8 seeds"; over the runs a point really has where some have no
        finite value there or end before it ("over 2–3 of 3 seeds", the legend's n); with one
        run per point there is no std, so no band (audit11 P2: 1 of 6 seeds was "over 6")."""
        if not self.pooled:
            return "one run per point (no band: nothing pooled)"
        total = math.prod(self.sizes.get(k, 0) for k in self.pooled)
        n = np.concatenate([line.n for line in self.lines])
        n = n[n > 0]
        lo, hi = (int(n.min()), int(n.max())) if n.size else (0, 0)
        if not 0 < hi <= total or lo == total:
            return f"mean ± 1 std (ddof 1) {self.over()}"
        planned = self.over()[len("over "):]
        if len(self.pooled) > 1:
            planned = f"{total} runs ({planned})"
        counted = f"{lo} of {planned}" if lo == hi else f"{lo}–{hi} of {planned}"
        if hi == 1:
            return f"{counted} per point: no band"
        return f"mean ± 1 std (ddof 1) over {counted}"

    def over(self) -> str:
        """What each point's mean and std are over: "over 8 seeds", "over 8 seeds × 3 values of
        lr", or the single run's value when nothing is pooled."""
        if not self.pooled:
            return "one run per point (nothing pooled)"
        return "over " + " × ".join(
            f"{self.sizes.get(k, '?')} seeds" if k == "seed" else f"{self.sizes.get(k, '?')} "
            f"values of {k}" for k in self.pooled)


def sweep_series(sweep: SweepDir, x: str, y: str, hue: str | None = None,
                 where: dict | None = None, zero: list | None = None) -> SweepSeries:
    """The means, stds and counts per x value and hue value (checked names, did-you-mean), over
    the runs whose swept keys take the `where` values ({key: value}, from parse_where); with
    x "step" (not a swept key), y a quantity kept per step: the learning curves. For a
    gradient column (<output>/<input>.<stat>), the pairs whose true gradient is 0 in every
    run drawn (sweep/stats.zero_true of their run files, or `zero` when the caller has it)."""
    from .sweep_curves import STEP, curve_series
    where = where or {}
    if hue is not None:
        check_key(sweep, hue, "--hue")
        if hue == x:
            raise fail(f"--hue {printable(hue)!r} is also --x; pick another swept key")
        if hue in where:
            raise fail(f"--hue {printable(hue)!r} is also given to --where; a line per value "
                       "of a key kept at one value would be one line")
    if x == STEP and x not in sweep.keys:
        return curve_series(sweep, y, hue, where)
    check_key(sweep, x, "--x")
    if x in where:
        raise fail(f"--x {printable(x)!r} is also given to --where; it would keep one point")
    check_column(sweep, y, "--y")
    x_values = sweep.values(x)
    # a seed is a name, not a quantity: seeds joined by a line read as ordered (tryout12 4)
    categorical = x == "seed" or not all(is_number(v) for v in x_values)
    positions = (np.arange(len(x_values), dtype=np.float64) if categorical
                 else np.array([float(v) for v in x_values]))
    rows = selected(sweep.ok_rows(), where)
    hues = sweep.values(hue) if hue is not None else [None]
    lines, nonfinite = [], 0
    for h in hues:
        means, stds, ns, runs = [], [], [], []
        for v in x_values:
            ys = [number(r.get(y)) for r in rows if r.get(x) == v and (h is None or r.get(hue) == h)]
            st = column_stats(ys)  # non-finite values left out and counted, as in the report
            nonfinite += len(ys) - st["n"]  # NaN, inf, and runs without the column
            means.append(_nan(st["mean"])), stds.append(_nan(st["std"])), ns.append(st["n"])
            runs.append(len(ys))
        if where and not sum(runs):
            continue  # a --hue value the --where filter leaves without runs
        label = "mean" if h is None else h
        lines.append(SweepLine(label, np.array(means), np.array(stds), np.array(ns), np.array(runs)))
    if not any(line.n.sum() for line in lines):
        raise fail(f"nothing to draw: no run of {printable(sweep.path)} has a finite {printable(y)} "
                   f"({len(sweep.rows)} run{'s' * (len(sweep.rows) != 1)}, "
                   f"{len(sweep.failed)} failed)")
    # an x value none of whose runs has a finite y (all failed, say) is no point: no room for it
    drawn = np.array([any(line.n[k] for line in lines) for k in range(len(x_values))], dtype=bool)
    gone = dropped(selected(sweep.rows, where), x, x_values, lines, drawn)  # named in the legend
    x_values = [v for v, keep in zip(x_values, drawn) if keep]
    positions = (np.arange(len(x_values), dtype=np.float64) if categorical else positions[drawn])
    for line in lines:
        line.mean, line.std, line.n = line.mean[drawn], line.std[drawn], line.n[drawn]
        line.runs = line.runs[drawn]
    # what a point averages over: the other swept keys that take more than one value
    pooled = pooled_keys(sweep, x, hue, where)
    if "/" in y and zero is None:  # the legend says when the comparison is degenerate
        zero = zero_true([run_doc(sweep.path, r.get("run", "")) or {} for r in rows])
    return SweepSeries(x, y, hue, x_values, positions, categorical, lines,
                       zero_true=list(zero or []),
                       failed=len(selected(sweep.rows, where)) - len(rows), nonfinite=nonfinite,
                       pooled=pooled, fixed=dict(where), dropped=gone,
                       bounds=bounds(y, np.concatenate([line.mean for line in lines])),
                       sizes={k: len(sweep.values(k)) for k in pooled},
                       observed=observed(rows, x, y, hue, x_values))


def pooled_keys(sweep: SweepDir, x: str, hue: str | None, where: dict) -> list:
    """What a point averages over: the swept keys that are neither x, hue nor kept at one
    value by --where, and take more than one value."""
    return [k for k in sweep.keys if k not in (x, hue) and k not in where
            and len(sweep.values(k)) > 1]


# A metric named so holds a share of rows: in [0, 1] ("accuracy", "acc", "top1_accuracy").
_SHARE = re.compile(r"(.*_)?(acc|accuracy)(_.*)?", re.IGNORECASE)


def bounds(column: str, means) -> tuple[float, float] | None:
    """The range a results.csv column cannot leave: [0, 1] for a metric named accuracy (acc)
    and for `.sign_agreement`, [-1, 1] for `.cosine`; None for any other column, and when a
    mean lies outside it (then the column is not what its name says: nothing is clipped)."""
    found = None
    if column.endswith(".sign_agreement"):
        found = (0.0, 1.0)
    elif column.endswith(".cosine"):
        found = (-1.0, 1.0)
    elif column.startswith("final.") and column.endswith((".train", ".test")):
        if _SHARE.fullmatch(column[len("final."):].rsplit(".", 1)[0]):
            found = (0.0, 1.0)
    if found is None:
        return None
    means = np.asarray(means, dtype=np.float64)
    means = means[np.isfinite(means)]
    return found if np.all((means >= found[0]) & (means <= found[1])) else None


def observed(rows: list, x: str, y: str, hue: str | None, x_values: list) -> tuple | None:
    """(lowest, highest) finite y of the runs drawn (those at a drawn x value), or None."""
    ys = np.array([number(r.get(y)) for r in rows if r.get(x) in x_values
                   and (hue is None or r.get(hue) is not None)], dtype=np.float64)
    ys = ys[np.isfinite(ys)]
    return (float(ys.min()), float(ys.max())) if ys.size else None


def _nan(v) -> float:
    return math.nan if v is None else v


def sizes(n: np.ndarray) -> str:
    """The group sizes of a line: "n=8", or "n=7–8" when they differ along x."""
    shown = n[n > 0]
    if shown.size == 0:
        return "no runs"
    lo, hi = int(shown.min()), int(shown.max())
    return f"n={lo}" if lo == hi else f"n={lo}–{hi}"


def sweep_figure(title: str, series: SweepSeries, text: FigureText | None = None):
    """A Figure of the series: mean lines, a ±1 std band around each (lightly filled and edged
    by thin lines in the line's colour and dash, so that overlapping bands stay apart; no
    error bars but at a lone point, whose band has no width), group sizes and what was left
    out in the legend; log x when a numeric key spans more than a decade. A learning curve
    (series.curve) has the training step along x. `text` replaces gradcli's words."""
    plt = pyplot()
    text = text or FigureText()
    text.check_axes(1, "one")
    text.check_names([str(line.label) for line in series.lines],
                     f"values of {series.hue_key}" if series.hue_key else "lines (mean)")
    with styled(plt):
        fig, ax = plt.subplots(figsize=(7.2, 4.6), layout="constrained")
        set_title(fig, title, text)
        x_name = text.xlabel or (STEP_TEXT if series.curve else series.x_key)
        y_name = text.ylabel(0, "") or series.y_column
        # names cut before the text is wrapped, so that it stays two or three lines
        subtitle = (f"{middle(printable(y_name), NAME)} against {middle(printable(x_name), NAME)}"
                    + "".join(f"{', ' if i else ' at '}{middle(printable(k), NAME)} = "
                              f"{middle(printable(v), NAME)}"
                              for i, (k, v) in enumerate(series.fixed.items()))
                    + f": {middle(printable(series.band_text()), 3 * NAME)}")
        if series.clipped():
            subtitle += f"; bands clipped to [{series.bounds[0]:g}, {series.bounds[1]:g}]"
        if text.subtitle is not None:
            subtitle = printable(text.subtitle)
        if subtitle:
            ax.set_title(textwrap.fill(subtitle, 88), fontsize=9.5)
        log = series.log_y()
        under = coincide(series)[0]   # a line under another everywhere: said and widened
        if log:  # before anything is drawn: a linear autoscale of 1.8e308 overflows
            logaxis.set_log(ax, "y", logaxis.limits(np.concatenate(
                [np.concatenate([line.mean, *series.band(line)]) for line in series.lines])))
        # a linear axis reaching 1e300 (-1.7e308, or 0 and 1.7e308) in units of 10^p: in
        # float64's own units matplotlib's locator and margins pass its max (internal error)
        p = None if log else bigaxis.power(np.concatenate(
            [np.concatenate([line.mean, *series.band(line)]) for line in series.lines]))
        bigaxis.set_units(ax, p)
        for i, line in enumerate(series.lines):
            label = f"{printable(text.name(line.label))} ({sizes(line.n)})"
            if under[i] is not None:
                label += f", overlaps {printable(text.name(under[i]))}"
            shown = line if p is None else replace(
                line, mean=bigaxis.scaled(line.mean, p), std=bigaxis.scaled(line.std, p))
            _line(ax, series, shown, i, label, log, wider=sum(
                u == line.label for u in under[i + 1:]))
        _x_axis(ax, plt, series)
        ax.set_xlabel(printable(text.xlabel) if text.xlabel is not None else
                      STEP_LABEL if series.curve else f"{printable(series.x_key)} (swept)")
        ax.set_ylabel(printable(text.ylabel(0, series.y_column)))
        handles, labels = ax.get_legend_handles_labels()
        for note in series.notes() + ([bigaxis.note(p)] if p is not None else []):
            # left out runs are said, not silently dropped; an axis in units of 10^p too
            handles.append(plt.Line2D([], [], linestyle="none"))
            labels.append(textwrap.fill(note, NOTE_WIDTH))  # wrapped: fit would cut it
        title_text = (text.legend_title if text.legend_title is not None
                      else series.hue_key if series.hue_key else None)
        # below the axes: "best" would not avoid the bands (a fill is not a line)
        # two columns for many short entries; long notes one per row, so that none is cut
        columns = 2 if len(labels) > 3 and max(map(len, labels)) <= 36 else 1
        # its top a fixed distance in points below the x label, not a share of the axes'
        # height: a tall legend (the degenerate note's three lines) shrinks the axes, and
        # at -0.16 of them it covered the x label
        from matplotlib.transforms import offset_copy
        below = offset_copy(ax.transAxes, fig=fig, y=-_x_label_depth(ax) - 6, units="points")
        ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                  bbox_transform=below, ncols=columns,
                  title=printable(title_text) if title_text else None)
        # each column's text beside its handle (0.08 of the width with the column spacing)
        fit.figure(fig, legend_share=(0.97 - 0.08 * columns) / columns)
    return fig


def _x_label_depth(ax) -> float:
    """How far below the axes the x tick labels and the x label reach, in points (their
    fonts' sizes, the same wherever the layout puts the axes)."""
    renderer = ax.figure.canvas.get_renderer()
    depth = ax.get_window_extent(renderer).y0 - ax.xaxis.get_tightbbox(renderer).y0
    return max(depth, 0.0) * 72.0 / ax.figure.dpi


def _line(ax, series: SweepSeries, line: SweepLine, i: int, label: str, log: bool,
          wider: int = 0) -> None:
    """One mean line with its band; on a categorical axis points with error bars. On a log
    axis a band reaching 0 or below is filled down to the axis' bottom, and its lower edge's
    line stops there (drawn down to 10⁻³⁰⁰ it was a comb of vertical strokes)."""
    style = line_style(i)
    x = series.xs(line) + (_dodge(i, len(series.lines)) if series.categorical else 0.0)
    band = np.isfinite(line.std)
    lower, upper = series.band(line)
    yerr = np.vstack([line.mean - lower, upper - line.mean])  # NaN where no band
    if series.categorical:  # no order between the values: points with error bars, no line
        ax.errorbar(x, line.mean, yerr=yerr, linestyle="none",
                    marker=style["marker"], markersize=6, color=style["color"],
                    elinewidth=1.2, capsize=4, label=label, gid=f"mean:{line.label}")
        return
    if band.any():
        ax.fill_between(x, lower, upper, where=band, color=style["color"], alpha=BAND_ALPHA,
                        linewidth=0, interpolate=False, gid=f"band:{line.label}")
        for edge in (lower, upper):  # whose band is whose, where bands overlap
            if log:
                edge = np.where(edge > 0, edge, np.nan)
            ax.plot(x, edge, color=style["color"], linestyle=style["linestyle"], linewidth=0.8,
                    alpha=0.75, label="_band edge", gid=f"band-edge:{line.label}")
    # a line that others lie on everywhere is drawn wider, as plot train draws it
    ax.plot(x, line.mean, label=label, gid=f"mean:{line.label}", markersize=5 + 2.5 * wider,
            linewidth=1.8 + 1.8 * wider,
            **{**style, "marker": style["marker"] if marked(len(x)) else None})
    beside = np.zeros_like(band)  # a neighbour with a band: the fill has width there
    beside[1:] |= band[:-1]
    beside[:-1] |= band[1:]
    lone = band & ~beside
    if lone.any():  # a band of one point has no width: its spread as an error bar
        ax.errorbar(x[lone], line.mean[lone], yerr=yerr[:, lone], fmt="none",
                    ecolor=style["color"], elinewidth=0.9, capsize=3, gid=f"bar:{line.label}")
    if not series.curve:  # a curve's shorter runs are said once in the legend
        _fewer(ax, x, line, style["color"])


def _x_axis(ax, plt, series: SweepSeries) -> None:
    x = series.positions
    if series.categorical:
        ax.set_xticks(x, _tick_labels(series.x_values))
        ax.set_xlim(x.min() - 0.4, x.max() + 0.4) if len(x) else None
        ax.grid(axis="x", visible=False)
        if sum(len(t) for t in _tick_labels(series.x_values)) > 60:  # long labels: slant them
            ax.tick_params(axis="x", labelrotation=20)
    elif series.curve:
        ax.xaxis.get_major_locator().set_params(integer=True)
    else:
        if len(x) > 1 and marks.spans_decades(x, 1.0):
            logaxis.set_log(ax, "x")
        if len(x) <= 12:  # a tick at each swept value, written as in results.csv
            ax.set_xticks(x, _spaced(x, _tick_labels(series.x_values),
                                     ax.get_xscale() == "log"))
            ax.xaxis.set_minor_formatter(plt.NullFormatter())


def _tick_labels(values: list) -> list:
    """The x values as written in results.csv, each cut to its share of the axis' width."""
    return [middle(printable(v), max(6, 48 // max(len(values), 1))) for v in values]


def _fewer(ax, x: np.ndarray, line: SweepLine, color: str) -> None:
    """Write "n=k of m" beside each point whose mean rests on fewer runs than ran there (the
    others had no finite value): a mean over the 1 run of 4 that did not diverge is not
    comparable with one over 4, and the line alone would not say so."""
    if line.runs is None:
        return
    right = x.max(initial=-np.inf)
    for xk, mean, n, m in zip(x, line.mean, line.n, line.runs):
        if 0 < n < m and np.isfinite(mean):
            last = xk == right and len(x) > 1  # its text to the left, inside the axes
            ax.annotate(f"n={int(n)} of {int(m)}", (xk, mean), xytext=(-6 if last else 6, 6),
                        textcoords="offset points", ha="right" if last else "left",
                        fontsize=8, color=color, gid=f"fewer:{line.label}", zorder=5,
                        bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none",
                              "alpha": 0.85})  # readable where the line passes under it


def _spaced(x: np.ndarray, labels: list, log: bool) -> list:
    """The tick labels, blank where a tick sits too close to the last labelled one for both
    to be read (0 and 0.01 on a linear axis up to 1): the tick and the point stay."""
    where = np.log10(x) if log else x
    span = float(np.ptp(where)) if len(where) else 0.0
    shown, last = [], None
    for pos, label in sorted(zip(where, range(len(labels)))):
        if last is not None and span > 0 and pos - last < 0.05 * span:
            shown.append((label, ""))
            continue
        shown.append((label, labels[label]))
        last = pos
    return [text for _, text in sorted(shown)]


def _dodge(i: int, count: int) -> float:
    """A small sideways shift per line on a categorical axis, so error bars do not overlap."""
    return (i - (count - 1) / 2) * min(0.08, 0.3 / max(count, 1))
