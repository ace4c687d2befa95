"""Turn an Experiment into a Result: values, the three gradients, metrics, training, expect.

Plain data in, plain data out; nothing here prints.
"""
from __future__ import annotations

import math

import numpy as np

from . import backends
from .backends.program import TrainRecord, check_grad_ys, nonfinite_kind, train_error
from .core.budget import DEFAULT_TOTAL, memory_budget
from .errors import GradcliError, SpecError
from .fd import directional_projection
from .record import Factory, record
from .spec.lint_discrete import run_warnings

MAX_PROBES = 2048   # beyond this many elements, numeric gradients are directional
DIRECTIONS = 16
MEMORY_HINT = "raise the budget with --max-memory, e.g. --max-memory 16GiB"


@record(frozen=False)
class GradientRow:
    """The three gradients of one output with respect to one input."""

    overridden: object
    true: object
    numeric: object
    numeric_kind: str  # "full", "directional" or "skipped"


@record(frozen=False)
class Summary:
    """How far the gradient training uses is from the true one."""

    cosine: float | None
    max_abs_diff: float | None
    norm_overridden: float | None
    norm_true: float | None
    sign_agreement: float | None
    numeric_max_abs_diff: float | None = None  # numeric vs true (projected when directional)


@record(frozen=False)
class ExpectOutcome:
    """Whether the spec's expect block held, and each way it did not."""

    passed: bool
    failures: list[str]


@record(frozen=False)
class Result:
    """Everything one run of one experiment found."""

    experiment: object
    backend: str
    values: dict
    gradients: dict          # {output: {input: GradientRow}}
    summary: dict            # {output: {input: Summary}}
    overrides: list          # [(OverrideEntry, number of ops it matched)]
    train: TrainRecord | None = None
    expect: ExpectOutcome | None = None
    warnings: list = Factory(list)
    conventions: list = Factory(list)  # where the backend's framework differs
    nonfinite: list = Factory(list)    # [Nonfinite]: where each NaN or infinity was born

    @property
    def exit_code(self) -> int:
        return 1 if self.expect is not None and not self.expect.passed else 0


def run(experiment, *, backend: str | None = None, numeric: bool = True,
        progress=lambda it, **kw: it, max_memory: int | None = None, program=None) -> Result:
    """Build the experiment once on the backend and collect everything about it.

    `program`: a Program already built for this experiment's structure and rebound to it
    (Program.rebind; a sweep replays one graph for runs that differ only in values).

    Every tensor is built under a memory budget of `max_memory` bytes (default
    2 GiB, half of it per tensor; docs/untrusted.md): an op past it is refused
    before it allocates.
    """
    with budget(max_memory):
        return _run(experiment, backend, numeric, progress, program)


def budget(max_memory: int | None = None):
    """The memory budget a command's tensors are built under (run, curve sweeps, report)."""
    return memory_budget(max_memory or DEFAULT_TOTAL, hint=MEMORY_HINT)


def _run(experiment, backend, numeric, progress, program=None) -> Result:
    program = program or backends.build(experiment, backend)
    values = program.values()
    check_grad_ys(experiment, {name: np.shape(value) for name, value in values.items()})
    overridden, true = program.gradients("overridden"), program.gradients("true")
    numeric_grads = program.numeric(MAX_PROBES, DIRECTIONS) if numeric else None
    gradients, summary = {}, {}
    for out, row in overridden.items():
        gradients[out], summary[out] = {}, {}
        for name, over in row.items():
            num = numeric_grads[out][name] if numeric_grads else None
            kind = program.numeric_kinds[out][name] if numeric else "skipped"  # what it did
            gradients[out][name] = GradientRow(over, true[out][name], num, kind)
            summary[out][name] = summarize(over, true[out][name], num, kind, experiment.seed)
    result = Result(experiment, backend or experiment.backend, values, gradients, summary,
                    list(program.override_matches))
    result.warnings = [f"override_map entry {e.op!r} -> {e.gradient!r} matched no op"
                       for e, count in result.overrides if count == 0]
    result.warnings += run_warnings(experiment)  # overrides a boolean/integer path cuts off
    result.warnings += program.warnings
    result.nonfinite = locate_nonfinite(program, values, overridden, true)
    if experiment.train is not None:
        result.train = train(program, experiment, progress)
        if result.train.nonfinite is not None:
            result.nonfinite.append(result.train.nonfinite)
    if experiment.expect is not None:
        result.expect = check_expect(experiment.expect, result)
    result.conventions = list(program.conventions)  # complete only after gradients and training
    return result


