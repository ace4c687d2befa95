"""The data behind the curve figure: one input swept along x, the output's value and gradients.

One element of the input (by default the one whose overridden gradient is
largest in magnitude at the spec's own values: element 0 of a digits network's
first weights may multiply a pixel that is always 0) takes each value of the
sweep in turn; its other elements and the other inputs keep the spec's values.
The series are that element's gradients and the output's same element
(element 0 unless the output is shaped like the input; the spec's first output
unless --of names another), so the lower panel is the derivative of the upper
one: for an elementwise spec, f(x), f'(x) and the gradient used in its place.
(Setting every element to x instead, as before, drew a weight matrix's loss
with all its weights equal -- a flat or odd curve whose slope was the sum of
every element's derivative, not the one drawn.)
The spec is built once; each point replays it with a new input value (the
numpy core assigns a variable; eager frameworks build again).
Plain numpy arrays out: the plot only draws them.
"""
from __future__ import annotations

import numpy as np

from . import backends, render, runner
from .errors import GradcliError
from .fd import element_difference
from .record import record

POINTS = 401
MAX_POINTS = 100_000
WIDEN = 0.25  # the default range: the input's own min..max, widened by this share each side


@record(frozen=False)
class Curve:
    """Four series along one swept input: forward value, true, overridden and numeric derivative."""

    name: str             # the spec's name (the figure's title)
    backend: str
    output: str           # the output plotted ("y", or "y[0]", "y[0, 0]" for a tensor)
    input: str            # the input swept (its element `element` takes each x, the rest keep
                          # the spec's values)
    element: str          # "" for a scalar input, "[0]", "[0, 3]": the gradient's element plotted
    x: np.ndarray
    forward: np.ndarray
    true: np.ndarray | None        # None where the spec's gradient is None (not connected)
    overridden: np.ndarray | None
    numeric: np.ndarray
    chosen: str = ""      # why that element: "" when asked for (--element), else the rule's words
    batch: str = ""       # a data spec's "on the first training batch (8 rows of X), before
                          # training" (render.batch_note: the run tables' words), else ""


LARGEST = "the largest |overridden gradient| at the spec's values"


def parse_range(text: str) -> tuple[float, float]:
    """'-3:3' -> (-3.0, 3.0); a clear error for anything else."""
    parts = text.split(":")
    try:
        lo, hi = (float(p) for p in parts) if len(parts) == 2 else (None, None)
    except ValueError:
        lo = hi = None
    if lo is None or not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise GradcliError(f"--range must be LOW:HIGH with finite LOW < HIGH (e.g. -3:3), not {text!r}")
    return lo, hi


def parse_element(text: str) -> tuple[int, ...]:
    """'3' -> (3,), '0,5' or '[0, 5]' -> (0, 5); a clear error for anything else (the shape is
    checked when the input is known)."""
    inner = text.strip().removeprefix("[").removesuffix("]")
    try:
        index = tuple(int(part) for part in inner.split(","))
    except ValueError:
        index = ()
    if not index or any(i < 0 for i in index):
        raise GradcliError(f"--element must be an index of the input, one non-negative integer "
                           f"per dimension (e.g. 3, or 0,5 for a matrix), not {text!r}")
    return index


def check_element(name: str, shape: tuple, index: tuple) -> tuple:
    """index, if it names an element of input `name` (of that shape); else a clear error."""
    shown = ",".join(map(str, index))
    if not shape:
        raise GradcliError(f"--element {shown}: input {name!r} is a scalar, it has no elements "
                           "to choose from; leave --element out")
    if len(index) != len(shape) or any(i >= n for i, n in zip(index, shape)):
        bounds = ",".join(f"0..{n - 1}" for n in shape)
        raise GradcliError(f"--element {shown} is not an element of input {name!r}, of shape "
                           f"{tuple(shape)}: give {len(shape)} ind{'ex' if len(shape) == 1 else 'ices'} "
                           f"within {bounds}")
    return index


def largest_element(gradient, shape: tuple) -> tuple:
    """The index of the largest |gradient| (the first of ties; NaN never wins); element 0 when
    there is no gradient (unconnected) or no finite one."""
    if gradient is None or not shape:
        return (0,) * len(shape)
    size = np.abs(np.asarray(gradient, dtype=np.float64)).ravel()
    size = np.where(np.isnan(size), -1.0, size)
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(size)), shape))


