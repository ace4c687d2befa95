"""Turn Results into what people read: rich tables and JSON (markdown and CSV: render_formats).

Nothing here computes a gradient; it only lays out what the runner found.
"""
from __future__ import annotations

import math

import numpy as np
from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from .printable import printable
from .render_train import train_json, train_table

ELEMENTWISE_LIMIT = 24  # tensors up to this size are shown element by element


# ----- spec text -----
def spec_text(text, style: str = "") -> Text:
    """Text from a spec (a name, a description, a path) as a rich cell: never markup, never
    a control sequence."""
    return Text(printable(text), style=style)


# ----- numbers -----
def number_text(value, *, differs: bool = False, digits: int = 6) -> Text:
    """A number for a table cell: NaN and inf stand out, a differing gradient is marked."""
    if value is None:
        return Text("None", style="dim italic")
    v = float(value)
    if math.isnan(v) or math.isinf(v):
        return Text(str(v).replace("inf", "∞"), style="bold red")
    text = f"{v:.{digits}g}" if isinstance(value, (float, np.floating)) else str(value)
    return Text(text, style="yellow" if differs else "")


def jsonable(value):
    """Nested lists and plain numbers; non-finite floats as "NaN", "Infinity", "-Infinity"."""
    if value is None:
        return None
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    array = np.asarray(value)
    if array.ndim:
        if array.dtype.kind in "biu" or (array.dtype.kind == "f" and np.isfinite(array).all()):
            return array.tolist()  # the same numbers as item() per element, in one C call
        return [jsonable(v) for v in array]
    item = array.item()
    if isinstance(item, float) and not math.isfinite(item):
        return "NaN" if math.isnan(item) else ("Infinity" if item > 0 else "-Infinity")
    return item


# ----- JSON -----
def to_json(result) -> dict:
    """The --format json document of one result (spec-v1's keys, spec-v2's `train`)."""
    exp = result.experiment
    doc = {
        "name": exp.name, "backend": result.backend, "dtype": exp.dtype, "seed": exp.seed,
        "description": exp.description,
        "values": {k: jsonable(v) for k, v in result.values.items()},
        "gradients": {o: {i: {"overridden": jsonable(r.overridden), "true": jsonable(r.true),
                              "numeric": jsonable(r.numeric), "numeric_kind": r.numeric_kind}
                          for i, r in row.items()} for o, row in result.gradients.items()},
        "summary": {o: {i: {k: jsonable(getattr(s, k)) for k in s._fields}
                        for i, s in row.items()} for o, row in result.summary.items()},
        "overrides": [{"op": e.op, "gradient": e.gradient, "scope": list(e.scope) if e.scope else None,
                       "matched_ops": n} for e, n in result.overrides],
        "warnings": list(result.warnings),
        "conventions": [{"topic": c.topic, "text": c.text, "output": c.output, "input": c.input}
                        for c in result.conventions],
    }
    doc["nonfinite"] = [nonfinite_json(n) for n in result.nonfinite]
    if result.train is not None:
        doc["train"] = train_json(result.train)
    if result.expect is not None:
        doc["expect"] = {"passed": result.expect.passed, "failures": list(result.expect.failures)}
    return doc


def error_doc(path, message: str, exit_code: int) -> dict:
    """The JSON entry of a spec that could not run, in its place among the results."""
    return {"path": str(path), "error": message, "exit_code": exit_code}


def json_text(results) -> str:
    """Results (and error_doc entries) as one strict JSON document: an object for one."""
    import json

    docs = [r if isinstance(r, dict) else to_json(r) for r in results]
    return json.dumps(docs[0] if len(docs) == 1 else docs, indent=2, allow_nan=False)


# ----- rich tables -----
def _table(title: str) -> Table:
    # Wide enough for its title: rich would otherwise wrap it to the columns' width.
    title = printable(title)
    return Table(title=Text(title, style="table.title"), title_justify="left", min_width=len(title) + 2)


