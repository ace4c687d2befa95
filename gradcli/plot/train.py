"""Training curves: the loss and every metric against steps, one line per run.

A run is (label, {quantity: {"train": values, "test": values or absent,
"steps": x or absent}}): the loss has a value per step (x 0, 1, ...), a metric
one per evaluation (x its eval_steps). Each quantity gets its own axes; a run
keeps its colour and marker throughout, its training part solid, its test part
dashed; where a quantity has both parts, the legend names them (`label (train)`,
`label (test)`).
"""
from __future__ import annotations

import numpy as np

from . import marks, pyplot
from .style import line_style, styled

PARTS = (("train", "-"), ("test", "--"))  # the training part solid, the held-out part dashed


def loss_series(record) -> list:
    """The loss before each step and, as the last point, after the final step."""
    final = [] if record.final_loss is None else [record.final_loss]
    return [*record.loss, *final]


def record_series(record, loss_name: str) -> dict:
    """A TrainRecord's quantities for train_figure: `loss (<name>)` per step, then each metric
    at its evaluation points, on the training and (when there is one) the test part."""
    series = {f"loss ({loss_name})": {"train": loss_series(record)}}
    for metric, parts in record.metrics.items():
        series[metric] = {part: values for part, values in parts.items() if part in ("train", "test")}
        series[metric]["steps"] = list(record.eval_steps)
    return series


def training_runs(runs: list, *, several_specs: bool) -> list:
    """(label, series) per (experiment, backend, Result): labelled by spec, backend or both."""
    from ..errors import GradcliError
    found = []
    for exp, backend, result in runs:
        if result.train is None:
            raise GradcliError(f"{exp.path}: the spec has no train: block, so there is no "
                               "training to plot")
        label = " · ".join([exp.name] * several_specs + [result.backend] * (backend is not None))
        found.append((label or exp.name, record_series(result.train, exp.train.loss)))
    return found


def train_figure(title: str, runs: list, units: dict | None = None):
    """A Figure with one axes per quantity, steps along x; log y when a quantity spans more
    than two decades; a non-finite step is marked at the axes' edge as plot curve marks it
    (+inf at the top, -inf and NaN at the bottom)."""
    plt = pyplot()
    quantities = list(dict.fromkeys(q for _, series in runs for q in series))
    units = units or {}
    with styled(plt):
        fig, axes = plt.subplots(len(quantities), 1, sharex=True, squeeze=False, layout="constrained",
                                 figsize=(7.2, 2.2 + 2.4 * len(quantities)))
        fig.suptitle(title, fontweight="bold")
        for ax, quantity in zip(axes[:, 0], quantities):
            every = []
            for i, (label, series) in enumerate(runs):
                style = line_style(i)
                for part, dash in PARTS:
                    values = series.get(quantity, {}).get(part)
                    if values is None:
                        continue
                    y = np.asarray(values, dtype=np.float64)
                    x = np.asarray(series[quantity].get("steps", np.arange(len(y))))[:len(y)]
                    every.append(y)
                    both = "test" in series[quantity]  # then the parts are named, not implied
                    name = f"{label} ({part})" if both else label
                    ax.plot(x, y, color=style["color"], linestyle=dash,
                            marker=style["marker"], markersize=4,
                            markevery=max(1, len(y) // 20), label=name, gid=f"{quantity}:{name}")
                    marks.draw_edges(ax, x, marks.nonfinite(y), name, style["color"])
            if every and marks.spans_decades(np.concatenate(every)):
                ax.set_yscale("log")
            ax.set_ylabel(units.get(quantity, quantity))
            ax.legend(loc="best")
        axes[-1, 0].set_xlabel("training step (optimizer updates before the value)")
        axes[-1, 0].xaxis.get_major_locator().set_params(integer=True)
    return fig
