"""One self-contained HTML page from Results: tables and figures inline, nothing fetched.

A spec is untrusted, so every string that comes from it (name, description,
path, tensor names, messages quoting spec text) passes `escape` below: control
characters shown as `\\x1b` (as in the terminal), then html.escape; figures
are <img> data URIs (an image cannot run script), and the page carries a
Content-Security-Policy that forbids scripts and remote loads outright.
Numbers are formatted as the terminal tables format them.
"""
from __future__ import annotations

import base64
import html
import string

import numpy as np

from . import render
from .plot import figure_bytes
from .plot.curve import curve_figure
from .plot.train import record_series, train_figure
from .printable import printable_lines


def escape(text) -> str:
    """Spec text for the page: control characters escaped as in the terminal, then HTML-escaped."""
    return html.escape(printable_lines(text))


PAGE = string.Template("""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy"
      content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>$title</title>
<style>
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 62em; padding: 0 1em; color: #1b1b1b; background: #fff; }
h1 { font-size: 1.5em; } h2 { border-bottom: 2px solid #0072B2; padding-bottom: .2em; margin-top: 2em; }
h3 { font-size: 1.05em; margin-top: 1.4em; }
table { border-collapse: collapse; margin: .6em 0; font-variant-numeric: tabular-nums; }
caption { text-align: left; padding-bottom: .2em; }
.wide caption { position: sticky; left: 0; max-width: calc(100vw - 2.5em); }
th, td { border: 1px solid #c8c8c8; padding: .25em .6em; text-align: right; vertical-align: top; }
th { background: #eef3f8; } td.name, th.name { text-align: left; }
td.differs { color: #b34700; font-weight: 600; } td.bad { color: #c00; font-weight: 600; }
.meta { color: #444; } .warn { color: #8a5a00; } .error { color: #c00; font-weight: 600; }
.passed { color: #007a4d; font-weight: 600; } .failed { color: #c00; font-weight: 600; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { color: #444; font-size: .9em; }
code { background: #f3f3f3; padding: 0 .2em; }
.wide { overflow-x: auto; } .wide td { white-space: nowrap; }
pre { background: #f6f6f6; padding: .6em; overflow-x: auto; }
summary { cursor: pointer; color: #0a4f80; }
</style>
</head>
<body>
<h1>$title</h1>
<p class="meta">$count, written by gradcli $version. Gradients: <b>overridden</b> (what training
uses), <b>true</b> (the function's own derivative), <b>numeric</b> (central differences).</p>
$sections
</body>
</html>
""")


REPORT_POINTS = 201  # per curve: eager backends build the spec again for every point


def entry(experiment, backend: str | None, curve, max_memory: int | None = None) -> tuple:
    """(Result, [Curve]) for one spec: the run, and a curve for each elementwise input,
    all under the memory budget (max_memory bytes; runner.budget)."""
    from . import backends, runner
    result = runner.run(experiment, backend=backend, max_memory=max_memory)
    names = curve.elementwise_inputs(result)
    with runner.budget(max_memory):  # a fresh program, untouched by training
        program = backends.build(experiment, backend) if names else None
    return result, [curve.sweep(experiment, name, backend=backend, points=REPORT_POINTS,
                                program=program, max_memory=max_memory) for name in names]


def page(entries: list, *, version: str) -> str:
    """The whole page; an entry is (Result, [Curve]), a report_sweep.SweepEntry (a sweep
    directory) or (label, error message)."""
    from . import report_sweep
    sections = "\n".join(report_sweep.section(e) if isinstance(e, report_sweep.SweepEntry) else
                         _section(*e) if not isinstance(e[1], str) else _failure(*e)
                         for e in entries)
    specs, sweeps = report_sweep.count(entries)
    count = ", ".join(f"{n} {what}{'s' if n != 1 else ''}" for n, what in
                      ((specs, "spec"), (sweeps, "sweep")) if n or (what == "spec" and not sweeps))
    return PAGE.substitute(title="gradcli report", count=count, version=escape(version),
                           sections=sections)


