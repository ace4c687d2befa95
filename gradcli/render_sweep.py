"""Lay out a sweep's grouped report (sweep/stats.report): a rich table, JSON, or CSV.

Nothing here computes: the numbers come from the report as they are.
"""
from __future__ import annotations

import csv
import io
import json

from rich.table import Table
from rich.text import Text

from .printable import printable
from .render import jsonable, number_text
from .sweep.failures import ERROR, EXPECT, KINDS, STOPPED, failure_kind

GRADIENT_STATS = ("grad_mean_norm", "grad_std", "bias", "cosine_of_means")
SHORT = {"grad_mean_norm": "grad_mean_norm ‖ḡ‖", "grad_std": "grad_std", "bias": "bias",
         "cosine_of_means": "cosine_of_means"}


def report_json(report: dict) -> str:
    return json.dumps(jsonable(report), indent=2, allow_nan=False) + "\n"


def _param_text(value) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _headline_columns(report: dict) -> list[str]:
    """The table shows the training columns (loss, metrics); each pair's per-run summaries
    (cosine, max_abs_diff, sign_agreement) are in the JSON and CSV forms."""
    first = report["groups"][0]["columns"] if report["groups"] else {}
    return [c for c in first if "/" not in c]


COLUMN_STATS = ("mean", "std", "nonfinite")
# When a sweep's gradients are taken (each run's `gradients`, as `run` prints them): the
# statistics say nothing of how the gradient behaves during training
INITIAL = ("at the inputs' initial values, before any training step (on the first training "
           "batch when the spec has data:)")


def degenerate_note(pairs) -> str | None:
    """The words for output/input pairs whose true gradient is 0 in every run (the true
    gradient of sign, round, ...): a zero estimate compares perfectly with it."""
    if not pairs:
        return None
    named = ", ".join(printable(p) for p in pairs)
    return (f"the true gradient of {named} is 0 in every run: comparisons with it are "
            "degenerate (bias = ‖ḡ‖; cosine_of_means and a run's cosine are 1 for a zero "
            "gradient and 0 for any other; sign_agreement is the share of its zero elements), "
            "so they rank no estimator")


def report_tables(report: dict, title: str = "sweep", zero_true=()) -> list[Table]:
    """Two tables, one row per group: its params, n and the mean ± std of the training
    columns; then per group and output/input the overridden gradient's statistics, and a
    note under them for the pairs in `zero_true` (sweep/stats.zero_true)."""
    groups = report["groups"]
    keys = list(groups[0]["params"]) if groups else []
    columns = _headline_columns(report)
    table = _table(title, keys)
    table.add_column("n", justify="right")
    for column in columns:
        table.add_column(Text(printable(column)), justify="right", no_wrap=True)
    for group in groups:
        n = Text(str(group["n"]))
        if group["failed"]:
            n.append(f" ({failed_text(_group_failures(report, group, keys))})", style="bold red")
        cells = [*_param_cells(group, keys), n]
        for column in columns:
            stat = group["columns"].get(column, {})
            cell = _mean_std(stat.get("mean"), stat.get("std"))
            if stat.get("nonfinite"):  # left out of the mean, said so
                cell.append(f" ({stat['nonfinite']} non-finite)", style="bold red")
            cells.append(cell)
        table.add_row(*cells)
    table.caption = ("mean ± std (ddof 1) over the runs of each group (its seeds); NaN and "
                     "±inf values are left out and counted")
    table.caption_justify = "left"

    grads = _table("the overridden gradient across the runs of each group", keys)
    grads.add_column("output/input", no_wrap=True)
    for stat in GRADIENT_STATS:
        grads.add_column(SHORT[stat], justify="right")
    for group in groups:
        first = True
        for out, row in group["gradients"].items():
            for name, stats in row.items():
                cells = _param_cells(group, keys) if first else [Text("")] * len(keys)
                grads.add_row(*cells, Text(printable(f"{out}/{name}")),
                              *(_number(stats.get(s), 4) for s in GRADIENT_STATS))
                first = False
        grads.add_section()
    note = degenerate_note(zero_true)
    grads.caption = ("g: a run's overridden gradient, ḡ and t̄: the means of the overridden and "
                     "true gradients over the runs; grad_std = sqrt(mean ‖g − ḡ‖²), "
                     f"bias = ‖ḡ − t̄‖\nevery gradient is taken {INITIAL}"
                     + (f"\n{note}" if note else ""))
    grads.caption_justify = "left"
    return [table, grads] if any(g["gradients"] for g in groups) else [table]


