"""Lay out a comparison of several runs: gradients, training and the notes that explain gaps.

Nothing here compares; comparison.compare and comparison.compare_training decide.
"""
from __future__ import annotations

import numpy as np
from rich.table import Table
from rich.text import Text

from . import norms
from .printable import printable
from .render import ELEMENTWISE_LIMIT, _brief, _table, jsonable, note_elements, number_text, spec_text
from .render_train import evaluation_loss, shown_steps, train_json

# a column per run shares the width: a longer tensor wrapped mid-array, a lone "," on a line
SIDE_BY_SIDE_LIMIT = 8


def write_comparisons(comparisons: list, tolerance: float | None, fmt: str, out,
                      output: str | None, specs) -> None:
    """compare's output in fmt: tables on the console out, or everything as text on stdout
    or in --output's file (tables as plain text), through output.deliver as run's."""
    from . import output as outputs

    if fmt == "table" and output is None:
        for part in comparison_renderables(comparisons, tolerance):
            out.print(part)
        return
    if fmt == "json":
        text = comparison_json(comparisons, tolerance) + "\n"
    elif fmt in ("csv", "markdown"):
        from . import render_compare_formats as formats

        write = formats.comparison_csv if fmt == "csv" else formats.comparison_markdown
        text = write(comparisons, tolerance)
    else:
        text = outputs.plain_text(comparison_renderables(comparisons, tolerance))
    outputs.deliver(text, output, specs, [r.experiment for c in comparisons for r in c.results])


def comparison_json(comparisons: list, tolerance: float | None) -> str:
    """compare --format json: the runs, each gradient row and each training quantity. Several
    specs compared across backends give one such document per spec, under "comparisons"."""
    import json

    judged = tolerance is not None  # without a tolerance nothing is judged: null, not true
    if len(comparisons) == 1:
        doc = {"tolerance": jsonable(tolerance), **_comparison_doc(comparisons[0], judged)}
    else:
        doc = {"tolerance": jsonable(tolerance),
               "within_tolerance": all(c.ok for c in comparisons) if judged else None,
               "comparisons": [{"spec": c.results[0].experiment.name,
                                "path": str(c.results[0].experiment.path),
                                **_comparison_doc(c, judged)}
                               for c in comparisons]}
    return json.dumps(doc, indent=2, allow_nan=False)


def _comparison_doc(c, judged: bool) -> dict:
    return {"runs": c.labels, "backends": [r.backend for r in c.results],
            "within_tolerance": c.ok if judged else None,
            "rows": [{"output": r.output, "input": r.input, "overridden": jsonable(r.overridden),
                      "true": jsonable(r.true), "max_diff": jsonable(r.max_diff), "within": r.within,
                      "excused": r.excused, "notes": r.notes, "present": r.present,
                      "note_elements": [note_elements(e) for e in r.note_elements],
                      "float32_rtol": r.float32_rtol}
                     for r in c.rows],
            "train": [{"quantity": r.quantity, "values": jsonable(r.values),
                       "max_diff": jsonable(r.max_diff), "within": r.within,
                       "excused": r.excused, "notes": r.notes, "float32_rtol": r.float32_rtol}
                      for r in c.train_rows],
            "curves": [{"run": label, "train": None if r.train is None else _curve_doc(r.train)}
                       for label, r in zip(c.labels, c.results)]}


CURVE_KEYS = ("steps", "epochs", "loss", "eval_steps", "metrics", "final", "stopped")


def _curve_doc(train) -> dict:
    """A run's curves and where it ended: spec-v2's `train` keys but the parameters."""
    doc = train_json(train)
    return {k: doc[k] for k in CURVE_KEYS}


def comparison_renderables(comparisons: list, tolerance: float | None) -> list:
    """The tables of each comparison; with several (specs across backends) each is headed by
    the spec it compares."""
    parts = []
    for c in comparisons:
        if len(comparisons) > 1:
            exp = c.results[0].experiment
            parts.append(Text.assemble(("spec ", "bold"), spec_text(exp.name, "bold"),
                                       spec_text(f" ({exp.path}) across backends", "dim")))
        parts += [spec_text(backends_line(c.labels, [r.backend for r in c.results]), "dim"),
                  comparison_table(c.labels, c.rows, tolerance, allowance_used(c.rows)),
                  training_comparison_table(c.labels, c.train_rows, tolerance,
                                            allowance_used(c.train_rows)),
                  convention_notes(c.labels, c.results, c.rows), *curve_tables(c.labels, c.results)]
    return [p for p in parts if p is not None]


