"""--format markdown and csv: everything a result's JSON document holds, laid out for tools.

Both are written from render.to_json's document, so they carry what JSON
carries (values, gradients, summary, numeric seeds, overrides, warnings, conventions,
non-finite notes, training, expect) and gain whatever it gains. Spec text is
escaped (printable) in both.
"""
from __future__ import annotations

import csv
import io
import json

from .printable import printable
from .render import to_json

CSV_COLUMNS = ("experiment", "backend", "section", "output", "input", "step", "kind", "element",
               "value")
_RUN_KEYS = ("name", "backend", "dtype", "seed", "description")


# ----- markdown -----
def to_markdown(result) -> str:
    """One result as a markdown section: a heading, then one table or list per JSON key."""
    doc = to_json(result)
    lines = [f"## {md_prose(doc['name'])}", ""]
    if doc["description"]:
        lines += [md_prose(doc["description"]), ""]
    lines += [f"backend `{doc['backend']}` · `{doc['dtype']}` · seed {doc['seed']}", ""]
    if doc["values"]:
        lines += md_table("values", ["name", "value"],
                           [[md_code(name), md_value(v)] for name, v in doc["values"].items()])
    for out, row in doc["gradients"].items():
        seeds = doc["numeric_seeds"][out]  # the same pairs as gradients: a column of its table
        lines += md_table(f"gradients of `{md_text(out)}`",
                           ["input", "overridden", "true", "numeric", "numeric_kind", "numeric_seed"],
                           [[md_code(name), *(md_value(g[k]) for k in ("overridden", "true", "numeric")),
                             md_text(g["numeric_kind"]), md_value(seeds[name])]
                            for name, g in row.items()])
    summary = [(f"{out}/{name}", s) for out, row in doc["summary"].items() for name, s in row.items()]
    if summary:
        keys = list(summary[0][1])
        lines += md_table("overridden vs true", ["output/input", *keys],
                           [[md_code(pair), *(md_value(s[k]) for k in keys)] for pair, s in summary])
    for section in ("overrides", "conventions", "nonfinite"):
        lines += md_records(section, doc[section])
    if doc["train"] is not None:
        lines += _md_train(doc["train"])
    if doc["expect"]["declared"]:
        expect = doc["expect"]
        lines += ["### expect", "", "passed" if expect["passed"] else "FAILED", ""]
        lines += [f"- {md_text(f)}" for f in expect["failures"]] + ([""] if expect["failures"] else [])
    if doc["warnings"]:
        lines += ["### warnings", "", *(f"- {md_text(w)}" for w in doc["warnings"]), ""]
    return "\n".join(lines)


def markdown_error(path, message: str) -> str:
    """The markdown section of a spec that could not run."""
    return f"## {md_prose(path)}\n\nerror: {md_prose(message)}\n"


def _md_train(train: dict) -> list[str]:
    from .render_train import final_is_last_evaluation

    def at(steps: list, k: int):  # large models keep no per-step parameters or gradients
        return steps[k] if k < len(steps) else None

    rows = [[str(k), md_value(loss),
             md_value({n: at(per_step, k) for n, per_step in train["params_per_step"].items()}),
             md_value(at(train["gradients"], k))] for k, loss in enumerate(train["loss"])]
    lines = md_table("training", ["step", "loss", "params after", "gradients"], rows)
    lines += [f"steps {md_value(train['steps'])}, epochs {md_value(train['epochs'])}; "
              f"final loss {md_value(train['final_loss'])}, params {md_value(train['params'])}", ""]
    columns = [(m, part) for m, parts in train["metrics"].items() for part in parts]
    if columns:
        header = ["evaluation", "step", *(f"{md_text(m)} ({part})" for m, part in columns)]
        evals = [[str(k), str(step), *(md_value(at(train["metrics"][m][part], k)) for m, part in columns)]
                 for k, step in enumerate(train["eval_steps"])]
        if final_is_last_evaluation(train["eval_steps"], len(train["loss"])):  # as run's table
            evals[-1][1] += " (final)"
        else:
            evals.append(["final", "", *(md_value(train["final"].get(m, {}).get(part))
                                         for m, part in columns)])
        lines += md_table("training metrics", header, evals)
    stopped = train["stopped"]
    if stopped is not None:
        lines += [f"training stopped at step {md_value(stopped['step'])}: "
                  f"{md_text(stopped['reason'])}", ""]
        lines += md_records("stopped: where the non-finite value was born",
                             [stopped["nonfinite"]] if stopped["nonfinite"] else [])
    return lines


def md_records(section: str, records: list[dict]) -> list[str]:
    """A list of records (overrides, notes, non-finite births) as a table of their keys."""
    if not records:
        return []
    keys = list(records[0])
    return md_table(section, keys, [[md_value(r[k]) for k in keys] for r in records])


