"""compare --format csv and markdown: everything compare's JSON document holds, laid out for tools.

Both are written from render_compare.comparison_json's document (read back, so they see exactly
what JSON shows: "NaN" for NaN, null for an unconnected gradient), with the helpers run's
formats use (render_formats): spec text escaped, in CSV never a spreadsheet formula.
"""
from __future__ import annotations

import csv
import io
import json

from .labels import told_apart
from .render_compare import backends_line, comparison_json
from .render_formats import csv_leaves, csv_text, csv_value, md_code, md_records, md_table, md_text, md_value
from .render_train import final_is_last_evaluation

CSV_COLUMNS = ("comparison", "spec", "section", "run", "label", "output", "input", "quantity",
               "part", "step", "kind", "element", "value")
_VERDICT = ("max_diff", "within", "excused", "float32_rtol")


def _comparisons(doc: dict) -> list[dict]:
    """One comparison (spec against spec, or one spec across backends) or several."""
    return doc["comparisons"] if "comparisons" in doc else [doc]


# ----- CSV -----
def comparison_csv(comparisons: list, tolerance: float | None) -> str:
    """One long table: a row per number or string of the JSON document (docs/output.md)."""
    doc = json.loads(comparison_json(comparisons, tolerance))
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    writer.writerow(["", "", "compare", "", "", "", "", "", "", "", "tolerance", "",
                     csv_value(doc["tolerance"])])
    if "comparisons" in doc:  # the whole document's verdict; each comparison has its own below
        writer.writerow(["", "", "compare", "", "", "", "", "", "", "", "within_tolerance", "",
                         csv_value(doc["within_tolerance"])])
    for number, c in enumerate(_comparisons(doc)):
        spec = csv_text(c.get("spec", ""))
        labels = c["runs"]
        for row in _comparison_rows(c):
            section, run, output, name, quantity, part, step, kind, element, value = row
            label = csv_text(labels[run]) if run != "" else ""
            writer.writerow([number, spec, section, run, label, csv_text(output), csv_text(name),
                             csv_text(quantity), part, step, kind, element, value])
    return buffer.getvalue()


def _comparison_rows(c: dict):
    """(section, run, output, input, quantity, part, step, kind, element, value) per leaf."""
    if "path" in c:
        yield ("comparison", "", "", "", "", "", "", "path", "", csv_value(c["path"]))
    for run, label in enumerate(c["runs"]):
        yield ("comparison", run, "", "", "", "", "", "run", "", csv_value(label))
    for run, backend in enumerate(c["backends"]):
        yield ("comparison", run, "", "", "", "", "", "backend", "", csv_value(backend))
    yield ("comparison", "", "", "", "", "", "", "within_tolerance", "", csv_value(c["within_tolerance"]))
    for r in c["rows"]:
        place = (r["output"], r["input"], "", "", "")
        for run, value in enumerate(r["overridden"]):
            yield from csv_leaves(("gradients", run, *place, "overridden"), value)
        for run, present in enumerate(r["present"]):
            if not present:  # only the exception: a table of specs that share every pair is as before
                yield ("gradients", run, *place, "present", "", csv_value(present))
        yield from csv_leaves(("gradients", "", *place, "true"), r["true"])
        yield from _verdict_rows("gradients", place, r)
    for r in c["train"]:
        place = ("", "", r["quantity"], "", "")
        for run, value in enumerate(r["values"]):  # "loss": one per step, its element the step
            yield from csv_leaves(("train", run, *place, "values"), value)
        yield from _verdict_rows("train", place, r)
    for run, curve in enumerate(c["curves"]):
        yield from _curve_rows(run, curve["train"])


def _verdict_rows(section: str, place: tuple, r: dict):
    for kind in _VERDICT:
        yield (section, "", *place, kind, "", csv_value(r[kind]))
    for number, note in enumerate(r["notes"]):
        yield (section, "", *place, "note", f"[{number}]", csv_value(note))
    for number, elements in enumerate(r.get("note_elements", ())):  # gradient rows: JSON's key
        yield (section, "", *place, "note_elements", f"[{number}]", csv_value(elements))