def header(result) -> Panel:
    exp = result.experiment
    lines = [Text.assemble(spec_text(exp.name, "bold"), "  ",
                           spec_text(exp.description or "", "italic"))]
    lines.append(spec_text(f"backend {result.backend} · {exp.dtype} · seed {exp.seed} · {exp.path}",
                           "dim"))
    for entry, count in result.overrides:
        scope = f" in {', '.join(entry.scope)}" if entry.scope else ""
        style = "green" if count else "bold yellow"
        note = f"{count} op{'s' if count != 1 else ''}" if count else "matched no op"
        lines.append(spec_text(f"override {entry.op} → {entry.gradient}{scope}: {note}", style))
    return Panel(Group(*lines), expand=False)


def values_table(result) -> Table | None:
    if not result.values:
        return None
    table = _table("values")
    table.add_column("name", style="bold")
    table.add_column("shape")
    table.add_column("value")
    for name, value in result.values.items():
        array = np.asarray(value)
        table.add_row(spec_text(name), str(array.shape) if array.ndim else "scalar", _brief(array))
    return table


def _brief(array: np.ndarray) -> Text:
    if array.ndim == 0:
        return number_text(array.item())
    if array.size <= ELEMENTWISE_LIMIT:
        text = np.array2string(array, precision=6, separator=", ", max_line_width=100)
        non_finite = array.dtype.kind == "f" and not np.all(np.isfinite(array))
        return Text(text, style="bold red" if non_finite else "")
    finite = array[np.isfinite(array)] if array.dtype.kind == "f" else array
    bad = array.size - finite.size
    text = (f"min {np.min(finite):.4g}  max {np.max(finite):.4g}  mean {np.mean(finite):.4g}"
            if finite.size else "")
    return Text(text + (f"  {bad} non-finite" if bad else ""), style="bold red" if bad else "")


def gradient_table(result, output: str) -> Table:
    """One output's gradients: element by element for small inputs, summarized for large."""
    table = _table(f"gradients of {output}")
    for column in ("input", "element", "value", "overridden", "true", "numeric"):
        table.add_column(column, justify="right" if column not in ("input", "element") else "left")
    inputs = result.experiment.inputs
    for name, row in result.gradients[output].items():
        value = inputs[name].value if name in inputs else result.values.get(name)
        size = np.size(row.overridden if row.overridden is not None else row.true)
        if size <= ELEMENTWISE_LIMIT:
            _element_rows(table, name, value, row)
        else:
            _summary_rows(table, name, row)
        table.add_section()
    return table


def _element_rows(table: Table, name: str, value, row) -> None:
    cols = [row.overridden, row.true, row.numeric if row.numeric_kind == "full" else None]
    shape = np.shape(next((c for c in cols if c is not None), value))
    flat = [None if c is None else np.ravel(np.asarray(c, dtype=np.float64)) for c in cols]
    vflat = None if value is None else np.ravel(np.asarray(value))
    for k, index in enumerate(np.ndindex(*shape) if shape else [()]):
        over, true, num = (None if c is None else c[k] for c in flat)
        differs = over is not None and true is not None and not _close(over, true)
        label = f"[{', '.join(map(str, index))}]" if index else ""
        table.add_row(spec_text(name) if k == 0 else "", label,
                      number_text(None if vflat is None else vflat[k]),
                      number_text(over, differs=differs), number_text(true),
                      number_text(num) if row.numeric_kind == "full" else Text(row.numeric_kind, style="dim"))


def _summary_rows(table: Table, name: str, row) -> None:
    # A directional numeric estimate is a projection: its min/max mean nothing
    # beside the full gradients, so it is compared in the summary table only.
    columns = [row.overridden, row.true] + ([row.numeric] if row.numeric_kind == "full" else [])
    for stat, fn in (("norm", lambda a: np.sqrt(np.sum(a * a))), ("min", np.min), ("max", np.max),
                     ("mean", np.mean)):
        cells = []
        for column in columns:
            if column is None:
                cells.append(Text("None", style="dim italic"))
            else:
                with np.errstate(all="ignore"):
                    cells.append(number_text(float(fn(np.asarray(column, dtype=np.float64)))))
        if row.numeric_kind != "full":
            note = {"directional": "directional:", "skipped": "skipped"}.get(row.numeric_kind, "")
            cells.append(Text({"norm": note, "min": "see summary" if note == "directional:" else ""}
                              .get(stat, ""), style="dim"))
        table.add_row(spec_text(name) if stat == "norm" else "", stat, Text(""), *cells)


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def summary_table(result) -> Table:
    table = _table("overridden vs true")
    table.caption = ("o overridden, t true, n numeric (projected when directional); signs agree "
                     "counts the elements where neither o nor t is NaN (NaN: there are none)")
    table.caption_justify = "left"
    for column in ("output/input", "cos(o,t)", "max|o−t|", "‖o‖", "‖t‖", "signs agree",
                   "max|n−t|"):
        table.add_column(column, justify="left" if column == "output/input" else "right")
    for out, row in result.summary.items():
        for name, s in row.items():
            table.add_row(spec_text(f"{out}/{name}"), *(number_text(v, digits=4) for v in (
                s.cosine, s.max_abs_diff, s.norm_overridden, s.norm_true, s.sign_agreement,
                s.numeric_max_abs_diff)))
    return table


