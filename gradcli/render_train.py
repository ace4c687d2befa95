"""Lay out what training produced: the JSON `train` document and the run's training table.

Nothing here trains or evaluates: the loop filled the TrainRecord (loss per
step, metrics per evaluation, final values, why it stopped) and this file only
arranges it. Shared by run's table, compare and the markdown/CSV writers.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from rich.console import Group
from rich.text import Text

from .printable import printable

ROWS = 20  # a training table shows at most about this many steps (long runs are thinned)


def train_json(t) -> dict:
    """spec-v2's `train` document: v1's keys (loss, final_loss, params, params_per_step,
    gradients) and v2's (steps, epochs, eval_steps, metrics, final, stopped)."""
    from .render import jsonable

    return {"loss": jsonable(t.loss), "final_loss": jsonable(t.final_loss),
            "params": jsonable(t.final), "params_per_step": jsonable(t.params),
            "gradients": jsonable(t.gradients),
            "steps": t.steps, "epochs": t.epochs, "eval_steps": [int(s) for s in t.eval_steps],
            "metrics": {m: {part: jsonable(v) for part, v in parts.items()}
                        for m, parts in t.metrics.items()},
            "final": {"loss": jsonable(t.final_loss),
                      **{m: {part: jsonable(v) for part, v in parts.items()}
                         for m, parts in t.final_metrics.items()}},
            "stopped": stopped_json(t.stopped)}


def stopped_json(stopped) -> dict | None:
    """{"step", "reason", "nonfinite"}, the birth record shaped as the top-level `nonfinite`."""
    if stopped is None:
        return None
    from .render import nonfinite_json

    birth = stopped.get("nonfinite")
    return {"step": stopped.get("step"), "reason": stopped.get("reason"),
            "nonfinite": nonfinite_json(birth) if hasattr(birth, "phase") else birth}


def shown_steps(count: int, marks=(), unit: str = "step", limit: int = ROWS) -> tuple[list[int], str]:
    """Which of `count` rows a table shows, and a note saying which: all of few; of many, the
    marked ones (the evaluation points) or else every step, thinned to about `limit` by a round
    stride (round_up), always with the first and the last row."""
    if count <= limit:
        return list(range(count)), ""
    pool = sorted({int(m) for m in marks if 0 <= m < count})
    note = "the steps of its evaluations" if pool else ""
    pool = pool or list(range(count))
    if len(pool) > limit:
        stride = round_up(math.ceil(len(pool) / limit))
        pool = pool[::stride]
        note = f"one {'evaluation' if note else unit} in {stride}"
    return sorted({0, *pool, count - 1}), note


def evaluation_loss(t, step: int):
    """The loss a table shows at an evaluation after `step` steps: the batch loss before that
    step, or after the last step the final loss on the whole training part (what the metrics
    beside it were evaluated with); "" past the run's end."""
    if step < len(t.loss):
        return t.loss[step]
    return t.final_loss if step == len(t.loss) else ""


def round_up(n: int) -> int:
    """The least of 1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, ... at least n."""
    scale = 1
    while True:
        for step in (1, 2, 2.5, 5) if scale > 1 else (1, 2, 5):
            if step * scale >= n:
                return int(step * scale)
        scale *= 10


def steps_per_epoch(experiment) -> int | None:
    """Optimizer steps in one epoch, from the data's size, split and batch size (None without
    data): ceil(n_train / batch_size), the last shorter batch kept."""
    data, spec = getattr(experiment, "data", None), experiment.train
    if data is None:
        return None
    n = len(data.y)
    n_train = n - round(data.test * n)
    batch = spec.batch_size or n_train
    return max(1, math.ceil(n_train / batch)) if n_train else None


def epoch_text(step: int, per_epoch: int | None) -> Text:
    """Epochs done after `step` steps: whole, or to two decimals inside an epoch."""
    if per_epoch is None:
        return Text("")
    done = step / per_epoch
    return Text(f"{done:g}" if step % per_epoch == 0 else f"{done:.2f}")


def final_is_last_evaluation(eval_steps, losses: int) -> bool:
    """Whether the last evaluation came after the last step (of `losses` batch losses): its
    values are the final ones, so a table shows it as the final row ("12 (final)"), once."""
    return bool(eval_steps) and eval_steps[-1] >= losses


class TrainLayout(NamedTuple):
    """The training table as cells, for any writer (the terminal's rich table, the HTML report)."""

    title: str
    columns: list  # the header of each column (metric names come from the spec)
    rows: list  # lists of rich Text cells (NaN and inf styled as number_text styles them)
    caption: str
    stopped: Text | None  # the note under a stopped run's table


