"""Line several runs up: their overridden gradients and what training produced, under one
tolerance, with the backend conventions that excuse a gap (`gradcli compare`).

The runner makes each Result; this module only compares them, and render_compare lays
the verdict out.
"""
from __future__ import annotations

import math

import numpy as np

from .labels import told_apart
from .record import Factory, record
from .runner import elementwise_gap, max_gap, where_text


class _Excusable:
    """A comparison row whose verdict a backend's convention (its notes) may excuse."""

    @property
    def excused(self) -> bool:
        """Outside the tolerance, but the notes explain the gap, so the verdict still holds.

        Only a note of kind "nonfinite" explains anything: the edges it is about (sqrt at 0,
        reciprocal at 0, pow of a negative base...) give NaN or an infinity in one framework
        where the other gives a number. So a gap is excused only when, for every two runs,
        every element outside the tolerance has a non-finite value on one side and is an
        element that a nonfinite note of one of those two runs is about. A finite gap, or a gap
        between two runs that carry no such note, is a real disagreement, note or not.
        """
        return self.within is False and self.explained


@record(frozen=False)
class ComparisonRow(_Excusable):
    """One output/input pair across several runs: each run's overridden gradient."""

    output: str
    input: str
    overridden: list         # one per run, None where that run has no gradient
    true: object             # the first run's true gradient
    max_diff: float | None   # largest |difference| from the first run
    within: bool | None      # None without a tolerance
    notes: list = Factory(list)  # conventions that explain a difference
    present: list = Factory(list)  # one per run: False where that run has no such pair at all
                                   # ("absent"; None in overridden is then no unconnected gradient)
    explained: bool = False  # a nonfinite note is on the row, and between every two runs
                             # every element outside the tolerance is NaN or infinite on one
                             # side, at an element a nonfinite note of one of the two is about
    note_elements: list = Factory(list)  # one per note: flat indices of the elements it is
                                         # about, None for every element
    float32_rtol: float | None = None  # the per-element float32 allowance, where it was applied


@record(frozen=False)
class TrainingComparisonRow(_Excusable):
    """One training quantity (the loss per step, the final loss, a final parameter or metric)
    across runs."""

    quantity: str            # "loss", "final_loss", "params.<name>" or "final.<metric>.<part>"
    values: list             # one per run: NOT_TRAINED, or None where that run lacks it
    max_diff: float | None
    within: bool | None
    notes: list = Factory(list)
    explained: bool = False
    float32_rtol: float | None = None  # the per-element float32 allowance, where it was applied


NOT_TRAINED = "not trained"  # a training value of a run that has no train block
FLOAT32_ROUNDING = 2e-5  # relative gap two float32 kernels may differ by, per element
# The one kind of note that may excuse a gap (backends/kit.py: NONFINITE). Every other note
# (a finite difference such as a tie split, or what gradcli reports instead of the framework's
# answer) describes numbers the reported gradients do not carry, so it is shown and excuses none.
EXCUSING = "nonfinite"


@record(frozen=False)
class Comparison:
    """Runs lined up against the first: gradient rows, training rows and their verdict."""

    labels: list[str]
    results: list
    rows: list[ComparisonRow]
    train_rows: list[TrainingComparisonRow]
    ok: bool
    warnings: list = Factory(list)


def comparison(results: list, labels: list[str], tolerance: float | None) -> Comparison:
    """compare and compare_training together; ok only when both agree. Runs that share a
    label are told apart (labels.told_apart) here, so every format and note says the same."""
    labels = told_apart(labels)
    rows, gradients_ok = compare(results, tolerance, labels)
    train_rows, training_ok = compare_training(results, tolerance, rows)
    return Comparison(labels, results, rows, train_rows, gradients_ok and training_ok,
                      _unshared(labels, rows))


def _unshared(labels: list[str], rows: list[ComparisonRow]) -> list[str]:
    """A warning when no output/input pair is in every run: every row then differs only because
    the specs have different outputs or inputs, and nothing was compared."""
    if not rows or any(all(row.present) for row in rows):
        return []
    has = "; ".join(f"{label} has " + ", ".join(f"{r.output}/{r.input}" for r in rows if r.present[k])
                    for k, label in enumerate(labels))
    return [f"the compared runs share no output/input pair, so no gradient was compared ({has})"]