def locate_nonfinite(program, values: dict, overridden: dict, true: dict) -> list:
    """Where each non-finite value and gradient was born; the checked walk runs only for those."""
    found = []
    bad = [n for n, v in values.items() if nonfinite_kind(v)]
    if bad:
        found += program.locate_nonfinite("forward", bad)
    for phase, table in (("overridden", overridden), ("true", true)):
        bad = [(o, i) for o, row in table.items() for i, g in row.items()
               if g is not None and nonfinite_kind(g)]
        if bad:
            found += program.locate_nonfinite(phase, bad)
    return found


def train(program, experiment, progress) -> TrainRecord:
    """The one training loop on the backend (gradcli.training); an error with no expression to
    point at names the train key. A non-finite loss under on_nonfinite: error stays itself
    (exit 1); under stop, the record says where training stopped."""
    from .training import NonfiniteLoss
    try:
        return program.train(progress)
    except GradcliError as exc:
        if isinstance(exc, (SpecError, NonfiniteLoss)):
            raise
        raise train_error(experiment, exc, "train.loss") from None


def summarize(over, true, numeric, numeric_kind: str, seed: int) -> Summary:
    """cosine, max |diff|, norms and sign agreement of overridden vs true."""
    if over is None or true is None:
        return Summary(None, None, _norm(over), _norm(true), None)
    o = np.asarray(over, dtype=np.float64).ravel()
    t = np.asarray(true, dtype=np.float64).ravel()
    no, nt = _norm(o), _norm(t)
    with np.errstate(all="ignore"):
        if no == 0 and nt == 0:
            cosine = 1.0
        elif no == 0 or nt == 0:
            cosine = 0.0
        else:
            cosine = float(np.clip(np.dot(o, t) / (no * nt), -1.0, 1.0))
        diff = max_gap(o, t)
        agree = sign_agreement(o, t)
    summary = Summary(cosine, diff, no, nt, agree)
    if numeric is not None:
        reference = (directional_projection(true, DIRECTIONS, seed) if numeric_kind == "directional"
                     else true)
        summary.numeric_max_abs_diff = max_gap(numeric, reference)
    return summary


def sign_agreement(o: np.ndarray, t: np.ndarray) -> float:
    """The share of elements whose signs agree, among those where neither side is NaN (a NaN
    has no sign); NaN when there is no such element, 1.0 for empty gradients."""
    if not o.size:
        return 1.0
    signed = ~(np.isnan(o) | np.isnan(t))
    return float(np.mean(np.sign(o[signed]) == np.sign(t[signed]))) if signed.any() else math.nan