def _failure(label, message: str) -> str:
    # <pre>: a spec error's caret line points at a column of the line above it
    return (f'<section><h2>{escape(str(label))}</h2><pre class="error">error: {escape(message)}'
            "</pre></section>")


def _section(result, curves: list) -> str:
    exp = result.experiment
    parts = [f"<section><h2>{escape(exp.name)}</h2>", _header(result)]
    if result.values:
        parts.append(_values(result))
    for out in result.gradients:
        parts.append(_gradients(result, out))
    parts.append(_summary(result))
    parts += _notes(result)
    if result.train is not None:
        metrics = " and metrics" if result.train.metrics else ""
        parts.append(_figure(train_figure(exp.name, [(result.backend, record_series(
            result.train, exp.train.loss))]), f"training loss{metrics} per step on {result.backend}"))
        parts.append(_train_table(result))
    for curve in curves:
        swept = f"{curve.input}{curve.element}"
        parts.append(_figure(curve_figure(curve), f"{curve.output} along {swept}: forward "
                             "value, true derivative, overridden gradient and numeric derivative"))
    parts.append("</section>")
    return "\n".join(parts)


def _header(result) -> str:
    exp = result.experiment
    lines = [f"<p>{escape(exp.description or '')}</p>" if exp.description else "",
             f'<p class="meta">backend <b>{escape(result.backend)}</b> · {escape(str(exp.dtype))} · '
             f"seed {escape(str(exp.seed))} · <code>{escape(str(exp.path))}</code></p>"]
    rows = []
    for entry, count in result.overrides:
        scope = f" in {', '.join(entry.scope)}" if entry.scope else ""
        note = f"{count} op{'s' if count != 1 else ''}" if count else "matched no op"
        cls = "" if count else ' class="warn"'
        rows.append(f"<li{cls}>override <code>{escape(entry.op)}</code> → "
                    f"<code>{escape(entry.gradient)}</code>{escape(scope)}: {note}</li>")
    if rows:
        lines.append("<ul>" + "".join(rows) + "</ul>")
    if result.expect is not None:
        lines.append('<p class="passed">expect: passed</p>' if result.expect.passed else
                     '<p class="failed">expect: FAILED</p><ul>'
                     + "".join(f"<li>{escape(f)}</li>" for f in result.expect.failures) + "</ul>")
    return "\n".join(line for line in lines if line)


def _table(caption: str, head: list, rows: list, names: int = 1) -> str:
    """rows: lists of (text, css class) cells; every text is escaped here; the first `names`
    columns are names (headed on the left)."""
    th = "".join(f'<th class="{"name" if i < names else ""}">{escape(h)}</th>' for i, h in enumerate(head))
    body = "".join("<tr>" + "".join(f'<td class="{cls}">{escape(text)}</td>' for text, cls in row)
                   + "</tr>" for row in rows)
    return f"<table><caption>{escape(caption)}</caption><tr>{th}</tr>{body}</table>"


def _values(result) -> str:
    rows = []
    for name, value in result.values.items():
        array = np.asarray(value)
        brief = render._brief(array)  # the terminal's summary: elements, or min/max/mean
        rows.append([(name, "name"), ("scalar" if array.ndim == 0 else str(array.shape), ""),
                     (brief.plain, "bad" if brief.style else "")])
    return _table("values" + _batch(result), ["name", "shape", "value"], rows)


def _batch(result) -> str:
    """", on the first training batch (16 rows of X), before training" for a data spec."""
    said = render.first_batch(result)
    return f", {said}" if said else ""


def _number(value, differs: bool = False) -> tuple[str, str]:
    text = render.number_text(value, differs=differs)
    return text.plain, "differs" if differs else _css(text)