def compare(results: list, tolerance: float | None = None,
            labels: list[str] | None = None) -> tuple[list[ComparisonRow], bool]:
    """Line the runs' overridden gradients up; the bool says all agree within tolerance.

    A difference that a backend's documented convention explains (a NaN or an
    infinity where the other run has a number, at an edge the note is about) is
    noted, not failed; in float32 each element may also differ by FLOAT32_ROUNDING
    relative to its own magnitude.
    """
    labels = labels or [r.experiment.name for r in results]
    keys: dict[tuple[str, str], None] = {}
    for r in results:
        for out, row in r.gradients.items():
            for name in row:
                keys[(out, name)] = None
    float32 = any(r.experiment.dtype == "float32" for r in results)
    rows, ok = [], True
    for out, name in keys:
        grads = [_get(r, out, name, "overridden") for r in results]
        pair = _merged([(k, label, c) for k, (label, r) in enumerate(zip(labels, results))
                        for c in r.conventions if (c.output, c.input) == (out, name)])
        notes = [f"{label}: {text}{_where(name, elements, grads)}"
                 for (_, label, text, _), elements in pair.items()]
        present = [name in r.gradients.get(out, {}) for r in results]
        # each run's own excusing notes: a gap between two runs is excused by theirs alone
        covered = [_covered([elements for (j, _, _, kind), elements in pair.items()
                             if j == k and kind == EXCUSING]) for k in range(len(results))]
        excusing = any(c is None or c for c in covered)
        max_diff, within, nonfinite, rtol = _agreement(grads, tolerance, float32, covered)
        if not all(present):  # a pair a spec lacks is no unconnected gradient: nothing to compare
            max_diff, within, nonfinite, rtol = None, None if tolerance is None else False, False, None
        row = ComparisonRow(out, name, grads, _get(results[0], out, name, "true"), max_diff, within,
                            notes, present, nonfinite and excusing, list(pair.values()), rtol)
        ok = ok and (within is not False or row.excused)
        rows.append(row)
    return rows, ok


def _merged(pair: list) -> dict:
    """{(run index, run label, note text, kind): elements}: one note per text, its elements
    joined (the same edge met at several ops); None, every element, absorbs any list."""
    merged: dict = {}
    for k, label, c in pair:
        key = (k, label, c.text, c.kind)
        if key not in merged:
            merged[key] = c.elements
        elif merged[key] is not None:
            merged[key] = None if c.elements is None else tuple(sorted({*merged[key], *c.elements}))
    return merged


def _covered(excusing: list):
    """The flat indices one run's excusing notes are about together (None: every element), or
    an empty set when none of its notes may excuse a gap."""
    if any(elements is None for elements in excusing):
        return None
    return {i for elements in excusing for i in elements}


def _where(name: str, elements, grads: list) -> str:
    """Where a note holds, for its text: the input's elements (row-major), as numpy indexes them."""
    if elements is None:
        return ""
    return where_text(name, elements, next((np.shape(g) for g in grads if g is not None), ()))


def compare_training(results: list, tolerance: float | None, rows: list[ComparisonRow]
                     ) -> tuple[list[TrainingComparisonRow], bool]:
    """Line up what training produced (losses, final parameters, final metrics on the training
    and test parts) under the same tolerance.

    Training consumes the loss's gradients, so a gradient difference that a
    convention excuses (rows of the training loss) excuses a training gap of the
    same kind (NaN or infinity on one side), never a finite one, and nothing when the runs
    trained for different numbers of steps (one stopped on a non-finite value). A run
    that does not train shows NOT_TRAINED and is left out of the verdict: the
    runs that trained are compared with each other (the first of them is the
    reference).
    """
    trained = [r.train for r in results if r.train is not None]
    if not trained:
        return [], True
    float32 = any(r.experiment.dtype == "float32" for r in results if r.train is not None)
    losses = {r.experiment.train.loss for r in results if r.train is not None}
    excuses = list(dict.fromkeys(note for row in rows if row.output in losses and row.excused
                                 for note in row.notes))
    if len({len(t.loss) for t in trained}) > 1:
        excuses = []  # a run that stopped early trained differently: no edge note excuses that
    names = dict.fromkeys(n for t in trained for n in t.final)
    metrics = dict.fromkeys((m, part) for t in trained for m, parts in t.final_metrics.items()
                            for part in parts)
    quantities = [("loss", lambda t: t.loss), ("final_loss", lambda t: t.final_loss),
                  *((f"params.{n}", lambda t, n=n: t.final.get(n)) for n in names),
                  *((f"final.{m}.{part}", lambda t, m=m, part=part:
                     t.final_metrics.get(m, {}).get(part)) for m, part in metrics)]
    out, ok = [], True
    for quantity, pick in quantities:
        values = [pick(t) for t in trained]
        max_diff, within, nonfinite, rtol = ((None, None, False, None) if len(values) < 2
                                             else _agreement(values, tolerance, float32))
        placed = iter(values)  # back in every run's column
        row = TrainingComparisonRow(
            quantity, [NOT_TRAINED if r.train is None else next(placed) for r in results],
            max_diff, within, excuses if within is False else [], nonfinite and bool(excuses), rtol)
        ok = ok and (within is not False or row.excused)
        out.append(row)
    return out, ok