def _curve_rows(run: int, train: dict | None):
    """A run's curves: the metric in `quantity`, the part (train, test) in `part`, the steps
    done in `step`; the kinds are the JSON keys."""
    def row(quantity="", part="", step="", kind="", element="", value=None):
        return ("curves", run, "", "", quantity, part, step, kind, element, csv_value(value))

    if train is None:  # the run does not train
        yield row(kind="train")
        return
    for key in ("steps", "epochs"):
        yield row(kind=key, value=train[key])
    for step, loss in enumerate(train["loss"]):
        yield row(quantity="loss", step=step, kind="loss", value=loss)
    evals = train["eval_steps"]
    for number, step in enumerate(evals):
        yield row(step=step, kind="eval_steps", element=f"[{number}]", value=step)
    for metric, parts in train["metrics"].items():
        for part, values in parts.items():
            for number, value in enumerate(values):
                step = evals[number] if number < len(evals) else ""
                yield row(metric, part, step, "metrics", f"[{number}]", value)
    yield row(quantity="loss", kind="final", value=train["final"]["loss"])
    for metric, parts in train["final"].items():
        if metric != "loss":
            for part, value in parts.items():
                yield row(metric, part, kind="final", value=value)
    stopped = train["stopped"]
    if stopped is None:
        yield row(kind="stopped")
        return
    yield row(step=stopped["step"], kind="stopped.step", value=stopped["step"])
    yield row(step=stopped["step"], kind="stopped.reason", value=stopped["reason"])
    for field, value in (stopped["nonfinite"] or {}).items():
        yield row(step=stopped["step"], kind=f"stopped.nonfinite.{field}", value=value)


# ----- markdown -----
def comparison_markdown(comparisons: list, tolerance: float | None) -> str:
    """The gradient rows, the training verdicts, the curves side by side (a table per quantity,
    a row per step or evaluation, a column per run) and the final table, per comparison."""
    doc = json.loads(comparison_json(comparisons, tolerance))
    lines = [f"tolerance {md_value(doc['tolerance'])} · within_tolerance "
             f"{md_value(doc['within_tolerance'])}", ""]
    for c in _comparisons(doc):
        if "spec" in c:
            lines += [f"## {md_text(c['spec'])} ({md_text(c['path'])}) across backends", "",
                      f"within_tolerance {md_value(c['within_tolerance'])}", ""]
        lines += _md_comparison(c)
    return "\n".join(lines)


def _headers(labels: list[str]) -> list[str]:
    """A column per run; runs with the same label (one spec twice) are told apart by number,
    as in every format (comparison.comparison applies the rule, kept here for other callers)."""
    return [md_text(label) for label in told_apart(labels)]


def _md_comparison(c: dict) -> list[str]:
    runs = _headers(c["runs"])
    lines = [md_text(backends_line(c["runs"], c["backends"])), ""]
    if c["rows"]:
        verdict = _md_verdict(c["rows"])
        lines += md_table("gradients side by side", ["output/input", *runs, "true", *verdict],
                          [[md_code(f"{r['output']}/{r['input']}"),
                            *(md_value(v) if here else "absent" for v, here in zip(r["overridden"],
                                                                                   r["present"])),
                            md_value(r["true"]), *(md_value(r[k]) for k in verdict)]
                           for r in c["rows"]])
    lines += _md_notes([(f"{r['output']}/{r['input']}", r["notes"]) for r in c["rows"]])
    if c["train"]:
        verdict = _md_verdict(c["train"])
        lines += md_table("training side by side", ["quantity", *runs, *verdict],
                          [[md_code(r["quantity"]), *map(md_value, r["values"]),
                            *(md_value(r[k]) for k in verdict)] for r in c["train"]])
        lines += _md_notes([(r["quantity"], r["notes"]) for r in c["train"]])
    trained = [(head, curve["train"]) for head, curve in zip(runs, c["curves"])
               if curve["train"] is not None]
    if trained:
        lines += _md_curves(trained)
    return lines


