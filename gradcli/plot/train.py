"""Training curves: the loss and every metric against steps, one line per run.

A run is (label, {quantity: {"train": values, "test": values or absent,
"steps": x or absent, "final": {"step", "value", "label"} or absent, "ylabel": the axes'
label or absent (then the quantity's name)}}): the loss has
a value per step (x 0, 1, ...), a metric one per evaluation (x its eval_steps).
Each quantity gets its own axes; a run keeps its colour and marker throughout, its
training part solid, its test part dashed (a further run: a dash pattern pair of its own,
RUN_DASHES); where a quantity has both parts, the legend
names them (`label (train)`, `label (test)`). The final loss (TrainRecord.final_loss,
on the whole training part) is its own marker, not one more point of the batch-loss line:
with data it is another quantity than the batch losses, and joining them draws a jump.
Runs whose lines would lie on top of each other (numpy and torch of one spec) are said so
in the legend, and the one underneath is drawn wider so that both stay visible.
The legend sits outside the axes, right of them, so that it never covers a point; it has
one entry per line, and the final stars of several runs share one entry (the star takes
its run's colour), so that no label repeats another. NaN and inf points are marks in
labelled lanes outside the data's range, one lane per line and kind, drawn by the same
code as plot curve's (marks.lanes, marks.draw_lanes): one run's marks never hide another's.
"""
from __future__ import annotations

import numpy as np

from ..printable import printable
from . import bigaxis, fit, logaxis, marks, pyplot
from .fit import middle
from .style import line_style, marked, styled
from .text import FigureText
from .text import title as set_title

PARTS = ("train", "test")
# (training part, test part) per run: the first run's solid and dashed; each further run has a
# pair of its own (long dashes and dots, long dash-dot and dash-dot-dot, ...), so that where
# one run's line lies on another's (two specs identical for 40 steps), the one underneath
# shows in its gaps (tryout12 3.6: both specs solid, the second hid the first)
RUN_DASHES = [("-", "--"), ((0, (7, 3)), (0, (1, 2))), ((0, (7, 2, 1.5, 2)), (0, (3, 2, 1, 2, 1, 2))),
              ((0, (12, 3)), (0, (1, 4))), ((0, (4, 1.5)), (0, (6, 2, 1, 2, 1, 2, 1, 2)))]
OVERLAP = 2e-3      # lines closer than this share of the axes' span look like one line
FINAL_MARKER = "*"
STEP_LABEL = "training step (optimizer updates before the value)"
LABEL = 40          # characters of a spec's name in a run's label (the legend's entries)


def loss_points(record) -> tuple[list, dict | None]:
    """(the loss before each step, the final loss as {"step", "value", "label"} or None).

    The final loss is after record.steps updates. A run stopped by a non-finite loss has
    one loss more than steps (the stopping step's); without data its final loss is that
    same number at the same step, so it is not drawn twice."""
    loss = list(record.loss)
    if record.final_loss is None:
        return loss, None
    steps = record.steps if record.steps or not loss else len(loss)
    with_data = record.epochs is not None
    if not with_data and len(loss) > steps:
        return loss, None
    label = "final, whole training part" if with_data else f"final, after {steps} steps"
    return loss, {"step": steps, "value": record.final_loss, "label": label}


def record_series(record, loss_name: str) -> dict:
    """A TrainRecord's quantities for train_figure: `loss (<name>)` per step with its final
    value (its axes labelled by loss_label), then each metric at its evaluation points, on
    the training and (when there is one) the test part."""
    loss, final = loss_points(record)
    series = {f"loss ({loss_name})": {"train": loss, **({"final": final} if final else {}),
                                      "ylabel": loss_label(loss_name)}}
    for metric, parts in record.metrics.items():
        series[metric] = {part: values for part, values in parts.items() if part in ("train", "test")}
        series[metric]["steps"] = list(record.eval_steps)
    return series


def loss_label(name: str) -> str:
    """The y label of the loss's axes: the loss's name when it says it is a loss ("loss",
    "train_loss", "logloss"), else "loss (xent)"; never "loss (loss)"."""
    return name if "loss" in name.lower() else f"loss ({name})"