def default_range(value) -> tuple[float, float]:
    """The input's own finite min and max, widened so both ends of the interesting part show."""
    finite = np.asarray(value, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    if finite.size == 0:
        return -3.0, 3.0
    lo, hi = float(finite.min()), float(finite.max())
    span = hi - lo if hi > lo else max(1.0, abs(lo))
    low, high = lo - WIDEN * span, hi + WIDEN * span
    if np.isfinite(low) and np.isfinite(high):
        return low, high
    # an input near float64's largest (1.7e308, or -1e308 and 1e308): widened in halves and
    # kept inside float64's range, where the ends were inf and every x of the curve NaN
    biggest, half = float(np.finfo(np.float64).max), hi / 2 - lo / 2 if hi > lo else span / 2
    return max(lo - 2 * WIDEN * half, -biggest), min(hi + 2 * WIDEN * half, biggest)


def sweepable(experiment, name: str) -> str | None:
    """Why input name cannot be swept, or None when it can."""
    spec = experiment.inputs.get(name)
    if spec is None:
        return f"the spec has no input {name!r} (inputs: {', '.join(experiment.inputs) or 'none'})"
    if np.asarray(spec.value).dtype.kind != "f":
        return f"input {name!r} is not a float tensor; only a float input can be swept"
    data = getattr(experiment, "data", None)
    if data is not None and name in (data.features, data.labels):
        part = "features" if name == data.features else "labels"
        return (f"input {name!r} is the data's {part} ({data.source}), fed batch by batch and never "
                "trained, so the spec computes no gradient for it; plot one of the inputs in wrt "
                f"({', '.join(experiment.wrt)})")
    if name not in experiment.wrt:
        return f"input {name!r} is not in wrt, so the spec computes no gradient for it"
    if np.size(spec.value) == 0:
        return f"input {name!r} is empty"
    return None


def output_named(experiment, name: str | None) -> str:
    """The output drawn: `name` (--of), or the spec's first output; a clear error naming the
    outputs for any other name."""
    names = [o.name for o in experiment.outputs]
    if name is None:
        return names[0]
    if name in names:
        return name
    from .errors import did_you_mean
    hint = did_you_mean(name, names)
    raise GradcliError(f"--of {name}: the spec has no output {name!r} (outputs: {', '.join(names)})"
                       + (f"; {hint}" if hint else ""))


def first_input(experiment) -> str:
    """The input swept when none is named: the first one that can be."""
    for name in experiment.inputs:
        if sweepable(experiment, name) is None:
            return name
    raise GradcliError("the spec has no float input in wrt to sweep; name one with --input")


def elementwise_inputs(result) -> list[str]:
    """The inputs a curve figure suits: float inputs in wrt that the first output's gradient
    reaches, shaped like the output (elementwise) or feeding a scalar output."""
    exp = result.experiment
    out = exp.outputs[0].name
    shape = np.shape(result.values.get(out))
    row = result.gradients.get(out, {})
    return [n for n in exp.inputs if sweepable(exp, n) is None and row.get(n) is not None
            and row[n].overridden is not None
            and (shape == () or shape == np.shape(exp.inputs[n].value))]


def sweep(experiment, name: str, *, backend: str | None = None, span: tuple | None = None,
          points: int = POINTS, program=None, max_memory: int | None = None,
          element: tuple | None = None, output: str | None = None) -> Curve:
    """Replay the spec at every point of the sweep; program reuses an already built one.
    `element`: the input's element whose gradients are drawn (default: the largest
    |overridden gradient| at the spec's own values); `output`: the output drawn (default:
    the spec's first).

    The build and every replay run under the same memory budget as runner.run.
    """
    with runner.budget(max_memory):
        return _sweep(experiment, name, backend, span, points, program, element, output)


def _sweep(experiment, name, backend, span, points, program, element, output) -> Curve:
    out = output_named(experiment, output)
    problem = sweepable(experiment, name)
    if problem:
        raise GradcliError(problem)
    if not 2 <= points <= MAX_POINTS:
        raise GradcliError(f"--points must be between 2 and {MAX_POINTS}, not {points}")
    base = np.asarray(experiment.inputs[name].value)
    if element is not None:
        check_element(name, base.shape, element)
    program = program or backends.build(experiment, backend)
    chosen = ""
    if element is None:
        chosen = LARGEST if base.ndim else ""
        element = largest_element(program.gradients_at({name: base}, out, name)[0], base.shape)
    lo, hi = span or default_range(base)
    with np.errstate(over="ignore"):  # -1.7e308:1.7e308 spans more than float64's max
        wide = not np.isfinite(hi - lo)
    # in halves then (2 * (v / 2) is v): linspace's step overflowed to nan values
    xs = 2.0 * np.linspace(lo / 2, hi / 2, points) if wide else np.linspace(lo, hi, points)
    weights = experiment.grad_ys.get(out)
    weights = 1.0 if weights is None else np.asarray(weights, dtype=np.float64)
    step = 1e-6 if base.dtype == np.float64 else 1e-3  # as the runner's numeric gradients

    def objective(value) -> list:  # the gradients are of sum(grad_ys * output): its elements
        return [weights * np.asarray(program.output_at({name: value}, out), dtype=np.float64)]

    forward, overridden, true, numeric, at = [], [], [], [], ()
    flat = int(np.ravel_multi_index(element, base.shape)) if base.ndim else 0
    with np.errstate(all="ignore"):
        for t in xs:
            value = base.copy()
            value[element] = t  # one element moves: the others keep the spec's values
            y = np.asarray(program.output_at({name: value}, out))
            at = element if y.shape == base.shape else (0,) * y.ndim  # elementwise: the same one
            forward.append(_element(y, at))
            over, tru = program.gradients_at({name: value}, out, name)
            overridden.append(_element(over, element))
            true.append(_element(tru, element))
            numeric.append(element_difference(objective, value, flat, value[element] + step,
                                              value[element] - step, base.dtype) / (2 * step))
    return Curve(experiment.name, backend or experiment.backend, f"{out}{_index_text(at)}", name,
                 _index_text(element), xs, np.array(forward), _series(true), _series(overridden),
                 np.array(numeric), chosen, render.batch_note(experiment))


def _index_text(index: tuple) -> str:
    """An element's index in full: "" for a scalar, "[3]", "[0, 5]" for a matrix."""
    return "" if not index else "[" + ", ".join(map(str, index)) + "]"


def _element(value, index: tuple) -> float | None:
    return None if value is None else float(np.asarray(value, dtype=np.float64)[index])


def _series(values: list) -> np.ndarray | None:
    return None if all(v is None for v in values) else np.array(values, dtype=np.float64)
