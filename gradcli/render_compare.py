"""Lay out a comparison of several runs: gradients, training and the notes that explain gaps.

Nothing here compares; runner.compare and runner.compare_training decide.
"""
from __future__ import annotations

import numpy as np
from rich.table import Table
from rich.text import Text

from .printable import printable
from .render import ELEMENTWISE_LIMIT, _brief, _table, jsonable, number_text, spec_text


def comparison_json(comparisons: list, tolerance: float | None) -> str:
    """compare --format json: the runs, each gradient row and each training quantity. Several
    specs compared across backends give one such document per spec, under "comparisons"."""
    import json

    if len(comparisons) == 1:
        doc = {"tolerance": tolerance, **_comparison_doc(comparisons[0])}
    else:
        doc = {"tolerance": tolerance, "within_tolerance": all(c.ok for c in comparisons),
               "comparisons": [{"spec": c.results[0].experiment.name,
                                "path": str(c.results[0].experiment.path), **_comparison_doc(c)}
                               for c in comparisons]}
    return json.dumps(doc, indent=2, allow_nan=False)


def _comparison_doc(c) -> dict:
    return {"runs": c.labels, "within_tolerance": c.ok,
            "rows": [{"output": r.output, "input": r.input, "overridden": jsonable(r.overridden),
                      "true": jsonable(r.true), "max_diff": jsonable(r.max_diff), "within": r.within,
                      "excused": r.excused, "notes": r.notes} for r in c.rows],
            "train": [{"quantity": r.quantity, "values": jsonable(r.values),
                       "max_diff": jsonable(r.max_diff), "within": r.within,
                       "excused": r.excused, "notes": r.notes} for r in c.train_rows]}


def comparison_renderables(comparisons: list, tolerance: float | None) -> list:
    """The tables of each comparison; with several (specs across backends) each is headed by
    the spec it compares."""
    parts = []
    for c in comparisons:
        if len(comparisons) > 1:
            exp = c.results[0].experiment
            parts.append(Text.assemble(("spec ", "bold"), spec_text(exp.name, "bold"),
                                       spec_text(f" ({exp.path}) across backends", "dim")))
        parts += [comparison_table(c.labels, c.rows, tolerance),
                  training_comparison_table(c.labels, c.train_rows, tolerance),
                  convention_notes(c.labels, c.results, c.rows), loss_table(c.labels, c.results)]
    return [p for p in parts if p is not None]


def comparison_table(labels: list[str], rows, tolerance: float | None) -> Table:
    """Overridden gradients side by side (one column per run), the true gradient once."""
    table = _table("overridden gradients side by side")
    table.add_column("output/input")
    table.add_column("element")
    for label in labels:
        table.add_column(spec_text(label), justify="right")
    table.add_column("true", justify="right")
    table.add_column("max |diff|", justify="right")
    if tolerance is not None:
        table.add_column(f"≤ {tolerance:g}")
    for row in rows:
        columns = [*row.overridden, row.true]
        arrays = [None if c is None else np.ravel(np.asarray(c, dtype=np.float64)) for c in columns]
        size = max((a.size for a in arrays if a is not None), default=0)
        shown = range(size) if size <= ELEMENTWISE_LIMIT else [None]
        for k in shown:
            cells = []
            for a in arrays:
                if a is None:
                    cells.append(number_text(None))
                elif k is not None and k >= a.size:  # a smaller shape than another run's
                    cells.append(Text(""))
                elif k is None:
                    cells.append(Text(f"‖·‖ {np.sqrt(np.sum(a * a)):.6g}"))
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


def loss_table(labels: list[str], results) -> Table | None:
    trained = [(label, r) for label, r in zip(labels, results) if r.train is not None]
    if not trained:
        return None
    table = _table("training loss side by side")
    table.add_column("step", justify="right")
    for label, _ in trained:
        table.add_column(spec_text(label), justify="right")
    steps = max(len(r.train.loss) for _, r in trained)
    shown = list(range(steps)) if steps <= 20 else [*range(10), *range(steps - 5, steps)]
    for k in shown:
        table.add_row(str(k), *(number_text(r.train.loss[k]) if k < len(r.train.loss) else Text("")
                                for _, r in trained))
    table.add_row("end", *(number_text(r.train.final_loss) for _, r in trained))
    return table


def training_comparison_table(labels: list[str], rows, tolerance: float | None) -> Table | None:
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
        table.add_column(f"≤ {tolerance:g}")
    for row in rows:
        cells = [Text(v, style="dim") if isinstance(v, str)  # NOT_TRAINED
                 else number_text(None) if v is None else _brief(np.asarray(v, dtype=np.float64))
                 for v in row.values]
        verdict = [] if tolerance is None else [_verdict(row)]
        table.add_row(spec_text(row.quantity), *cells, number_text(row.max_diff), *verdict)
    return table