def y_labels(quantities: list, runs: list) -> dict:
    """{quantity: its axes' y label}: a series' own "ylabel" (the loss's), else the metric's
    name; a metric whose name is also a loss's label (a metric named loss) is "loss (metric)",
    so that no two axes read alike."""
    own = {q: next((series[q]["ylabel"] for _, series in runs if "ylabel" in series.get(q, {})),
                   None) for q in quantities}
    losses = set(own.values())
    return {q: own[q] or (f"{q} (metric)" if q in losses else q) for q in quantities}


def training_runs(runs: list, *, several_specs: bool) -> list:
    """(label, series) per (experiment, backend, Result): labelled by spec, backend or both."""
    from ..errors import GradcliError
    from ..labels import told_apart
    found = []
    for exp, backend, result in runs:
        if result.train is None:
            raise GradcliError(f"{exp.path}: the spec has no train: block, so there is no "
                               "training to plot")
        # a long name cut here, before a legend entry adds ", overlaps <name>" or " (test)"
        name = middle(exp.name, LABEL)
        label = " · ".join([name] * several_specs + [result.backend] * (backend is not None))
        found.append((label or name, record_series(result.train, exp.train.loss)))
    # runs that share a label (two specs with one name:) told apart as compare tells them
    return list(zip(told_apart([label for label, _ in found]), [series for _, series in found]))


def overlaps(lines: list, log: bool = False) -> tuple[list, list]:
    """For lines [(name, y)] of one axes: (the earlier line each lies on top of, or None;
    how many later lines lie on each). Alike means the same length and every point within
    OVERLAP of the axes' finite span (NaN where the other is NaN), measured as the axes
    draw it: on a log axis (log=True, every finite value positive) in decades."""
    lines = [(name, drawn_scale(y, log)) for name, y in lines]
    atol = tolerance([y for _, y in lines])
    under, depth = [None] * len(lines), [0] * len(lines)
    for i, (_, y) in enumerate(lines):
        for j in range(i):
            other = lines[j][1]
            if len(other) == len(y) and alike(y, other, atol).all():
                under[i] = lines[j][0]
                break
        for j in range(i + 1, len(lines)):
            other = lines[j][1]
            if len(other) == len(y) and alike(y, other, atol).all():
                depth[i] += 1
    return under, depth


def drawn_scale(y, log: bool) -> np.ndarray:
    """Values as the axes place them: in decades on a log axis."""
    y = np.asarray(y, dtype=np.float64)
    if not log:
        return y
    with np.errstate(all="ignore"):
        return np.log10(y)


def tolerance(values: list) -> float:
    """How close two points must be (in drawn_scale) to look like one: OVERLAP of the
    finite span of all the axes' values."""
    finite = np.concatenate([np.ravel(v)[np.isfinite(np.ravel(v))] for v in values]) \
        if values else np.array([])
    with np.errstate(over="ignore"):  # 1.7e308 - -1.7e308: inf, taken as float64's max
        span = float(min(finite.max() - finite.min(), np.finfo(np.float64).max)) \
            if finite.size else 0.0
    return OVERLAP * max(span, 1e-12)


def alike(y, other, atol: float) -> np.ndarray:
    """Point by point, whether two lines' points look like one (within atol, NaN on NaN)."""
    return np.isclose(y, other, rtol=0, atol=atol, equal_nan=True)


def train_figure(title: str, runs: list, units: dict | None = None,
                 text: FigureText | None = None):
    """A Figure with one axes per quantity, steps along x; log y when a quantity spans more
    than two decades; a non-finite step is marked as plot curve marks it, in a lane per line
    and kind outside the data's range (+inf at the top, -inf and NaN at the bottom), a
    non-finite final value as a star in its run's lane. `text` replaces gradcli's words
    (title, one y label per axes top to bottom, the x label, the runs' names)."""
    plt = pyplot()
    text = text or FigureText()
    quantities = list(dict.fromkeys(q for _, series in runs for q in series))
    text.check_axes(len(quantities), ", ".join(quantities))
    text.check_names([label for label, _ in runs], "runs")
    runs = [(text.name(label), series) for label, series in runs]
    units = {**y_labels(quantities, runs), **(units or {})}
    with styled(plt):
        fig, axes = plt.subplots(len(quantities), 1, sharex=True, squeeze=False, layout="constrained",
                                 figsize=(9.0, 2.2 + 2.4 * len(quantities)))
        set_title(fig, title, text)
        if text.subtitle:
            axes[0, 0].set_title(printable(text.subtitle), fontsize=9.5)
        for k, (ax, quantity) in enumerate(zip(axes[:, 0], quantities)):
            handles, labels = _quantity(ax, quantity, runs)
            ax.set_ylabel(printable(text.ylabel(k, units[quantity])))
            # outside the axes: inside, "best" still covers points when every spot is taken
            ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                      borderaxespad=0.0, title=printable(text.legend_title)
                      if k == 0 and text.legend_title else None)
        axes[-1, 0].set_xlabel(STEP_LABEL if text.xlabel is None else printable(text.xlabel))
        axes[-1, 0].xaxis.get_major_locator().set_params(integer=True)
        fit.figure(fig, legend_share=0.45)  # the legends right of the axes: 4 of 9 inches
    return fig