def expect_text(result) -> Text:
    if result.expect.passed:
        return Text("expect: passed", style="bold green")
    text = Text("expect: FAILED\n", style="bold red")
    for failure in result.expect.failures:
        text.append(f"  {printable(failure)}\n", style="red")
    return text


def result_renderables(result) -> list:
    parts = [header(result), values_table(result)]
    parts += [gradient_table(result, out) for out in result.gradients]
    if result.summary:
        parts.append(summary_table(result))
    if result.train is not None:
        parts.append(train_table(result))
    if result.expect is not None:
        parts.append(expect_text(result))
    if result.conventions:
        parts.append(Text("\n".join(f"note: {printable(c.text)}" for c in result.conventions),
                          style="dim"))
    if result.nonfinite:
        parts.append(nonfinite_note(result.nonfinite))
    unprinted = [w for w in result.warnings if w not in result.lint]  # lint's: on stderr
    if unprinted:
        parts.append(warnings_text(unprinted))
    return [p for p in parts if p is not None]


def warnings_text(warnings) -> Text:
    """The run's warnings (an override that matched nothing, a loss summed), one per line."""
    return Text("\n".join(f"warning: {printable(w)}" for w in warnings), style="yellow")


# ----- non-finite provenance -----
_KIND_JSON = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
_KIND_TEXT = {"nan": "NaN", "inf": "inf", "-inf": "-inf"}


def nonfinite_json(n) -> dict:
    """One spec-v2 `nonfinite` record (plus what the result and the op held)."""
    return {"pass": n.phase, "op": n.op, "expr": n.expr, "location": n.location,
            "tensor": n.tensor, "step": n.step, "value": _KIND_JSON[n.value],
            "born": _KIND_JSON[n.born]}


def nonfinite_note(records) -> Text:
    """Where each NaN or infinity was born, one line per birth, naming the results it reached."""
    births: dict[tuple, list] = {}
    for n in records:
        key = (n.phase, n.step, n.op, n.expr, n.location, n.born)
        births.setdefault(key, []).append(f"{printable(n.tensor)} ({_KIND_TEXT[n.value]})")
    text = Text()
    for (phase, step, op, expr, location, born), reached in births.items():
        when = f"{phase} pass" if step is None else f"training step {step}"
        text.append(f"non-finite: {when}: {_KIND_TEXT[born]} born at ", style="bold red")
        text.append(printable(expr or op), style="bold")  # spec text: escaped
        text.append(printable(f"  {location}" + (f" (op {op})" if op and expr else "")), style="red")
        text.append(f"; reaches {', '.join(reached)}\n", style="red")
    text.rstrip()
    return text


def quiet_line(result) -> Text:
    """One line per experiment, for --quiet runs of many specs."""
    name = printable(result.experiment.name)
    if result.expect is None:
        return Text(f"ran    {name} (no expect block)", style="dim")
    if result.expect.passed:
        return Text(f"passed {name}", style="green")
    return Text(f"FAILED {name}: " + printable("; ".join(result.expect.failures)), style="bold red")


def quiet_summary(results, errors: int) -> str:
    """The last line of a --quiet run; a spec without expect ran but was not checked."""
    checked = [r for r in results if r.expect is not None]
    passed = sum(r.expect.passed for r in checked)
    parts = [f"{passed} passed", f"{len(checked) - passed} failed"]
    if len(results) > len(checked):
        parts.append(f"{len(results) - len(checked)} ran (nothing to check)")
    if errors:
        parts.append(f"{errors} error{'s' if errors != 1 else ''}")
    return ", ".join(parts)
