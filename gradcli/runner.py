"""Turn an Experiment into a Result: values, the three gradients, metrics, training, expect.

Plain data in, plain data out; nothing here prints.
"""
from __future__ import annotations

import math

import numpy as np

from . import backends, norms
from .backends.program import Convention, TrainRecord, check_grad_ys, nonfinite_kind, train_error
from .core.budget import DEFAULT_TOTAL, memory_budget
from .errors import GradcliError, SpecError
from .expected import miss
from .fd import directional_projection
from .record import Factory, record
from .spec import lint, unmatched_at_run  # not .spec.lint: that would shadow lint() by its module
from .spec.expect_numbers import refuse_booleans
from .spelling import KIND_TEXT, array_text
from .spelling import number_text as spelled

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
    warnings: list = Factory(list)     # every warning: the lint's (first), then the run's
    lint: list = Factory(list)         # those of them lint() gives, printed as the spec loaded
    conventions: list = Factory(list)  # where the backend's framework differs
    nonfinite: list = Factory(list)    # [Nonfinite]: where each NaN or infinity was born
    numeric_seeds: dict = Factory(dict)  # {output: {input: seed or None}}, as the backend reported

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
    if experiment.expect is not None and experiment.expect.booleans:  # now their dtypes are known
        refuse_booleans(experiment.expect.booleans,
                        {name: np.asarray(value).dtype.name for name, value in values.items()})
    check_grad_ys(experiment, {name: np.shape(value) for name, value in values.items()})
    overridden, true = program.gradients("overridden"), program.gradients("true")
    numeric_grads = program.numeric(MAX_PROBES, DIRECTIONS) if numeric else None
    gradients, summary, notes = {}, {}, []
    for out, row in overridden.items():
        gradients[out], summary[out] = {}, {}
        for name, over in row.items():
            num = numeric_grads[out][name] if numeric_grads else None
            if num is None and numeric and experiment.unconnected == "zero" and over is not None:
                num = np.zeros_like(over)  # nothing depends on it: its finite difference is 0
            kind = program.numeric_kinds[out][name] if numeric else "skipped"  # what it did,
            seed = program.numeric_seeds[out][name] if numeric else None  # with which seed
            gradients[out][name] = GradientRow(over, true[out][name], num, kind)
            summary[out][name] = summarize(over, true[out][name], num, kind, seed)
            notes.append(directional_note(out, name, true[out][name], kind))
    result = Result(experiment, backend or experiment.backend, values, gradients, summary,
                    list(program.override_matches))
    result.numeric_seeds = {o: dict(row) for o, row in program.numeric_seeds.items()} if numeric else {}
    # The lint's warnings too (the CLI printed them on stderr as the spec loaded), so that
    # JSON, markdown, CSV and the report carry every warning, each once and placed.
    result.lint = [str(w) for w in lint(experiment)]
    unmatched = unmatched_at_run(experiment, [e for e, count in result.overrides if count == 0])
    result.warnings = [*result.lint, *unmatched, *program.warnings]
    result.nonfinite = locate_nonfinite(program, values, overridden, true)
    if experiment.train is not None:
        result.train = train(program, experiment, progress)
        if result.train.nonfinite is not None:
            result.nonfinite.append(result.train.nonfinite)
    if experiment.expect is not None:
        result.expect = check_expect(experiment.expect, result)
    # complete only after gradients and training
    result.conventions = [*program.conventions, *(n for n in notes if n is not None)]
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


def summarize(over, true, numeric, numeric_kind: str, seed: int | None) -> Summary:
    """cosine, max |diff|, norms and sign agreement of overridden vs true; `seed`: the one the
    backend reports its directional check drew its directions with (Program.numeric_seeds)."""
    if over is None or true is None:
        return Summary(None, None, _norm(over), _norm(true), None)
    o = np.asarray(over, dtype=np.float64).ravel()
    t = np.asarray(true, dtype=np.float64).ravel()
    no, nt = _norm(o), _norm(t)
    cosine = norms.cosine(o, t, (no, nt))
    with np.errstate(all="ignore"):
        diff = max_gap(o, t)
        agree = sign_agreement(o, t)
    summary = Summary(cosine, diff, no, nt, agree)
    if numeric is not None:
        reference = true
        if numeric_kind == "directional":  # of the finite elements: see directional_note
            reference = directional_projection(np.where(np.isfinite(t), t, 0.0).reshape(
                np.shape(true)), DIRECTIONS, seed)
        summary.numeric_max_abs_diff = max_gap(numeric, reference)
    return summary