def _quantity(ax, quantity: str, runs: list) -> tuple[list, list]:
    """One axes: every run's parts of the quantity, then each run's final marker; returns the
    legend's (handles, labels): every line and edge mark, then one entry per kind of final
    star (the run's own, when only one run has it)."""
    drawn = []  # (name, y, x, style index, dash)
    for i, (label, series) in enumerate(runs):
        for part, dash in zip(PARTS, RUN_DASHES[i % len(RUN_DASHES)]):
            values = series.get(quantity, {}).get(part)
            if values is None:
                continue
            y = np.asarray(values, dtype=np.float64)
            x = np.asarray(series[quantity].get("steps", np.arange(len(y))))[:len(y)]
            both = "test" in series[quantity]  # then the parts are named, not implied
            drawn.append((f"{label} ({part})" if both else label, y, x, i, dash))
    finals = [(label, series[quantity]["final"], i) for i, (label, series) in enumerate(runs)
              if "final" in series.get(quantity, {})]
    values = [y for _, y, *_ in drawn] + [np.asarray([f["value"]], float) for _, f, _ in finals]
    log = bool(values) and marks.spans_decades(np.concatenate(values))
    if log:
        # before anything is drawn (a linear autoscale of 1.8e308 overflows); a -inf (or 0)
        # would be clipped to the axes' floor, and its segment drawn down through the lanes:
        # masked, the line breaks there and the -inf has its mark; the limits padded in
        # decades inside float64's range (a loss of 6e307 padded by matplotlib passed it:
        # inf limits, one tick label, overflow warnings)
        logaxis.set_log(ax, "y", logaxis.limits(np.concatenate(values)), nonpositive="mask")
    # a linear axis reaching 1e300 (-1.7e308, or 0 and 1.7e308) in units of 10^p: in float64's
    # own units matplotlib's locator, margins and the lanes pass its max (internal error)
    p = None if log or not values else bigaxis.power(np.concatenate(values))
    if p is not None:
        drawn = [(name, bigaxis.scaled(y, p), *rest) for name, y, *rest in drawn]
        finals = [(label, {**final, "value": float(bigaxis.scaled(final["value"], p))}, i)
                  for label, final, i in finals]
        values = [bigaxis.scaled(v, p) for v in values]
        bigaxis.set_units(ax, p)
    under, depth = overlaps([(name, y) for name, y, *_ in drawn], log)
    # each line's NaN and inf marks in a lane of their own, as plot curve's; a run's final
    # value shares its loss line's lanes (the loss line is named by the run's label)
    kinds = [marks.nonfinite(y) for _, y, *_ in drawn]
    final_kinds = [marks.nonfinite([final["value"]]) for _, final, _ in finals]
    levels, bottom, top = marks.lanes([(name, k) for (name, *_), k in zip(drawn, kinds)]
                                      + [(label, k) for (label, *_), k in zip(finals, final_kinds)])

    def lane(name: str) -> dict:
        return {kind: level for (owner, kind), level in levels.items() if owner == name}
    for (name, y, x, i, dash), below, wider, kind in zip(drawn, under, depth, kinds):
        style = line_style(i)
        shown = name if below is None else f"{name}, overlaps {below}"
        # a marker on each point of a sparse line (a metric's evaluation points), none on a
        # dense one: markers every few steps were read as evaluation points
        ax.plot(x, y, color=style["color"], linestyle=dash, linewidth=1.8 + 1.8 * wider,
                marker=style["marker"] if marked(len(y)) else None, markersize=4 + 2.5 * wider,
                label=shown, gid=f"{quantity}:{name}", zorder=2 + i)
        marks.draw_edges(ax, x, kind, name, style["color"], lane(name))
    # final stars that hide one another are said as lines are (the axes' span sets "alike")
    stars = [(f"{label}, {final['label']}", np.asarray([final["value"]], float))
             for label, final, _ in finals]
    hidden = overlaps([(name, y) for name, y, *_ in drawn] + stars, log)[0][len(drawn):]
    star_lines = []  # (line, what it shows: the final label, ": NaN" added for a NaN, ...)
    steps = {name: final["step"] for (name, _), (_, final, _) in zip(stars, finals)}
    star = {"marker": FINAL_MARKER, "markersize": 12, "markeredgecolor": "black",
            "markeredgewidth": 0.7}
    for (label, final, i), below, kind in zip(finals, hidden, final_kinds):
        style = line_style(i)
        name = f"{label}, {final['label']}"
        on = below if steps.get(below, None) == final["step"] else None
        value = np.asarray([final["value"]], dtype=np.float64)
        x = np.asarray([final["step"]])
        if not kind:
            star_lines += [(line, final["label"]) for line in ax.plot(
                x, value, linestyle="none", color=style["color"], zorder=10,
                label=name if on is None else f"{name}, overlaps {on}", gid=f"{quantity}:{name}",
                **star)]
        for line in marks.draw_edges(ax, x, kind, name, style["color"], lane(label),
                                     markerfacecolor=style["color"], gid=f"{quantity}:{name}",
                                     **{**star, "markersize": 10}):  # a lane is ~10 points
            star_lines.append((line, f"{final['label']}{line.get_label()[len(name):]}"))
    if bottom or top:
        _make_room(ax, values, log, bottom, top, levels)
    handles, labels = _legend_entries(ax, star_lines)
    if p is not None:  # said in words too: a reader may miss the unit above the axis
        from matplotlib.lines import Line2D
        handles.append(Line2D([], [], linestyle="none"))
        labels.append(bigaxis.note(p))
    return handles, labels