def elementwise_gap(a, b) -> np.ndarray:
    """|a − b|, where equal values (equal infinities too) and two NaNs agree (gap 0), and a
    NaN against a number disagrees (gap NaN, which no tolerance admits)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    with np.errstate(all="ignore"):
        gap = np.where(a == b, 0.0, np.abs(a - b))  # inf - inf would be NaN
    return np.where(np.isnan(a) & np.isnan(b), 0.0, gap)


def max_gap(a, b) -> float:
    """The largest elementwise_gap; NaN when any element disagrees by a NaN."""
    gap = elementwise_gap(a, b)
    return float(np.max(gap)) if gap.size else 0.0  # np.max keeps a NaN, Python's max may not


def _norm(value) -> float | None:
    if value is None:
        return None
    with np.errstate(all="ignore"):
        return float(np.sqrt(np.sum(np.asarray(value, dtype=np.float64) ** 2)))


def check_expect(expect, result: Result) -> ExpectOutcome:
    """Compare every expected number with what the run produced, within the tolerance."""
    failures: list[str] = []

    def compare(label: str, expected, actual) -> None:
        if expected is None or actual is None:
            if expected is not actual and not (expected is None and actual is None):
                failures.append(f"{label}: expected {_show(expected)}, got {_show(actual)}")
            return
        exp_arr = np.asarray(expected, dtype=np.float64)
        act_arr = np.asarray(actual, dtype=np.float64)
        if exp_arr.shape != act_arr.shape and exp_arr.ndim:
            failures.append(f"{label}: expected shape {exp_arr.shape}, got {act_arr.shape}")
            return
        if not np.allclose(act_arr, exp_arr, rtol=expect.rtol, atol=expect.atol, equal_nan=True):
            gap = max_gap(act_arr, exp_arr)
            failures.append(f"{label}: expected {_show(expected)}, got {_show(actual)} "
                            f"(max |diff| {gap:.3g}; rtol {expect.rtol:g}, atol {expect.atol:g})")

    if expect.finite:
        failures += [f"finite: {_nonfinite_text(n)}" for n in result.nonfinite]
        stopped = result.train.stopped if result.train is not None else None
        if stopped is not None and stopped.get("nonfinite") not in result.nonfinite:
            failures.append(f"finite: training stopped at step {stopped['step']}: "
                            f"{stopped['reason']}")
    for name, expected in expect.values.items():
        compare(f"values.{name}", expected, result.values.get(name))
    for key, kind in (("gradients", "overridden"), ("true_gradients", "true")):
        for out, row in getattr(expect, key).items():
            for name, expected in row.items():
                got = getattr(result.gradients[out][name], kind)
                compare(f"{key}.{out}.{name}", expected, got)
    if expect.train_params or expect.train_loss is not None:
        if result.train is None:
            failures.append("train: expected training results, but the spec has no train block")
        else:
            for name, expected in expect.train_params.items():
                compare(f"train.params.{name}", expected, result.train.final.get(name))
            if expect.train_loss is not None:
                compare("train.loss", expect.train_loss, result.train.loss)
    return ExpectOutcome(not failures, failures)


def _nonfinite_text(n) -> str:
    where = f" ({n.location})" if n.location else ""
    step = f" at step {n.step}" if n.step is not None else ""
    return (f"{n.phase} {n.tensor} is {n.value}{step}, born as {n.born} at "
            f"{n.expr or n.op}{where}")


def _show(value) -> str:
    if value is None:
        return "null (no gradient)"
    array = np.asarray(value)
    return np.array2string(array, precision=6, threshold=8) if array.ndim else f"{array.item():.6g}"


class _Excusable:
    """A comparison row whose verdict a backend's convention (its notes) may excuse."""

    @property
    def excused(self) -> bool:
        """Outside the tolerance, but the notes explain the gap, so the verdict still holds."""
        return self.within is False and bool(self.notes)


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


@record(frozen=False)
class TrainingComparisonRow(_Excusable):
    """One training quantity (the loss per step, the final loss, a final parameter) across runs."""

    quantity: str            # "loss", "final_loss" or "params.<name>"
    values: list             # one per run: NOT_TRAINED, or None where that run lacks it
    max_diff: float | None
    within: bool | None
    notes: list = Factory(list)


NOT_TRAINED = "not trained"  # a training value of a run that has no train block
FLOAT32_ROUNDING = 2e-5  # relative gap two float32 kernels may differ by


@record(frozen=False)
class Comparison:
    """Runs lined up against the first: gradient rows, training rows and their verdict."""

    labels: list[str]
    results: list
    rows: list[ComparisonRow]
    train_rows: list[TrainingComparisonRow]
    ok: bool


