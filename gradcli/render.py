"""Turn Results into what people read: tables and JSON (markdown and CSV: render_formats).

Nothing here computes a gradient; it only lays out what the runner found. The tables are
built as parts (render_parts: plain data), drawn by rich (`result_renderables`) or, off a
terminal, by render_plain; rich is imported only for the former.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from .printable import printable
from .render_parts import SECTION, PanelPart, Styled, TablePart, TextPart, rstripped, to_rich
from .spelling import KIND_TEXT, array_text
from .spelling import number_text as spelled

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text

ELEMENTWISE_LIMIT = 24  # tensors up to this size are shown element by element
NOTHING = "—"  # a cell with no number (an unconnected gradient): never Python's "None"


# ----- spec text -----
def spec_text(text, style: str = "") -> Text:
    """Text from a spec (a name, a description, a path) as a rich cell: never markup, never
    a control sequence."""
    from rich.text import Text

    return Text(printable(text), style=style)


# ----- numbers -----
def number_text(value, *, differs: bool = False, digits: int = 6) -> Text:
    """A number for a table cell: nan and inf stand out, a differing gradient is marked."""
    from rich.text import Text

    return Text(*_number(value, differs, digits))


def _number(value, differs: bool = False, digits: int = 6) -> Styled:
    if value is None:
        return NOTHING, "dim"
    v = float(value)
    if math.isnan(v) or math.isinf(v):
        return spelled(v), "bold red"  # "NaN", "inf", "-inf": as the notes spell them
    text = f"{v:.{digits}g}" if isinstance(value, (float, np.floating)) else str(value)
    return text, "yellow" if differs else ""


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
        # the seed of each directional numeric check's directions (fd.random_directions), null
        # where the check was full or skipped: what the backend reported, for reproducing it
        "numeric_seeds": {o: {i: result.numeric_seeds.get(o, {}).get(i) for i in row}
                          for o, row in result.gradients.items()},
        "overrides": [{"op": e.op, "gradient": e.gradient, "scope": list(e.scope) if e.scope else None,
                       "matched_ops": n} for e, n in result.overrides],
        "warnings": list(result.warnings),
        "conventions": [{"topic": c.topic, "text": c.text, "output": c.output, "input": c.input,
                         "note_elements": note_elements(c.elements)} for c in result.conventions],
    }
    doc["nonfinite"] = [nonfinite_json(n) for n in result.nonfinite]
    # spec-v1's document shows train and expect unconditionally: a spec without the block
    # has train null and an expect that passed with nothing checked (declared false)
    doc["train"] = None
    if result.train is not None:
        from .render_train import train_json

        doc["train"] = train_json(result.train)
    doc["expect"] = {"passed": True, "failures": [], "declared": False}
    if result.expect is not None:
        doc["expect"] = {"passed": result.expect.passed, "failures": list(result.expect.failures),
                         "declared": True}
    return doc


def note_elements(elements) -> list | None:
    """A note's elements as JSON holds them (run's conventions, compare's rows): the flat,
    row-major indices of the input's elements it is about; null for every element (and for a
    note on no output/input pair)."""
    return None if elements is None else [int(i) for i in elements]


def error_doc(path, message: str, exit_code: int) -> dict:
    """The JSON entry of a spec that could not run, in its place among the results."""
    return {"path": str(path), "error": message, "exit_code": exit_code}


def json_text(results) -> str:
    """Results (and error_doc entries) as one strict JSON document: an object for one."""
    import json

    docs = [r if isinstance(r, dict) else to_json(r) for r in results]
    return json.dumps(docs[0] if len(docs) == 1 else docs, indent=2, allow_nan=False)


# ----- tables -----
def _table(title: str) -> Table:
    """An empty rich table titled as run's tables are (render_train's training table)."""
    return to_rich(TablePart(printable(title), [], []))


def train_table(result):
    from .render_train import train_table

    return train_table(result)


def header(result) -> PanelPart:
    exp = result.experiment
    lines = [[(printable(exp.name), "bold"), ("  ", ""), (printable(exp.description or ""), "italic")]]
    lines.append([(printable(f"backend {result.backend} · {exp.dtype} · seed {exp.seed} · "
                             f"{exp.path}"), "dim")])
    for entry, count in result.overrides:
        scope = f" in {', '.join(entry.scope)}" if entry.scope else ""
        style = "green" if count else "bold yellow"
        note = f"{count} op{'s' if count != 1 else ''}" if count else "matched no op"
        lines.append([(printable(f"override {entry.op} → {entry.gradient}{scope}: {note}"), style)])
    return PanelPart(lines)


def values_table(result) -> TablePart | None:
    if not result.values:
        return None
    rows = []
    for name, value in result.values.items():
        array = np.asarray(value)
        rows.append([(printable(name), ""), (str(array.shape) if array.ndim else "scalar", ""),
                     _brief_cell(array)])
    return TablePart("values", [("name", "left", "bold"), ("shape", "left", ""),
                                ("value", "left", "")], rows, caption=printable(first_batch(result)))


def first_batch(result) -> str:
    """A data spec's values and gradients are those of the first training batch (docs/data.md):
    its size would otherwise read as the data set's."""
    return batch_note(result.experiment)