def _table(title: str, keys: list) -> Table:
    table = Table(title=Text(printable(title), style="table.title"), title_justify="left")
    for key in keys:
        table.add_column(Text(printable(key)), no_wrap=True)
    return table


def _param_cells(group: dict, keys: list) -> list:
    return [Text(printable(_param_text(group["params"][k]))) for k in keys]


def _mean_std(mean, std) -> Text:
    text = _number(mean, 4)
    if std is not None and mean is not None:
        text.append(" ± ")
        text.append_text(number_text(std, digits=3))
    return text


NOTHING = "—"   # a group with no number to show (every run failed), as the other tables do


def _number(value, digits: int) -> Text:
    return Text(NOTHING, style="dim") if value is None else number_text(value, digits=digits)


# The words for each failure kind (sweep/failures.py); an error is a run without a result
FAILURE_WORDS = {ERROR: "failed", EXPECT: "failed expect", STOPPED: "stopped"}


def failed_text(kinds: list[str]) -> str:
    """"4 failed expect", "1 failed, 1 stopped": a group's failed runs counted by kind, so
    that an unmet expect (its result kept and averaged) does not read as a crash."""
    counts: dict[str, int] = {}
    for kind in kinds:
        counts[kind] = counts.get(kind, 0) + 1
    return ", ".join(f"{counts[k]} {FAILURE_WORDS[k]}" for k in KINDS if k in counts)


def _group_failures(report: dict, group: dict, keys: list) -> list[str]:
    label = [json.dumps(group["params"][k], sort_keys=True) for k in keys]
    return [failure_kind(r) for r in report["runs"] if r.get("error")
            and [json.dumps(r["params"].get(k), sort_keys=True) for k in keys] == label]


def failures_text(report: dict) -> Text | None:
    failed = [r for r in report["runs"] if r.get("error")]
    if not failed:
        return None
    text = Text()
    for run in failed:
        params = ", ".join(f"{k}={_param_text(v)}" for k, v in run["params"].items())
        text.append(f"run {run['run']} ({printable(params)}) failed: ", style="bold red")
        text.append(printable(run["error"]) + "\n", style="red")
    text.rstrip()
    return text


PAIR_COUNTS = ("n", "nonfinite")  # runs in the gradient statistics, runs left out of them


def report_csv(report: dict) -> str:
    """One row per group: its params, n, failed, <column>.mean/.std/.nonfinite,
    <o>/<i>.<statistic>, then <o>/<i>.n/.nonfinite (appended last, so that every earlier
    column keeps its place)."""
    groups = report["groups"]
    keys = list(groups[0]["params"]) if groups else []
    columns = list(groups[0]["columns"]) if groups else []
    pairs = [(o, i) for o, row in (groups[0]["gradients"] if groups else {}).items() for i in row]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*keys, "n", "failed", *(f"{c}.{s}" for c in columns for s in COLUMN_STATS),
                     *(f"{o}/{i}.{s}" for o, i in pairs for s in GRADIENT_STATS),
                     *(f"{o}/{i}.{s}" for o, i in pairs for s in PAIR_COUNTS)])
    for group in groups:
        row = [_param_text(group["params"][k]) for k in keys] + [group["n"], group["failed"]]
        row += [_cell(group["columns"].get(c, {}).get(s)) for c in columns for s in COLUMN_STATS]
        row += [_cell(group["gradients"].get(o, {}).get(i, {}).get(s))
                for stats in (GRADIENT_STATS, PAIR_COUNTS) for o, i in pairs for s in stats]
        writer.writerow(row)
    return buffer.getvalue()


def _cell(v) -> str:
    if v is None:
        return ""
    return str(jsonable(v))