def directional_note(out: str, name: str, true, numeric_kind: str):
    """The note of a directional check whose true gradient has NaN or infinite elements, which
    summarize leaves out of the projection it compares: one such element would make every
    element of the projection NaN, and numeric_max_abs_diff NaN, telling nothing. The numeric
    side lacks them too: a probe adds nothing for an output element that stays NaN or
    infinite (fd.difference), and those are where such gradient elements come from."""
    if numeric_kind != "directional" or true is None:
        return None
    t = np.asarray(true, dtype=np.float64)
    left = np.flatnonzero(~np.isfinite(t))
    if not left.size:
        return None
    some = "element" if left.size == 1 else f"{left.size} elements"
    return Convention("numeric", f"{out}/{name}: the directional numeric check compared the "
                      "projection of the true gradient's finite elements, leaving out its NaN "
                      f"or infinite {some}{where_text(name, left, t.shape)} (a probe sees no "
                      "slope in an output element that stays NaN or infinite)", out, name,
                      tuple(int(i) for i in left))


SHOWN = 8  # element indices a note's text names before it says how many more


def where_text(name: str, elements, shape: tuple) -> str:
    """" (at x[0], x[5])": a note's elements (flat, row-major) as numpy indexes them."""
    def index(i):
        return str(i) if len(shape) <= 1 else ", ".join(map(str, np.unravel_index(i, shape)))
    shown = ", ".join(f"{name}[{index(i)}]" for i in elements[:SHOWN])
    more = f" and {len(elements) - SHOWN} more" if len(elements) > SHOWN else ""
    return f" (at {shown}{more})"


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
    return None if value is None else norms.norm(value)


def check_expect(expect, result: Result) -> ExpectOutcome:
    """Compare every expected number with what the run produced, within the tolerance."""
    failures: list[str] = []

    def compare(label: str, expected, actual) -> None:
        if expected is None or actual is None:
            if expected is not actual and not (expected is None and actual is None):
                failures.append(f"{label}: expected {_show(expected)}, got {_show(actual)}")
            return
        missed = miss(expected, actual, expect.rtol, expect.atol)
        if missed is not None:
            failures.append(f"{label}: {missed}")

    if expect.finite:
        failures += [f"finite: {_nonfinite_text(n)}" for n in result.nonfinite]
        stopped = result.train.stopped if result.train is not None else None
        if stopped is not None and stopped.get("nonfinite") not in result.nonfinite:
            failures.append(f"finite: training stopped at step {stopped['step']}: "
                            f"{stopped['reason']}")
    for name, expected in expect.values.items():
        compare(f"values.{name}", expected, _value_of(name, result))
    for key, kind in (("gradients", "overridden"), ("true_gradients", "true")):
        for out, row in getattr(expect, key).items():
            for name, expected in row.items():
                got = getattr(result.gradients[out][name], kind)
                compare(f"{key}.{out}.{name}", expected, got)
    if expect.train_params or expect.train_loss is not None or expect.train_final:
        if result.train is None:
            failures.append("train: expected training results, but the spec has no train block")
        else:
            for name, expected in expect.train_params.items():
                compare(f"train.params.{name}", expected, result.train.final.get(name))
            if expect.train_loss is not None:
                compare("train.loss", expect.train_loss, result.train.loss)
            for quantity, expected in expect.train_final.items():
                metric, _, part = quantity.partition(".")
                got = (result.train.final_loss if quantity == "loss"
                       else result.train.final_metrics.get(metric, {}).get(part))
                if got is None:  # a test value without a test part (data.test: 0 or no data)
                    failures.append(f"train.final.{quantity}: expected {spelled(expected, '.6g')}, got none"
                                    + (" (the run has no test part)" if part == "test" else ""))
                else:
                    compare(f"train.final.{quantity}", expected, got)
    return ExpectOutcome(not failures, failures)


def _value_of(name: str, result: Result):
    """A let's or output's value as the run made it; an input's as the spec gave or drew it
    (the run's values hold no inputs; the backends were built from this same array)."""
    if name in result.values:
        return result.values[name]
    inputs = result.experiment.inputs
    return inputs[name].value if name in inputs else None


def _nonfinite_text(n) -> str:
    where = f" ({n.location})" if n.location else ""
    step = f" at step {n.step}" if n.step is not None else ""
    return (f"{n.phase} {n.tensor} is {KIND_TEXT[n.value]}{step}, born as {KIND_TEXT[n.born]} at "
            f"{n.expr or n.op}{where}")


def _show(value) -> str:
    if value is None:
        return "null (no gradient)"
    array = np.asarray(value)
    return array_text(array, precision=6, threshold=8) if array.ndim else spelled(array.item(), ".6g")