def batch_note(experiment) -> str:
    """first_batch's words for a loaded spec (also under `plot curve`'s title), "" without data."""
    data = getattr(experiment, "data", None)
    if data is None or data.features not in experiment.inputs:
        return ""
    rows = np.shape(experiment.inputs[data.features].value)[0]
    return (f"on the first training batch ({rows} row{'s' * (rows != 1)} of {data.features}), "
            "before training")


def _brief(array: np.ndarray, limit: int = ELEMENTWISE_LIMIT) -> Text:
    from rich.text import Text

    return Text(*_brief_cell(array, limit))


def _brief_cell(array: np.ndarray, limit: int = ELEMENTWISE_LIMIT) -> Styled:
    """A tensor in one cell: its elements up to `limit` of them, else min, max and mean."""
    if array.ndim == 0:
        return _number(array.item())
    if array.size <= limit:
        text = array_text(array, precision=6, separator=", ", max_line_width=100)
        non_finite = array.dtype.kind == "f" and not np.all(np.isfinite(array))
        return text, "bold red" if non_finite else ""
    finite = array[np.isfinite(array)] if array.dtype.kind == "f" else array
    bad = array.size - finite.size
    text = (f"min {np.min(finite):.4g}  max {np.max(finite):.4g}  mean {np.mean(finite):.4g}"
            if finite.size else "")
    return text + (f"  {bad} non-finite" if bad else ""), "bold red" if bad else ""


def gradient_table(result, output: str) -> TablePart:
    """One output's gradients: element by element for small inputs, summarized for large."""
    columns = [(column, "right" if column not in ("input", "element") else "left", "")
               for column in ("input", "element", "value", "overridden", "true", "numeric")]
    rows: list = []
    inputs = result.experiment.inputs
    for name, row in result.gradients[output].items():
        value = inputs[name].value if name in inputs else result.values.get(name)
        size = np.size(row.overridden if row.overridden is not None else row.true)
        if size <= ELEMENTWISE_LIMIT:
            _element_rows(rows, name, value, row)
        else:
            _summary_rows(rows, name, row)
        rows.append(SECTION)
    return TablePart(printable(f"gradients of {output}"), columns, rows,
                     caption=printable(first_batch(result)))