def _md_verdict(rows: list) -> list[str]:
    """The verdict columns; float32_rtol only in a table where the allowance was applied (an
    empty column would say nothing JSON's nulls do not)."""
    return [k for k in _VERDICT if k != "float32_rtol" or any(r[k] is not None for r in rows)]


def _md_notes(notes: list[tuple[str, list[str]]]) -> list[str]:
    lines = [f"- {md_code(where)}: {md_text(note)}" for where, texts in notes for note in texts]
    return ["notes:", "", *lines, ""] if lines else []


def _md_curves(trained: list[tuple[str, dict]]) -> list[str]:
    """Every step's loss and every evaluation's metrics (no thinning), then where each run ended."""
    heads = [head for head, _ in trained]
    length = max(len(t["loss"]) for _, t in trained)
    rows = [[str(k), *(md_value(t["loss"][k]) if k < len(t["loss"]) else "" for _, t in trained)]
            for k in range(length)]
    final = ["final", *(md_value(t["final"]["loss"]) for _, t in trained)]
    lines = md_table("training loss side by side", ["step", *heads], rows + [final])
    pairs = dict.fromkeys((m, p) for _, t in trained for m, parts in t["metrics"].items() for p in parts)
    for metric, part in pairs:
        def at(t, step, metric=metric, part=part):  # blank: the run did not evaluate then
            values = t["metrics"].get(metric, {}).get(part)
            if values is None or step not in t["eval_steps"]:
                return ""
            k = t["eval_steps"].index(step)
            return md_value(values[k]) if k < len(values) else ""

        steps = sorted({s for _, t in trained if part in t["metrics"].get(metric, {})
                        for s in t["eval_steps"]})
        rows = [[str(step), *(at(t, step) for _, t in trained)] for step in steps]
        if _last_is_final([t for _, t in trained if part in t["metrics"].get(metric, {})], steps):
            rows[-1][0] += " (final)"  # as run's table and compare's: the final row, once
        else:
            rows.append(["final", *(_final(t, metric, part) for _, t in trained)])
        lines += md_table(f"{md_text(metric)} ({part}) side by side", ["step", *heads], rows)
    rows = [["steps", *(md_value(t["steps"]) for _, t in trained)],
            ["epochs", *(md_value(t["epochs"]) for _, t in trained)],
            ["final loss", *(md_value(t["final"]["loss"]) for _, t in trained)],
            *([f"{md_text(m)} ({p})", *(_final(t, m, p) for _, t in trained)] for m, p in pairs),
            ["stopped", *(_stopped(t["stopped"]) for _, t in trained)]]
    lines += md_table("training results side by side", ["", *heads], rows)
    for head, t in trained:
        if t["stopped"] is not None and t["stopped"]["nonfinite"]:
            lines += md_records(f"{head} stopped: where the non-finite value was born",
                                [t["stopped"]["nonfinite"]])
    return lines


def _last_is_final(runs: list[dict], steps: list) -> bool:
    """Whether the last row holds every run's final values: each run evaluated last after its
    last step, all at that step (render_compare's rule for the table)."""
    return bool(steps) and all(final_is_last_evaluation(t["eval_steps"], len(t["loss"]))
                               and t["eval_steps"][-1] == steps[-1] for t in runs)


def _final(train: dict, metric: str, part: str) -> str:
    value = train["final"].get(metric, {})
    return md_value(value[part]) if part in value else ""


def _stopped(stopped: dict | None) -> str:
    if stopped is None:
        return "no"
    return f"step {md_value(stopped['step'])}: {md_text(stopped['reason'])}"