def md_table(title: str, header: list[str], rows: list[list[str]]) -> list[str]:
    return [f"### {title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(row) + " |" for row in rows), ""]


def md_text(text) -> str:
    # Raw HTML in a spec's text would reach renderers that pass HTML through (python-markdown,
    # mkdocs): with & and < as entities no tag opens, and it reads the same (a > alone opens
    # nothing, so "a -> b" stays as written). A bare | would end the cell.
    return printable(text).replace("&", "&amp;").replace("<", "&lt;").replace("|", "\\|")


def md_prose(text) -> str:
    """A spec's name, description or message outside a table: no HTML, no links (an escaped
    [ opens none)."""
    return md_text(text).replace("[", "\\[")


def md_code(text) -> str:
    code = printable(text).replace("|", "\\|")  # a code span shows HTML as text
    return f"`{code}`"


def md_value(value) -> str:
    """A cell: a string as itself, anything else as its JSON text (full precision)."""
    return md_text(value) if isinstance(value, str) else md_text(json.dumps(value))


# ----- CSV -----
def to_csv(outcomes) -> str:
    """Results (and error_doc entries) as one long table: a row per number or string, its
    place given by section, output, input, step, kind and element (docs/spec.md)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for outcome in outcomes:
        if isinstance(outcome, dict):  # a spec that could not run
            for kind in ("error", "exit_code"):
                writer.writerow([csv_text(outcome["path"]), "", "error", "", "", "", kind, "",
                                 csv_value(outcome[kind])])
            continue
        doc = to_json(outcome)
        for section, out, name, *rest in _csv_rows(doc):  # names and metric names are spec text
            writer.writerow([csv_text(doc["name"]), doc["backend"], section, csv_text(out),
                             csv_text(name), *rest])
    return buffer.getvalue()


def _csv_rows(doc: dict):
    """(section, output, input, step, kind, element, value) for each leaf of the document."""
    for key in _RUN_KEYS:
        yield ("run", "", "", "", key, "", csv_value(doc[key]))
    for name, value in doc["values"].items():
        yield from csv_leaves(("values", name, "", "", "value"), value)
    for section in ("gradients", "summary"):
        for out, row in doc[section].items():
            for name, kinds in row.items():
                for kind, value in kinds.items():
                    yield from csv_leaves((section, out, name, "", kind), value)
    for out, row in doc["numeric_seeds"].items():
        for name, seed in row.items():
            yield ("numeric_seeds", out, name, "", "seed", "", csv_value(seed))
    for section in ("overrides", "conventions", "nonfinite"):
        for number, record in enumerate(doc[section]):
            for field, value in record.items():
                yield (section, "", "", "", field, f"[{number}]", csv_value(value))
    for number, warning in enumerate(doc["warnings"]):
        yield ("warnings", "", "", "", "warning", f"[{number}]", csv_value(warning))
    if doc["train"] is not None:
        yield from _train_rows(doc["train"])
    yield ("expect", "", "", "", "passed", "", csv_value(doc["expect"]["passed"]))
    yield ("expect", "", "", "", "declared", "", csv_value(doc["expect"]["declared"]))
    yield from csv_leaves(("expect", "", "", "", "failure"), doc["expect"]["failures"])


def _train_rows(train: dict):
    for step, loss in enumerate(train["loss"]):
        yield ("train", "", "", step, "loss", "", csv_value(loss))
    yield ("train", "", "", "", "final_loss", "", csv_value(train["final_loss"]))
    for name, value in train["params"].items():
        yield from csv_leaves(("train", "", name, "", "params"), value)
    for name, per_step in train["params_per_step"].items():
        for step, value in enumerate(per_step):
            yield from csv_leaves(("train", "", name, step, "params_per_step"), value)
    for step, grads in enumerate(train["gradients"]):
        for name, value in (grads or {}).items():
            yield from csv_leaves(("train", "", name, step, "gradients"), value)
    for key in ("steps", "epochs"):
        yield ("train", "", "", "", key, "", csv_value(train[key]))
    evals = train["eval_steps"]
    for number, step in enumerate(evals):
        yield ("train", "", "", step, "eval_steps", f"[{number}]", csv_value(step))
    for metric, parts in train["metrics"].items():  # the metric in `output`, the part in `kind`
        for part, values in parts.items():
            for number, value in enumerate(values):
                step = evals[number] if number < len(evals) else ""
                yield ("train", metric, "", step, f"metrics.{part}", f"[{number}]", csv_value(value))
    yield ("train", "", "", "", "final.loss", "", csv_value(train["final"]["loss"]))
    for metric, parts in train["final"].items():
        if metric != "loss":
            for part, value in parts.items():
                yield ("train", metric, "", "", f"final.{part}", "", csv_value(value))
    stopped = train["stopped"]
    if stopped is None:
        yield ("train", "", "", "", "stopped", "", "")
        return
    yield ("train", "", "", stopped["step"], "stopped.step", "", csv_value(stopped["step"]))
    yield ("train", "", "", stopped["step"], "stopped.reason", "", csv_value(stopped["reason"]))
    for field, value in (stopped["nonfinite"] or {}).items():
        yield ("train", "", "", stopped["step"], f"stopped.nonfinite.{field}", "", csv_value(value))


def csv_leaves(place: tuple, value, index: tuple = ()):
    """One row per element of a nested list, its index written as the tables write it."""
    if isinstance(value, list) and value:
        for k, item in enumerate(value):
            yield from csv_leaves(place, item, (*index, k))
        return
    element = f"[{', '.join(map(str, index))}]" if index else ""
    yield (*place, element, csv_value(value))  # an empty array is the one cell "[]"


def csv_value(value) -> str:
    """A cell: empty for null, JSON's spelling for booleans and non-finite numbers."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, dict)):
        return printable(json.dumps(value))
    if isinstance(value, str) and value not in _NONFINITE:
        return csv_text(value)
    return printable(value)


_NONFINITE = ("NaN", "Infinity", "-Infinity")  # numbers, as JSON documents spell them
_FORMULA = ("=", "+", "-", "@")


def csv_text(text) -> str:
    """Spec text for a cell: escaped, and never a formula a spreadsheet would evaluate (a
    leading = + - @ gets an apostrophe, as OWASP's CSV-injection advice has it)."""
    text = printable(text)
    return "'" + text if text.startswith(_FORMULA) else text