def comparison(results: list, labels: list[str], tolerance: float | None) -> Comparison:
    """compare and compare_training together; ok only when both agree."""
    rows, gradients_ok = compare(results, tolerance, labels)
    train_rows, training_ok = compare_training(results, tolerance, rows)
    return Comparison(labels, results, rows, train_rows, gradients_ok and training_ok)


def compare(results: list, tolerance: float | None = None,
            labels: list[str] | None = None) -> tuple[list[ComparisonRow], bool]:
    """Line the runs' overridden gradients up; the bool says all agree within tolerance.

    A difference that a backend's documented convention explains is noted, not
    failed; in float32, gaps within float32 rounding count as agreement.
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
        notes = [f"{label}: {c.text}" for label, r in zip(labels, results)
                 for c in r.conventions if (c.output, c.input) == (out, name)]
        max_diff, within = _agreement(grads, tolerance, float32)
        row = ComparisonRow(out, name, grads, _get(results[0], out, name, "true"), max_diff, within,
                            notes)
        ok = ok and (within is not False or row.excused)
        rows.append(row)
    return rows, ok


def compare_training(results: list, tolerance: float | None, rows: list[ComparisonRow]
                     ) -> tuple[list[TrainingComparisonRow], bool]:
    """Line up what training produced (losses, final parameters) under the same tolerance.

    Training consumes the loss's gradients, so a gradient difference that a
    convention excuses (rows of the training loss) excuses training too. A run
    that does not train shows NOT_TRAINED and is left out of the verdict: the
    runs that trained are compared with each other (the first of them is the
    reference).
    """
    trained = [r.train for r in results if r.train is not None]
    if not trained:
        return [], True
    float32 = any(r.experiment.dtype == "float32" for r in results if r.train is not None)
    losses = {r.experiment.train.loss for r in results if r.train is not None}
    excuses = list(dict.fromkeys(note for row in rows if row.output in losses and not row.within
                                 for note in row.notes))
    names = dict.fromkeys(n for t in trained for n in t.final)
    quantities = [("loss", lambda t: t.loss), ("final_loss", lambda t: t.final_loss),
                  *((f"params.{n}", lambda t, n=n: t.final.get(n)) for n in names)]
    out, ok = [], True
    for quantity, pick in quantities:
        values = [pick(t) for t in trained]
        max_diff, within = (None, None) if len(values) < 2 else _agreement(values, tolerance, float32)
        if within is not None:
            ok = ok and (within or bool(excuses))
        placed = iter(values)  # back in every run's column
        out.append(TrainingComparisonRow(
            quantity, [NOT_TRAINED if r.train is None else next(placed) for r in results],
            max_diff, within, excuses if within is False else []))
    return out, ok


def _agreement(values: list, tolerance: float | None, float32: bool) -> tuple[float | None, bool | None]:
    """The largest gap from the first run (NaN beats any number) and whether it is allowed."""
    first = values[0]
    diffs = [_max_diff(first, v) for v in values[1:]]
    if any(d is None for d in diffs):
        max_diff = None
    elif any(math.isnan(d) for d in diffs):
        max_diff = math.nan  # Python's max would keep or drop a NaN depending on its place
    else:
        max_diff = max(diffs, default=0.0)
    if tolerance is None:
        return max_diff, None
    allowed = tolerance
    if float32 and first is not None:
        magnitudes = np.abs(np.asarray(first, dtype=np.float64))
        scale = float(np.max(magnitudes[np.isfinite(magnitudes)], initial=1.0))  # inf would admit all
        allowed = max(tolerance, FLOAT32_ROUNDING * scale)
    same_connection = all((v is None) == (first is None) for v in values)
    within = same_connection and (max_diff is None or max_diff <= allowed)  # False for NaN
    return max_diff, within


def _get(result, out: str, name: str, kind: str):
    row = result.gradients.get(out, {}).get(name)
    return None if row is None else getattr(row, kind)


def _max_diff(a, b) -> float | None:
    if a is None or b is None:
        return None if (a is None) != (b is None) else 0.0
    if np.shape(a) != np.shape(b):
        return math.inf
    return max_gap(a, b)
