"""Turn an Experiment into a Result: values, the three gradients, metrics, training, expect.

Plain data in, plain data out; nothing here prints.
"""
from __future__ import annotations

import math

import numpy as np

from . import backends
from .backends.program import TrainRecord
from .core.budget import DEFAULT_TOTAL, memory_budget
from .fd import directional_projection
from .record import Factory, record

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

    @property
    def exit_code(self) -> int:
        return 1 if self.expect is not None and not self.expect.passed else 0


def run(experiment, *, backend: str | None = None, numeric: bool = True,
        progress=lambda it, **kw: it, max_memory: int | None = None) -> Result:
    """Build the experiment once on the backend and collect everything about it.

    Every tensor is built under a memory budget of `max_memory` bytes (default
    8 GiB, half of it per tensor; docs/untrusted.md): an op past it is refused
    before it allocates.
    """
    with memory_budget(max_memory or DEFAULT_TOTAL, hint=MEMORY_HINT):
        return _run(experiment, backend, numeric, progress)


def _run(experiment, backend, numeric, progress) -> Result:
    program = backends.build(experiment, backend)
    values = program.values()
    overridden, true = program.gradients("overridden"), program.gradients("true")
    numeric_grads = program.numeric(MAX_PROBES, DIRECTIONS) if numeric else None
    gradients, summary = {}, {}
    for out, row in overridden.items():
        gradients[out], summary[out] = {}, {}
        for name, over in row.items():
            num = numeric_grads[out][name] if numeric_grads else None
            kind = _numeric_kind(experiment, name, numeric)
            gradients[out][name] = GradientRow(over, true[out][name], num, kind)
            summary[out][name] = summarize(over, true[out][name], num, kind, experiment.seed)
    result = Result(experiment, backend or experiment.backend, values, gradients, summary,
                    list(program.override_matches))
    result.warnings = [f"override_map entry {e.op!r} -> {e.gradient!r} matched no op"
                       for e, count in result.overrides if count == 0]
    if experiment.train is not None:
        result.train = program.train(progress)
    if experiment.expect is not None:
        result.expect = check_expect(experiment.expect, result)
    result.conventions = list(program.conventions)  # complete only after gradients and training
    return result


def _numeric_kind(experiment, name: str, numeric: bool) -> str:
    if not numeric:
        return "skipped"
    spec = experiment.inputs.get(name)
    size = spec.value.size if spec is not None else 0
    return "directional" if size > MAX_PROBES else "full"


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
        diff = float(np.max(np.abs(o - t))) if o.size else 0.0
        agree = float(np.mean(np.sign(o) == np.sign(t))) if o.size else 1.0
    summary = Summary(cosine, diff, no, nt, agree)
    if numeric is not None:
        reference = (directional_projection(true, DIRECTIONS, seed) if numeric_kind == "directional"
                     else true)
        with np.errstate(all="ignore"):
            gap = np.abs(np.asarray(numeric, dtype=np.float64) - np.asarray(reference, dtype=np.float64))
        summary.numeric_max_abs_diff = float(np.max(gap)) if gap.size else 0.0
    return summary


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
            with np.errstate(all="ignore"):
                gap = float(np.nanmax(np.abs(act_arr - exp_arr))) if act_arr.size else 0.0
            failures.append(f"{label}: expected {_show(expected)}, got {_show(actual)} "
                            f"(max |diff| {gap:.3g}; rtol {expect.rtol:g}, atol {expect.atol:g})")

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


def _show(value) -> str:
    if value is None:
        return "null (no gradient)"
    array = np.asarray(value)
    return np.array2string(array, precision=6, threshold=8) if array.ndim else f"{array.item():.6g}"


@record(frozen=False)
class ComparisonRow:
    """One output/input pair across several runs: each run's overridden gradient."""

    output: str
    input: str
    overridden: list         # one per run, None where that run has no gradient
    true: object             # the first run's true gradient
    max_diff: float | None   # largest |difference| from the first run
    within: bool | None      # None without a tolerance
    notes: list = Factory(list)  # conventions that explain a difference


FLOAT32_ROUNDING = 2e-5  # relative gap two float32 kernels may differ by


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
        first = grads[0]
        diffs = [_max_diff(first, g) for g in grads[1:]]
        max_diff = None if any(d is None for d in diffs) else max(diffs, default=0.0)
        notes = [f"{label}: {c.text}" for label, r in zip(labels, results)
                 for c in r.conventions if (c.output, c.input) == (out, name)]
        within = None
        if tolerance is not None:
            allowed = tolerance
            if float32 and first is not None:
                scale = float(np.max(np.abs(np.asarray(first, dtype=np.float64)), initial=1.0))
                allowed = max(tolerance, FLOAT32_ROUNDING * scale)
            same_connection = all((g is None) == (first is None) for g in grads)
            within = same_connection and (max_diff is None or max_diff <= allowed)
            ok = ok and (within or bool(notes))
        rows.append(ComparisonRow(out, name, grads, _get(results[0], out, name, "true"),
                                  max_diff, within, notes))
    return rows, ok


def _get(result, out: str, name: str, kind: str):
    row = result.gradients.get(out, {}).get(name)
    return None if row is None else getattr(row, kind)


def _max_diff(a, b) -> float | None:
    if a is None or b is None:
        return None if (a is None) != (b is None) else 0.0
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return math.inf
    with np.errstate(all="ignore"):
        gap = np.abs(a - b)
    both_nan = np.isnan(a) & np.isnan(b)
    return float(np.max(np.where(both_nan, 0.0, gap))) if gap.size else 0.0