def _element_rows(rows: list, name: str, value, row) -> None:
    cols = [row.overridden, row.true, row.numeric if row.numeric_kind == "full" else None]
    shape = np.shape(next((c for c in cols if c is not None), value))
    flat = [None if c is None else np.ravel(np.asarray(c, dtype=np.float64)) for c in cols]
    vflat = None if value is None else np.ravel(np.asarray(value))
    for k, index in enumerate(np.ndindex(*shape) if shape else [()]):
        over, true, num = (None if c is None else c[k] for c in flat)
        differs = over is not None and true is not None and not _close(over, true)
        label = f"[{', '.join(map(str, index))}]" if index else ""
        rows.append([(printable(name) if k == 0 else "", ""), (label, ""),
                     _number(None if vflat is None else vflat[k]),
                     _number(over, differs=differs), _number(true),
                     _number(num) if row.numeric_kind == "full" else (row.numeric_kind, "dim")])


def _summary_rows(rows: list, name: str, row) -> None:
    # A directional numeric estimate is a projection: its min/max mean nothing
    # beside the full gradients, so it is compared in the summary table only.
    columns = [row.overridden, row.true] + ([row.numeric] if row.numeric_kind == "full" else [])
    for stat, fn in (("norm", lambda a: np.sqrt(np.sum(a * a))), ("min", np.min), ("max", np.max),
                     ("mean", np.mean)):
        cells = []
        for column in columns:
            if column is None:
                cells.append(_number(None))
            else:
                with np.errstate(all="ignore"):
                    cells.append(_number(float(fn(np.asarray(column, dtype=np.float64)))))
        if row.numeric_kind != "full":
            note = {"directional": "directional:", "skipped": "skipped"}.get(row.numeric_kind, "")
            cells.append(({"norm": note, "min": "see summary" if note == "directional:" else ""}
                          .get(stat, ""), "dim"))
        rows.append([(printable(name) if stat == "norm" else "", ""), (stat, ""), ("", ""), *cells])


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def summary_table(result) -> TablePart:
    columns = [(column, "left" if column == "output/input" else "right", "")
               for column in ("output/input", "cos(o,t)", "max|o−t|", "‖o‖", "‖t‖", "signs agree",
                              "max|n−t|")]
    rows = [[(printable(f"{out}/{name}"), ""), *(_number(v, digits=4) for v in (
                s.cosine, s.max_abs_diff, s.norm_overridden, s.norm_true, s.sign_agreement,
                s.numeric_max_abs_diff))]
            for out, row in result.summary.items() for name, s in row.items()]
    caption = ("o overridden, t true, n numeric (projected when directional); signs agree counts "
               "the elements where neither o nor t is NaN (NaN when there is no such element)")
    if any(s.norm_overridden is None or s.norm_true is None
           for row in result.summary.values() for s in row.values()):
        caption += f"; {NOTHING}: unconnected (the output does not depend on the input)"
    return TablePart("overridden vs true", columns, rows, caption=caption)


def expect_text(result) -> TextPart:
    if result.expect.passed:
        return TextPart([("expect: passed", "")], "bold green")
    return TextPart([("expect: FAILED\n", "")]
                    + [(f"  {printable(failure)}\n", "red") for failure in result.expect.failures],
                    "bold red")


def result_parts(result) -> list:
    """What `run` shows of a result, in order: parts (render_parts), or a rich renderable
    where only rich draws it (the training table)."""
    parts = [header(result), values_table(result)]
    parts += [gradient_table(result, out) for out in result.gradients]
    if result.summary:
        parts.append(summary_table(result))
    if result.train is not None:
        parts.append(train_table(result))
    if result.expect is not None:
        parts.append(expect_text(result))
    if result.conventions:
        parts.append(TextPart([("\n".join(f"note: {printable(c.text)}" for c in result.conventions),
                                "")], "dim"))
    if result.nonfinite:
        parts.append(_nonfinite_part(result.nonfinite))
    unprinted = [w for w in result.warnings if w not in result.lint]  # lint's: on stderr
    if unprinted:
        parts.append(_warnings_part(unprinted))
    return [p for p in parts if p is not None]


def result_renderables(result) -> list:
    return [to_rich(part) for part in result_parts(result)]