def _gradients(result, out: str) -> str:
    inputs, rows = result.experiment.inputs, []
    for name, row in result.gradients[out].items():
        cols = [row.overridden, row.true, row.numeric if row.numeric_kind == "full" else None]
        size = np.size(next((c for c in cols if c is not None), 0))
        if size > render.ELEMENTWISE_LIMIT:
            rows += _summary_rows(name, cols)
            continue
        flat = [None if c is None else np.ravel(np.asarray(c, dtype=np.float64)) for c in cols]
        value = inputs[name].value if name in inputs else result.values.get(name)
        shape = np.shape(next((c for c in cols if c is not None), value))
        vflat = None if value is None else np.ravel(np.asarray(value))
        for k, index in enumerate(np.ndindex(*shape) if shape else [()]):
            over, true, num = (None if c is None else c[k] for c in flat)
            differs = over is not None and true is not None and not render._close(over, true)
            numeric = _number(num) if row.numeric_kind == "full" else (row.numeric_kind, "")
            rows.append([(name if k == 0 else "", "name"),
                         (f"[{', '.join(map(str, index))}]" if index else "", "name"),
                         _number(None if vflat is None else vflat[k]), _number(over, differs),
                         _number(true), numeric])
    return _table(f"gradients of {out}{_batch(result)}", ["input", "element", "value", "overridden", "true",
                                          "numeric"], rows)


def _summary_rows(name: str, cols: list) -> list:
    rows = []
    for stat, fn in (("norm", lambda a: np.sqrt(np.sum(a * a))), ("min", np.min), ("max", np.max),
                     ("mean", np.mean)):
        cells = []
        for column in cols:
            with np.errstate(all="ignore"):
                cells.append(_number(None) if column is None else
                             _number(float(fn(np.asarray(column, dtype=np.float64)))))
        rows.append([(name if stat == "norm" else "", "name"), (stat, "name"), ("", ""), *cells])
    return rows


def _summary(result) -> str:
    rows = [[(f"{out}/{name}", "name"), *(_number(v) for v in (
        s.cosine, s.max_abs_diff, s.norm_overridden, s.norm_true, s.sign_agreement,
        s.numeric_max_abs_diff))] for out, row in result.summary.items() for name, s in row.items()]
    return _table("overridden (o) vs true (t); n numeric", ["output/input", "cos(o,t)", "max|o−t|",
                  "‖o‖", "‖t‖", "signs agree", "max|n−t|"], rows)


def _notes(result) -> list:
    parts = []
    if result.nonfinite:
        parts.append("<h3>non-finite values</h3><pre>" + escape(render.nonfinite_note(
            result.nonfinite).plain) + "</pre>")
    for title, items in (("warnings", result.warnings),
                         ("conventions", [f"{c.topic}: {c.text}" for c in result.conventions])):
        if items:
            parts.append(f"<h3>{title}</h3><ul>" + "".join(f"<li>{escape(str(i))}</li>"
                                                          for i in items) + "</ul>")
    return parts


def _train_table(result) -> str:
    """The run's training table, laid out as the terminal lays it out (render_train)."""
    from .render_train import train_layout

    layout = train_layout(result)
    rows = [[(cell.plain, _css(cell)) for cell in row] for row in layout.rows]
    parts = [_table(layout.title, layout.columns, rows, names=0)]
    if layout.caption:
        parts.append(f'<p class="meta">{escape(layout.caption)}</p>')
    if layout.stopped is not None:
        parts.append(f'<p class="error">{escape(layout.stopped.plain)}</p>')
    return "\n".join(parts)


def _css(cell) -> str:
    """A cell's class from its terminal style: red (NaN, inf) is bad."""
    return "bad" if cell.style and "red" in str(cell.style) else ""


def _figure(fig, caption: str) -> str:
    """A figure as an inline SVG data URI inside <img>: crisp, and unable to run script."""
    data = base64.b64encode(figure_bytes(fig, "svg")).decode("ascii")
    return (f'<figure><img alt="{escape(caption)}" src="data:image/svg+xml;base64,{data}">'
            f"<figcaption>{escape(caption)}</figcaption></figure>")