def backends_line(labels: list[str], backends: list[str]) -> str:
    """Which backend ran the columns: "backend torch" when one ran them all (`--backend`,
    `--set backend=`, the specs' own), else each column's ("backends a: numpy, b: torch"; a
    column named by its backend once)."""
    if len(set(backends)) == 1:
        return f"backend {backends[0]}"
    return "backends " + ", ".join(b if label == b else f"{label}: {b}"
                                   for label, b in zip(labels, backends))


def allowance_used(rows: list) -> float | None:
    """The float32 allowance some of these rows were judged with (None: none was)."""
    return next((r.float32_rtol for r in rows if r.float32_rtol is not None), None)


def allowance(tolerance: float, float32_rtol: float | None) -> str:
    """The verdict column's heading: what each element's |diff| was held to."""
    if float32_rtol is None:
        return f"≤ {tolerance:g}"
    return f"≤ {tolerance:g} + {float32_rtol:g}·|first|"  # per element, docs/spec.md


def comparison_table(labels: list[str], rows, tolerance: float | None,
                     float32_rtol: float | None = None) -> Table:
    """Overridden gradients side by side (one column per run), the true gradient once."""
    table = _table("overridden gradients side by side")
    table.add_column("output/input")
    table.add_column("element")
    for label in labels:
        table.add_column(spec_text(label), justify="right")
    table.add_column("true", justify="right")
    table.add_column("max |diff|", justify="right")
    if tolerance is not None:
        table.add_column(allowance(tolerance, float32_rtol))
    for row in rows:
        columns = [*row.overridden, row.true]
        arrays = [None if c is None else np.ravel(np.asarray(c, dtype=np.float64)) for c in columns]
        size = max((a.size for a in arrays if a is not None), default=0)
        shown = range(max(size, 1)) if size <= ELEMENTWISE_LIMIT else [None]  # 1: a line to say why
        present = row.present or [True] * len(row.overridden)
        missing = [ABSENT if not p else UNCONNECTED for p in [*present, present[0]]]  # true: run 0's
        for k in shown:
            cells = []
            for a, why in zip(arrays, missing):
                if a is None:  # said once, on the row's first line
                    cells.append(Text(why if k in (0, None) else "", style="dim"))
                elif k is not None and k >= a.size:  # a smaller shape than another run's
                    cells.append(Text(""))
                elif k is None:
                    cells.append(Text.assemble("‖·‖ ", number_text(norms.norm(a))))
                else:
                    cells.append(number_text(a[k]))
            verdict = [] if tolerance is None else [_verdict(row)]
            first = k in (0, None)
            table.add_row(spec_text(f"{row.output}/{row.input}") if first else "",
                          "" if k is None else str(k), *cells,
                          number_text(row.max_diff) if first else Text(""),
                          *(verdict if first else [Text("")] * len(verdict)))
        table.add_section()
    return table


ABSENT = "absent"  # the run's spec has no such output/input pair
UNCONNECTED = "unconnected"  # it has, but the output does not depend on the input


def _verdict(row) -> Text:
    if row.within is None:  # nothing to compare with: one run alone trained
        return Text("—", style="dim")
    if row.within:
        return Text("ok", style="green")
    if row.excused:
        return Text("convention (see note)", style="yellow")
    return Text("DIFFERS", style="bold red")


def convention_notes(labels: list[str], results, rows) -> Text | None:
    """The notes under a comparison: per row, then each backend's general ones."""
    pairs: dict[str, list] = {}  # one line per note, naming every row it explains
    for r in rows:
        for note in r.notes:
            pairs.setdefault(note, []).append(f"{r.output}/{r.input}")
    lines = [f"{', '.join(dict.fromkeys(where))}: {note}" for note, where in pairs.items()]
    lines += [f"{label}: {c.text}" for label, res in zip(labels, results)
              for c in res.conventions if c.output is None]
    if not lines:
        return None
    return Text("notes\n" + "\n".join(f"  {printable(line)}" for line in dict.fromkeys(lines)),
                style="dim")