def _make_room(ax, values: list, log: bool, bottom: int, top: int, levels: dict) -> None:
    """The y limits widened so that the lanes lie outside the data's range, as plot curve's
    (in decades on a log axis), and the lanes drawn; no ticks when no value is finite."""
    lims = None
    if any(np.isfinite(v).any() for v in values):
        lims = ax.get_ylim()  # matplotlib's own, from the finite values drawn (log: ours)
        shown = marks.reserve(np.log10(lims) if log else lims, bottom, top)
        # in decades, kept inside float64's range: a +inf lane above 6e307 would pass it
        ax.set_ylim(*(logaxis.to_values(*shown) if log else shown))
    marks.draw_lanes(ax, lims, levels)


def _legend_entries(ax, star_lines: list) -> tuple[list, list]:
    """Every line but the stars and the lanes' rules as it is labelled; the stars one entry
    per kind (final label, and NaN or inf): a lone run's star keeps its own label, stars of
    several runs share a neutral one."""
    from matplotlib.lines import Line2D
    stars_drawn = [line for line, _ in star_lines]
    handles = [line for line in ax.get_lines()
               if line not in stars_drawn and not line.get_label().startswith("_")]
    labels = [line.get_label() for line in handles]
    kinds: dict = {}  # what a star shows -> [its star lines]
    for line, shows in star_lines:
        kinds.setdefault(shows, []).append(line)
    for kind, stars in kinds.items():
        if len(stars) == 1:
            handles.append(stars[0])
            labels.append(stars[0].get_label())
        else:
            handles.append(Line2D([], [], linestyle="none", marker=FINAL_MARKER, markersize=12,
                                  color="white", markeredgecolor="black", markeredgewidth=0.7))
            on = any(", overlaps " in star.get_label() for star in stars)
            labels.append(f"{kind}\n(each run's star in its colour"
                          + (";\nsome lie on one another)" if on else ")"))
    return handles, labels
