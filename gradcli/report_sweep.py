"""The report's section for a sweep directory: grouped table, gradient statistics, sweep plots.

Everything read from the directory (the spec's name and text, swept values, column names,
error messages) is untrusted and passes report.escape; figures are SVG data URIs in <img>.
The numbers come from sweep/stats.py (column_stats, group_gradients), as `gradcli sweep`'s
own report: non-finite values are left out of a mean and their count is shown.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .plot import sweep_dir
from .plot.sweep import sweep_figure, sweep_series
from .render_sweep import INITIAL, degenerate_note
from .sweep.failures import failure_kind
from .sweep.stats import STATS, column_stats, group_gradients, zero_true

MAX_FIGURES = 24  # a wide grid of keys × columns: the first ones, and a note saying so


@dataclass
class SweepEntry:
    """A sweep directory read for the report: its contents and its groups, computed once."""

    sweep: sweep_dir.SweepDir
    groups: list          # [(params, rows)]

    @property
    def exit_code(self) -> int:
        return 0


def entry(path) -> SweepEntry:
    """The sweep directory at path read for the page (a GradcliError when it is not one)."""
    sweep = sweep_dir.load(path)
    return SweepEntry(sweep, sweep_dir.groups(sweep))


def finite_values(sweep: sweep_dir.SweepDir, column: str) -> set:
    found = (sweep_dir.number(r.get(column)) for r in sweep.ok_rows())
    return {v for v in found if v is not None and math.isfinite(v)}


def plots(sweep: sweep_dir.SweepDir) -> list:
    """(x key, column, hue key) of each figure: every numeric column that is not the same
    in every run, against every swept key but seed, hued by the first other one."""
    keys = sweep_dir.group_keys(sweep)
    varying = [c for c in sweep.columns if not _one_value(finite_values(sweep, c))]
    return [(x, c, next((k for k in keys if k != x), None)) for x in keys for c in varying]


ROUNDING = 1e-12  # relative spread of float64 results that is rounding, not variation


def _one_value(values: set) -> bool:
    """One value, or several that differ only by float64 rounding (1.0 and
    0.9999999999999999: a figure of them would draw a flat line on a made-up axis)."""
    if not values:
        return False
    lo, hi = min(values), max(values)
    return hi - lo <= ROUNDING * max(abs(lo), abs(hi))


def constants(sweep: sweep_dir.SweepDir) -> dict:
    """{column: (lowest, highest)} of the columns with one finite value in every run, up to
    rounding (not drawn)."""
    return {c: (min(v), max(v)) for c in sweep.columns if _one_value(v := finite_values(sweep, c))}


def section(e: SweepEntry) -> str:
    from .report import _figure, escape
    s = e.sweep
    failed = len(s.failed)
    from .render_sweep import failed_text
    failed_note = failed_text([_kind(s, row) for row in s.rows if row.get("run") in s.failed])
    swept = "; ".join(f"<code>{escape(k)}</code>: {escape(', '.join(s.values(k)))}" for k in s.keys)
    parts = [f"<section><h2>{escape(s.name)}</h2>",
             f'<p class="meta">sweep directory <code>{escape(str(s.path))}</code> · '
             f"{len(s.rows)} run{'s' * (len(s.rows) != 1)}"
             + (f' · <span class="error">{escape(failed_note)}</span>' if failed else "") + "</p>",
             f"<p>swept: {swept}</p>" if s.keys else "<p>nothing swept</p>"]
    if s.spec_text:
        parts.append(f"<details><summary>the spec</summary><pre>{escape(s.spec_text)}</pre></details>")
    if failed:
        parts.append(_failures(s))
    parts.append(_groups_table(e))
    table, zero = _gradients_table(e)
    parts.append(table)
    wanted = plots(s)
    for x, column, hue in wanted[:MAX_FIGURES]:
        series = sweep_series(s, x, column, hue, zero=zero)
        # the notes of a gradient column say when it was taken, and when it is degenerate
        caption = (f"{column} against {x}" + (f", one line per {hue}" if hue else "")
                   + f": {series.band_text()}" + "".join(f"; {n}" for n in series.notes()))
        parts.append(_figure(sweep_figure(s.name, series), caption))
    same = constants(s)
    if same:
        from .render import number_text
        parts.append('<p class="meta">not drawn, the same in every run: ' + ", ".join(
            f"<code>{escape(c)}</code> = {escape(number_text(lo).plain)}" if lo == hi else
            f"<code>{escape(c)}</code> = {escape(number_text(hi).plain)} (differing by rounding "
            f"only: {float(lo)!r} … {float(hi)!r})" for c, (lo, hi) in same.items())
            + "</p>")
    if len(wanted) > MAX_FIGURES:
        parts.append(f'<p class="warn">{len(wanted) - MAX_FIGURES} more figures not drawn; '
                     "use <code>gradcli plot sweep DIR --x KEY --y COLUMN</code></p>")
    elif not wanted:
        parts.append('<p class="meta">no sweep plots: only seeds were swept, or no column has '
                     "two different finite values</p>")
    parts.append("</section>")
    return "\n".join(parts)


def _failures(s) -> str:
    from .report import escape
    items = []
    for row in s.rows:
        if row.get("run") in s.failed:
            items.append(f"<li>run <code>{escape(row['run'])}</code>: "
                         f"{escape(_error(s, row))}</li>")
    return ("<h3>failed runs (those without a result are left out of every mean; one that "
            "kept its result, like an unmet expect, is in its group's)</h3><ul>" + "".join(items) + "</ul>")


def _error(s, row: dict, doc: dict | None = None) -> str:
    """A failed run's error: results.csv's cell, else its run file's (a run stopped
    before results.csv had its row)."""
    doc = (sweep_dir.run_doc(s.path, row["run"]) or {}) if doc is None else doc
    return row.get("error") or str(doc.get("error") or "failed")


def _kind(s, row: dict) -> str:
    """A failed run's kind: its run file's "failure" (a file written before that field, or
    no file, goes by the error text: sweep/failures.py)."""
    doc = sweep_dir.run_doc(s.path, row["run"]) or {}
    return failure_kind({"failure": doc.get("failure"), "error": _error(s, row, doc)})


def _cell(st: dict, members: int) -> tuple[str, str]:
    """"mean ± std" to 4 significant digits, the count when a run had no finite value, and
    how many non-finite values were left out."""
    from .render import number_text
    bad = f"{st['nonfinite']} non-finite" if st["nonfinite"] else ""
    if st["n"] == 0:
        return "no value" + (f" ({bad})" if bad else ""), "bad"
    text = number_text(st["mean"], digits=4).plain
    if st["std"] is not None:
        text += f" ± {number_text(st['std'], digits=3).plain}"
    notes = [f"n={st['n']}"] * (st["n"] != members) + [bad] * bool(bad)
    return text + (f" ({', '.join(notes)})" if notes else ""), ""


def _groups_table(e: SweepEntry) -> str:
    from .report import _table
    s, keys = e.sweep, sweep_dir.group_keys(e.sweep)
    rows = []
    for params, members in e.groups:
        stats = [column_stats([sweep_dir.number(r.get(c)) for r in members]) for c in s.columns]
        rows.append([*((params[k], "name") for k in keys), (str(len(members)), ""),
                     *(_cell(st, len(members)) for st in stats)])
    caption = "groups: mean ± std (ddof 1) over " + ("seeds" if "seed" in s.keys else "runs")
    if any("/" in c for c in s.columns):  # <output>/<input>.cosine, ...
        caption += f"; the output/input columns compare gradients taken {INITIAL}"
    return _wide(_table(caption, [*keys, "n", *s.columns], rows, names=len(keys)))


def _gradients_table(e: SweepEntry) -> tuple[str, list]:
    """The table, and the pairs whose true gradient is 0 in every run (stats.zero_true)."""
    from .report import _table
    keys, rows, seen = sweep_dir.group_keys(e.sweep), [], {}
    for params, members in e.groups:
        docs = [sweep_dir.run_doc(e.sweep.path, r.get("run", "")) or {} for r in members]
        zero = zero_true(docs, seen)
        for out, per in group_gradients(docs).items():
            for name, st in per.items():
                n = str(st["n"]) + (f" ({st['nonfinite']} non-finite)" if st["nonfinite"] else "")
                rows.append([*((params[k], "name") for k in keys), (f"{out}/{name}", "name"),
                             (n, ""), *((_stat_text(st[k]), "") for k in STATS)])
    if not rows:
        return '<p class="meta">no gradients in runs/*.json to summarize</p>', []
    note = degenerate_note(zero)
    return _wide(_table("overridden gradient g over the runs of each group; t the true "
                        "gradient: ‖ḡ‖, sqrt(mean ‖g − ḡ‖²), ‖ḡ − t̄‖, cos(ḡ, t̄). Every "
                        f"gradient is taken {INITIAL}" + (f". Note: {note}" if note else ""),
                        [*keys, "output/input", "n", *STATS], rows, names=len(keys) + 1)), zero


def _stat_text(v) -> str:
    from .render import number_text
    return "—" if v is None else number_text(v, digits=4).plain


def _wide(table: str) -> str:
    return f'<div class="wide">{table}</div>'


def count(entries: list) -> tuple[int, int]:
    """(specs, sweeps) among the page's entries."""
    from pathlib import Path
    sweeps = sum(isinstance(e, SweepEntry) or (isinstance(e[1], str) and Path(e[0]).is_dir())
                 for e in entries)
    return len(entries) - sweeps, sweeps