def warnings_text(warnings) -> Text:
    """The run's warnings (an override that matched nothing, a loss summed), one per line."""
    return to_rich(_warnings_part(warnings))


def _warnings_part(warnings) -> TextPart:
    return TextPart([("\n".join(f"warning: {printable(w)}" for w in warnings), "")], "yellow")


# ----- non-finite provenance -----
_KIND_JSON = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
_KIND_TEXT = KIND_TEXT
_TEXT_OF_JSON = {spelled: _KIND_TEXT[kind] for kind, spelled in _KIND_JSON.items()}


def kind_text(kind: str) -> str:
    """The tables' spelling of a non-finite kind ("inf"), from a record's ("inf") or a JSON
    document's ("Infinity"): one spelling in every line of the text output."""
    return _KIND_TEXT.get(kind) or _TEXT_OF_JSON.get(kind, kind)


def nonfinite_json(n) -> dict:
    """One spec-v2 `nonfinite` record (plus what the result and the op held)."""
    return {"pass": n.phase, "op": n.op, "expr": n.expr, "location": n.location,
            "tensor": n.tensor, "step": n.step, "value": _KIND_JSON[n.value],
            "born": _KIND_JSON[n.born]}


def nonfinite_note(records) -> Text:
    """Where each NaN or infinity was born, one line per birth, naming the results it reached."""
    return to_rich(_nonfinite_part(records))


def _nonfinite_part(records) -> TextPart:
    births: dict[tuple, list] = {}
    for n in records:
        key = (n.phase, n.step, n.op, n.expr, n.location, n.born)
        births.setdefault(key, []).append(f"{printable(n.tensor)} ({_KIND_TEXT[n.value]})")
    pieces = []
    for (phase, step, op, expr, location, born), reached in births.items():
        when = f"{phase} pass" if step is None else f"training step {step}"
        pieces.append((f"non-finite: {when}: {_KIND_TEXT[born]} born at ", "bold red"))
        pieces.append((printable(expr or op), "bold"))  # spec text: escaped
        pieces.append((printable(f"  {location}" + (f" (op {op})" if op and expr else "")), "red"))
        pieces.append((f"; reaches {', '.join(reached)}\n", "red"))
    return TextPart(rstripped(pieces))


def quiet_line(result) -> Text:
    """One line per experiment, for --quiet runs of many specs."""
    from rich.text import Text

    name = printable(result.experiment.name)
    if result.expect is None:
        return Text(f"ran    {name} (no expect block)", style="dim")
    if result.expect.passed:
        return Text(f"passed {name}", style="green")
    return Text(f"FAILED {name}: " + printable("; ".join(result.expect.failures)), style="bold red")


def quiet_stopped(name, text: str) -> Text:
    """A spec's --quiet line when its training stopped on a non-finite loss under
    on_nonfinite: error: FAILED, as the summary counts it (exit 1)."""
    from rich.text import Text

    return Text(f"FAILED {printable(name)}: training stopped: " + printable(text),
                style="bold red")


def quiet_summary(results, failures=()) -> str:
    """The last line of a --quiet run; a spec without expect ran but was not checked.
    failures: the specs that gave no result (cli_common.Failure). One with exit code 1 (a
    non-finite loss under on_nonfinite: error, the only such failure) is counted as failed,
    as the exit code says, and named; the others are errors (exit 2)."""
    checked = [r for r in results if r.expect is not None]
    passed = sum(r.expect.passed for r in checked)
    stopped = sum(f.exit_code == 1 for f in failures)
    errors = len(failures) - stopped
    failed = f"{len(checked) - passed + stopped} failed"
    if stopped:
        failed += f" ({stopped} on a non-finite loss)"
    parts = [f"{passed} passed", failed]
    if len(results) > len(checked):
        parts.append(f"{len(results) - len(checked)} ran (nothing to check)")
    if errors:
        parts.append(f"{errors} error{'s' if errors != 1 else ''}")
    return ", ".join(parts)
