"""Lay out what training produced: the JSON `train` document and the run's training table.

Nothing here trains or evaluates: the loop filled the TrainRecord (loss per
step, metrics per evaluation, final values, why it stopped) and this file only
arranges it. Shared by run's table, compare and the markdown/CSV writers.
"""
from __future__ import annotations

import math

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


def shown_steps(count: int, marks=(), limit: int = ROWS) -> list[int]:
    """Which of `count` rows a table shows: all of few; of many, the marked ones (evaluation
    points) or else every step, thinned evenly to about `limit`, always with the first and last."""
    if count <= limit:
        return list(range(count))
    pool = sorted({int(m) for m in marks if 0 <= m < count}) or list(range(count))
    if len(pool) > limit:
        picks = np.linspace(0, len(pool) - 1, limit).round().astype(int)
        pool = [pool[k] for k in dict.fromkeys(picks.tolist())]
    return sorted({0, *pool, count - 1})


def with_gaps(rows: list[int]) -> list[int | None]:
    """rows with None where steps were left out (drawn as a "…" row)."""
    out: list[int | None] = []
    for k, row in enumerate(rows):
        if k and row != rows[k - 1] + 1:
            out.append(None)
        out.append(row)
    return out


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


def train_table(result):
    """The run's training: per evaluation point (step, epoch, loss, each metric on train and
    test) then the final row; without metrics the loss per step (and small models' parameters),
    thinned to the evaluation points when long. A stopped run says where and why under it."""
    from .render import _brief, _table, number_text, spec_text

    t, exp = result.train, result.experiment
    per_epoch = steps_per_epoch(exp)
    steps = t.steps or len(t.loss)
    title = f"training ({steps} step{'s' if steps != 1 else ''}"
    title += f", {t.epochs} epoch{'s' if t.epochs != 1 else ''}" if t.epochs is not None else ""
    table = _table(title + f", loss {exp.train.loss})")
    table.add_column("step", justify="right")
    if per_epoch is not None:
        table.add_column("epoch", justify="right")
    table.add_column("loss", justify="right")
    metrics = list(t.metrics)
    parts = {m: [p for p in ("train", "test") if p in t.metrics[m]] for m in metrics}
    for m in metrics:
        for part in parts[m]:
            table.add_column(spec_text(f"{m} ({part})"), justify="right")
    names = [] if metrics or not any(t.params.values()) else list(t.params)
    for name in names:
        table.add_column(spec_text(f"{name} after"), justify="right")
    width = len(table.columns)

    def loss_at(step: int):  # the batch loss before step `step`; after the last: the final loss
        return t.loss[step] if step < len(t.loss) else t.final_loss

    if metrics:  # one row per evaluation
        rows = [(k, t.eval_steps[k]) for k in shown_steps(len(t.eval_steps))]
        last = None
        for k, step in rows:
            if last is not None and k != last + 1:
                table.add_row("…", *[""] * (width - 1))
            last = k
            cells = [number_text(_at(t.metrics[m][p], k)) for m in metrics for p in parts[m]]
            table.add_row(str(step), *([epoch_text(step, per_epoch)] if per_epoch else []),
                          number_text(loss_at(step)), *cells)
    else:
        for k in with_gaps(shown_steps(len(t.loss), t.eval_steps)):
            if k is None:
                table.add_row("…", *[""] * (width - 1))
                continue
            table.add_row(str(k), *([epoch_text(k, per_epoch)] if per_epoch else []),
                          number_text(t.loss[k]),
                          *(_brief(np.asarray(t.params[n][k])) for n in names))
    final = [number_text(t.final_metrics.get(m, {}).get(p)) for m in metrics for p in parts[m]]
    table.add_row("final", *([Text("")] if per_epoch else []), number_text(t.final_loss), *final,
                  *(_brief(np.asarray(t.final[n])) for n in names))
    if metrics or per_epoch is not None:
        table.caption = ("loss: the batch loss before that step (the whole training part's after "
                         "the last step); metrics on the training and test parts")
        table.caption_justify = "left"
    note = stopped_text(t.stopped)
    return table if note is None else Group(table, note)


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
        text.append(f"; {birth.get('born', 'non-finite')} born at ", style="red")
        text.append(printable(birth.get("expr") or birth.get("op") or "?"), style="bold")
        where = birth.get("location")
        text.append(printable(f"  {where}" if where else ""), style="red")
        if birth.get("op") and birth.get("expr"):
            text.append(printable(f" (op {birth['op']})"), style="red")
    return text
