"""The words a sweep figure's legend (and the report's caption under it) adds to its lines:
every run left out is said once, and an x value that is not drawn at all (none of its runs
has a finite value: all diverged or failed) is named with its counts, so that a sweep of
three learning rates never reads as a sweep of two (tryout10 F7).
"""
from __future__ import annotations

import numpy as np

from ..printable import printable
from .fit import middle

NAME = 40     # characters of a key or value inside a note
NAMED = 3     # x values not drawn named one by one; more are said in one note


def dropped(rows: list, x: str, x_values: list, lines: list, drawn) -> list:
    """(value, runs, failed) of each x value not drawn: `rows` are all the runs of the
    figure (failed ones too), `lines` the series' lines before the value is taken out (their
    `runs` count the runs with a result at each x value)."""
    found = []
    for k, value in enumerate(x_values):
        if drawn[k]:
            continue
        total = sum(1 for r in rows if r.get(x) == value)
        with_result = sum(int(line.runs[k]) for line in lines)
        found.append((value, total, total - with_result))
    return found


def notes(series) -> list:
    """The legend's notes of a SweepSeries, beside its lines' entries."""
    found = []
    failed = series.failed - sum(f for _, _, f in series.dropped)
    nonfinite = series.nonfinite - sum(n - f for _, n, f in series.dropped)
    found += _not_drawn(series)
    if failed:
        found.append(f"{failed} failed run{'s' * (failed != 1)} left out")
    if series.unread:
        found.append(f"{series.unread} run{'s' * (series.unread != 1)} without a readable "
                     "runs/<id>.json left out")
    if nonfinite and series.curve:
        found.append(f"{nonfinite} non-finite value{'s' * (nonfinite != 1)} left out")
    elif nonfinite:
        found.append(f"{nonfinite} run{'s' * (nonfinite != 1)} without a finite "
                     f"{series.y_column} left out")
    if series.shorter:
        # "end early" would read as stopped: most have fewer batches per epoch or fewer steps
        found.append(f"{series.shorter} run{'s' * (series.shorter != 1)} "
                     f"ha{'s' if series.shorter == 1 else 've'} fewer steps: later steps' means "
                     "are over fewer runs")
    others = [k for k in series.pooled if k != "seed"]
    if others:  # the subtitle names them too; the legend keeps them in view
        found.append("pooled over " + ", ".join(others))
    side = series.crosses_zero()
    if side:
        found.append(f"band {side} 0: mean {'−' if side == 'below' else '+'} 1 std "
                     f"(every run {'≥' if side == 'below' else '≤'} 0)"
                     + ("; filled down to the log axis' bottom" if series.log_y() else ""))
    return found + coincide(series)[1] + gradient_notes(series.y_column, series.zero_true)


def coincide(series) -> tuple[list, list]:
    """(for each line, the earlier line it lies on at every point, mean and band, or None;
    notes naming a line that lies on an earlier one at some points only): plot train's rule
    for lines drawn on top of one another (train.overlaps: within OVERLAP of the axes' span,
    in decades on a log axis), asked point by point. Identical means at lr 0.003 hid one
    estimator's marker and band under the other's without a word (tryout12 3.6). A
    categorical axis sets the points side by side: none hides another."""
    from .train import alike, drawn_scale, tolerance
    lines = series.lines
    under = [None] * len(lines)
    if series.categorical or len(lines) < 2:
        return under, []
    log = series.log_y()
    drawn = [(np.asarray(series.xs(line), dtype=np.float64),
              drawn_scale(np.vstack([line.mean, *series.band(line)]), log)) for line in lines]
    atol = tolerance([values for _, values in drawn])
    found = []
    for j, (xj, vj) in enumerate(drawn):
        shown_j = np.isfinite(vj[0])
        for i in range(j):
            xi, vi = drawn[i]
            _, at_i, at_j = np.intersect1d(xi, xj, return_indices=True)
            same = alike(vi[:, at_i], vj[:, at_j], atol).all(axis=0)
            same &= np.isfinite(vi[0, at_i]) & shown_j[at_j]
            if not same.any():
                continue
            if same.sum() == shown_j.sum() == np.isfinite(vi[0]).sum():
                under[j] = lines[i].label   # the whole line: said beside its name
            else:
                banded = bool(np.isfinite(lines[j].std[at_j][same]).any())
                found.append(_lies_on(series, lines[j].label, lines[i].label,
                                      xj[at_j][same], shown_j.sum(), banded))
            break
    return under, found


def _lies_on(series, upper, lower, xs, points: int, banded: bool) -> str:
    """'hardtanh lies on identity (mean and band) at lr = 0.003' (at 41 of 81 steps, for a
    curve; without "(mean and band)" where there is no band: one run per point)."""
    head = f"{_name(upper)} lies on {_name(lower)}{' (mean and band)' * banded} at "
    if series.curve:
        return head + f"{len(xs)} of {points} steps"
    values = [v for v, p in zip(series.x_values, series.positions) if p in set(xs.tolist())]
    shown = ", ".join(_name(v) for v in values[:NAMED]) + (", …" if len(values) > NAMED else "")
    return head + f"{_name(series.x_key)} = {shown}"


def gradient_notes(column: str, zero: list) -> list:
    """What a figure of a gradient column (<output>/<input>.cosine, ...) must say beside its
    numbers, in the words of the sweep's table (render_sweep): when the gradients were taken
    (so they cannot depend on the learning rate), and, when the pair is among `zero`
    (sweep/stats.zero_true: its true gradient is 0 in every run), that comparisons with it
    are degenerate: a zero estimator reads as best (tryout12 3.5)."""
    from ..render_sweep import INITIAL, degenerate_note
    if "/" not in column:
        return []
    pair = column.rsplit(".", 1)[0]
    note = degenerate_note([pair] if pair in zero else [])
    return [f"gradients {INITIAL}"] + ([note] if note else [])


def _not_drawn(series) -> list:
    """'lr = 100 not drawn: 3 of 3 runs without a finite final_loss', one note per x value
    (or one for them all past NAMED values)."""
    gone = series.dropped
    if not gone:
        return []
    x, y = _name(series.x_key), _name(series.y_column)
    if len(gone) <= NAMED:
        return [f"{x} = {_name(value)} not drawn: {_counts(runs, failed, y)}"
                for value, runs, failed in gone]
    runs, failed = sum(n for _, n, _ in gone), sum(f for _, _, f in gone)
    values = ", ".join(_name(value) for value, _, _ in gone[:NAMED]) + ", …"
    return [f"{x} = {values} ({len(gone)} values) not drawn: {_counts(runs, failed, y)}"]


def _counts(runs: int, failed: int, y: str) -> str:
    if not failed:
        return f"{runs} of {runs} run{'s' * (runs != 1)} without a finite {y}"
    if failed == runs:
        return f"{runs} of {runs} run{'s' * (runs != 1)} failed"
    return f"{runs} runs: {failed} failed, {runs - failed} without a finite {y}"


def _name(text) -> str:
    return middle(printable(text), NAME)