def curve_tables(labels: list[str], results) -> list:
    """The trained runs' curves side by side: the loss per step (long runs at their evaluation
    points), each metric on each part per evaluation point, then a table of final values."""
    trained = [(label, r.train) for label, r in zip(labels, results) if r.train is not None]
    if not trained:
        return []
    evaluations = sorted({s for _, t in trained if t.metrics for s in t.eval_steps})
    if evaluations:  # as run's training table: a row per evaluation, as the metrics' tables
        shown, note = shown_steps(len(evaluations), unit="evaluation")
        shown, loss_at = [evaluations[k] for k in shown], evaluation_loss
    else:  # as run's table without metrics: the loss per step
        shown, note = shown_steps(max(len(t.loss) for _, t in trained),
                                  {s for _, t in trained for s in t.eval_steps})
        loss_at = _step_loss
    tables = [_curve_table("training loss side by side", note, trained, shown, loss_at,
                           lambda t: t.final_loss,
                           _final_step([t for _, t in trained], evaluations))]
    for metric, part in dict.fromkeys((m, p) for _, t in trained for m, parts in t.metrics.items()
                                      for p in parts):
        steps = sorted({s for _, t in trained if part in t.metrics.get(metric, {})
                        for s in t.eval_steps})
        shown, note = shown_steps(len(steps), unit="evaluation")
        shown = [steps[k] for k in shown]

        def at(t, step, metric=metric, part=part):
            values = t.metrics.get(metric, {}).get(part)
            if values is None or step not in t.eval_steps:
                return ""
            k = t.eval_steps.index(step)
            return values[k] if k < len(values) else ""

        tables.append(_curve_table(f"{metric} ({part}) side by side", note, trained, shown, at,
                                   lambda t, metric=metric, part=part:
                                   t.final_metrics.get(metric, {}).get(part, ""),
                                   _final_step([t for _, t in trained
                                                if part in t.metrics.get(metric, {})], steps)))
    tables.append(final_table(trained))
    return tables


def _final_step(runs: list, steps: list) -> int | None:
    """The last row's step when it holds every run's final values: each run evaluated last
    after its last step, all at that step. Else None."""
    if not steps or not all(t.eval_steps and t.eval_steps[-1] == steps[-1] >= len(t.loss)
                            for t in runs):
        return None
    return steps[-1]


def _step_loss(t, step: int):
    return t.loss[step] if step < len(t.loss) else ""  # "": the run has no such step


def _curve_table(title: str, note: str, trained: list, steps: list, value_at, final,
                 final_step: int | None = None) -> Table:
    """Rows at the given steps, a column per run, then the final row; the note says which
    steps a long run shows. When the last row is the final values of every run (final_step),
    it is the final row ("75 (final)"), shown once."""
    table = _table(title + (f" (shown: {note})" if note else ""))
    table.add_column("step", justify="right")
    for label, _ in trained:
        table.add_column(spec_text(label), justify="right")
    for step in steps:
        shown = f"{step} (final)" if step == final_step else str(step)
        table.add_row(shown, *(_cell(value_at(t, step)) for _, t in trained))
    if final_step is None:
        table.add_row("final", *(_cell(final(t)) for _, t in trained))
    return table


def _cell(value) -> Text:
    return Text("") if isinstance(value, str) else number_text(value)  # "": the run has none


def final_table(trained: list) -> Table:
    """Where each trained run ended: steps, epochs, the final loss and metrics, why it stopped."""
    table = _table("training results side by side")
    table.add_column("")
    for label, _ in trained:
        table.add_column(spec_text(label), justify="right")
    table.add_row("steps", *(str(t.steps or len(t.loss)) for _, t in trained))
    if any(t.epochs is not None for _, t in trained):
        table.add_row("epochs", *("" if t.epochs is None else str(t.epochs) for _, t in trained))
    table.add_row("final loss", *(number_text(t.final_loss) for _, t in trained))
    for metric, part in dict.fromkeys((m, p) for _, t in trained for m, parts in t.final_metrics.items()
                                      for p in parts):
        table.add_row(spec_text(f"{metric} ({part})"),
                      *(_cell(t.final_metrics.get(metric, {}).get(part, "")) for _, t in trained))
    if any(t.stopped for _, t in trained):
        table.add_row("stopped", *(Text("no") if t.stopped is None else Text(
            printable(f"step {t.stopped.get('step')}: {t.stopped.get('reason')}"), style="bold red")
            for _, t in trained))
    return table


def training_comparison_table(labels: list[str], rows, tolerance: float | None,
                              float32_rtol: float | None = None) -> Table | None:
    """What training produced per run (loss per step, final loss, final parameters), and
    whether the runs agree."""
    if not rows:
        return None
    table = _table("training side by side")
    table.add_column("quantity")
    for label in labels:
        table.add_column(spec_text(label), justify="right")
    table.add_column("max |diff|", justify="right")
    if tolerance is not None:
        table.add_column(allowance(tolerance, float32_rtol))
    for row in rows:
        cells = [Text(v, style="dim") if isinstance(v, str)  # NOT_TRAINED
                 else Text(ABSENT, style="dim") if v is None
                 else _brief(np.asarray(v, dtype=np.float64), limit=SIDE_BY_SIDE_LIMIT)
                 for v in row.values]
        verdict = [] if tolerance is None else [_verdict(row)]
        table.add_row(spec_text(row.quantity), *cells, number_text(row.max_diff), *verdict)
    return table