def _agreement(values: list, tolerance: float | None, float32: bool, covered=None
               ) -> tuple[float | None, bool | None, bool, float | None]:
    """The largest gap from the first run (NaN beats any number), whether every element is
    within the tolerance of the first run's (in float32, plus FLOAT32_ROUNDING times that
    element's own size), and whether, between every two runs, every element outside it has a
    NaN on one side or an infinity against a number and is one of the flat indices covered by
    one of the two runs (`covered`: one per run, a set or None for any element; None for all:
    any element); last, the float32 allowance if it was applied to some element."""
    first = values[0]
    diffs = [_max_diff(first, v) for v in values[1:]]
    if any(d is None for d in diffs):
        max_diff = None
    elif any(math.isnan(d) for d in diffs):
        max_diff = math.nan  # Python's max would keep or drop a NaN depending on its place
    else:
        max_diff = max(diffs, default=0.0)
    if tolerance is None:
        return max_diff, None, False, None
    if not all((v is None) == (first is None) for v in values):
        return max_diff, False, False, None
    if first is None:
        return max_diff, True, False, None
    arrays = [np.asarray(v, dtype=np.float64) for v in values]
    if any(b.shape != arrays[0].shape for b in arrays[1:]):
        return max_diff, False, False, None
    cover = covered if isinstance(covered, list) else [covered] * len(values)
    rtol = FLOAT32_ROUNDING if float32 and len(values) > 1 else None
    within, nonfinite = True, True
    # every two runs, not only each against the first: two runs may both differ from a first
    # run's noted NaN and still disagree with each other by a number no note explains
    for i in range(len(arrays)):
        for j in range(i + 1, len(arrays)):
            outside = _outside(arrays[i], arrays[j], tolerance, float32)
            if not outside.any():
                continue
            if i == 0:
                within = False
            # NaN on one side, or an infinity against a number: +inf against -inf is no edge's gap
            a_out, b_out = arrays[i][outside], arrays[j][outside]
            edge = (np.isnan(a_out) ^ np.isnan(b_out)) | (np.isfinite(a_out) ^ np.isfinite(b_out))
            if cover[i] is not None and cover[j] is not None:  # only where their notes are about
                edge &= np.isin(np.flatnonzero(outside), list({*cover[i], *cover[j]}))
            nonfinite = nonfinite and bool(np.all(edge))
    return max_diff, within, nonfinite and not within, rtol


def _outside(a: np.ndarray, b: np.ndarray, tolerance: float, float32: bool) -> np.ndarray:
    """Where b is not within the tolerance of a (in float32, plus FLOAT32_ROUNDING times a's own
    size there); a NaN gap is outside, and so is an infinity against anything but itself
    (inf against -inf or a number): `--tolerance inf` admits every finite gap, not those, and
    two finite values whose difference overflows still differ by a finite amount."""
    allowed = tolerance
    if float32:
        with np.errstate(all="ignore"):
            allowed = tolerance + FLOAT32_ROUNDING * np.where(np.isfinite(a), np.abs(a), 0.0)
    infinite = (np.isinf(a) | np.isinf(b)) & (a != b)
    return ~(elementwise_gap(a, b) <= allowed) | infinite


def _get(result, out: str, name: str, kind: str):
    row = result.gradients.get(out, {}).get(name)
    return None if row is None else getattr(row, kind)


def _max_diff(a, b) -> float | None:
    if a is None or b is None:
        return None if (a is None) != (b is None) else 0.0
    if np.shape(a) != np.shape(b):
        return math.inf
    return max_gap(a, b)