def train_layout(result) -> TrainLayout:
    """The run's training: per evaluation point (step, epoch, loss, each metric on train and
    test) then the final row (the last evaluation's, when it came after the last step); without
    metrics the loss per step (and small models' parameters). A long run is thinned
    (shown_steps) and its title says how; a stopped run says where and why (`stopped`)."""
    from .render import _brief, number_text

    t, exp = result.train, result.experiment
    per_epoch = steps_per_epoch(exp)
    metrics = list(t.metrics)
    parts = {m: [p for p in ("train", "test") if p in t.metrics[m]] for m in metrics}
    names = [] if metrics or not any(t.params.values()) else list(t.params)

    def epoch(step: int) -> list:
        return [] if per_epoch is None else [epoch_text(step, per_epoch)]

    rows = []
    # An evaluation after the last step holds the final values already: its row is the final
    # row ("12 (final)"), not a copy of it. A stopped run's last row holds the batch loss of
    # the step that stopped it, which is not the final loss: both rows stay.
    merged = bool(metrics) and final_is_last_evaluation(t.eval_steps, len(t.loss))
    if metrics:  # one row per evaluation; the loss before that step (after the last: final)
        shown, note = shown_steps(len(t.eval_steps), unit="evaluation")
        for k in shown:
            step = t.eval_steps[k]
            last = merged and k == len(t.eval_steps) - 1
            rows.append([Text(f"{step} (final)" if last else str(step)), *epoch(step),
                         number_text(evaluation_loss(t, step)),
                         *(number_text(_at(t.metrics[m][p], k)) for m in metrics for p in parts[m])])
    else:
        shown, note = shown_steps(len(t.loss), t.eval_steps)
        for k in shown:
            rows.append([Text(str(k)), *epoch(k), number_text(t.loss[k]),  # a stopped step has no params
                         *(Text("") if k >= len(t.params[n]) else _brief(np.asarray(t.params[n][k]))
                           for n in names)])
    if not merged:
        rows.append([Text("final"), *([Text("")] if per_epoch else []), number_text(t.final_loss),
                     *(number_text(t.final_metrics.get(m, {}).get(p)) for m in metrics
                       for p in parts[m]),
                     *(_brief(np.asarray(t.final[n])) for n in names)])

    steps = t.steps or len(t.loss)
    title = f"training ({steps} step{'s' if steps != 1 else ''}"
    title += f", {t.epochs} epoch{'s' if t.epochs != 1 else ''}" if t.epochs is not None else ""
    title += f", loss {exp.train.loss}" + (f"; shown: {note}" if note else "") + ")"
    columns = ["step", *(["epoch"] if per_epoch else []), "loss",
               *(f"{m} ({p})" for m in metrics for p in parts[m]), *(f"{n} after" for n in names)]
    caption = ""
    if per_epoch is not None:
        caption = ("loss: the batch loss before that step (after the last step, the whole "
                   "training part's)" + ("; metrics on the training and test parts"
                                         if metrics else ""))
    elif metrics:
        caption = "loss: the loss before that step (after the last step, the final loss)"
    return TrainLayout(title, columns, rows, caption, stopped_text(t.stopped))


def train_table(result):
    """train_layout as the terminal's rich table, with the stopped note under it."""
    from .render import _table, spec_text

    layout = train_layout(result)
    table = _table(layout.title)
    for column in layout.columns:
        table.add_column(spec_text(column), justify="right")
    for row in layout.rows:
        table.add_row(*row)
    table.caption = layout.caption or None
    table.caption_justify = "left"
    return table if layout.stopped is None else Group(table, layout.stopped)


def _at(values: list, k: int):
    """The k-th value, or None where a list is shorter (a loop stopped before evaluating)."""
    return values[k] if k < len(values) else None


def stopped_text(stopped) -> Text | None:
    """"training stopped at step 17: non-finite loss; NaN born at log(p) spec.yaml:9:6"."""
    if stopped is None:
        return None
    doc = stopped_json(stopped)
    text = Text(f"training stopped at step {doc['step']}: {printable(doc['reason'])}",
                style="bold red")
    birth = doc["nonfinite"]
    if birth:
        from .render import kind_text

        born = birth.get("born")  # the JSON's "Infinity": the tables write "inf"
        text.append(f"; {kind_text(born) if born else 'non-finite'} born at ", style="red")
        text.append(printable(birth.get("expr") or birth.get("op") or "?"), style="bold")
        where = birth.get("location")
        text.append(printable(f"  {where}" if where else ""), style="red")
        if birth.get("op") and birth.get("expr"):
            text.append(printable(f" (op {birth['op']})"), style="red")
    return text
