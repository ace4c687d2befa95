"""Finite-difference helpers shared by the core and every backend: numpy only.

Directional checks probe a large tensor along seeded random directions; the
least-norm gradient consistent with those slopes is the true gradient's
projection onto their span, so both sides can be compared element by element.

An objective returns the weighted output elements of one probe (grad_ys * y, one float64
array per output), not their sum: difference() subtracts them element by element when a
sum is not finite, so that a NaN in one element (y[0] = sqrt(-1)) does not become the
derivative of every other one.
"""
from __future__ import annotations

import math

import numpy as np


def probe_kind(size: int, max_probes: int) -> str:
    """How a tensor of `size` elements is probed: "full" (one central difference per element)
    or "directional" (more elements than max_probes: seeded random directions)."""
    return "full" if size <= max_probes else "directional"


# Below this magnitude the step stops shrinking with |x|: at x = 0 a relative step would be
# zero, and a smaller one would drown the slope in the objective's own rounding.
STEP_FLOOR = 1e-3


def default_step(dtype) -> float:
    """eps ** (1/3) of the dtype: the relative step that balances a central difference's
    truncation error against rounding (about 6e-6 for float64, 5e-3 for float32)."""
    return float(np.finfo(np.dtype(dtype)).eps) ** (1.0 / 3.0)


def estimate(objective, base: np.ndarray, dtype, kind: str, directions: int, seed: int,
             step: float | None = None) -> np.ndarray:
    """d objective / d base by central differences: one per element ("full"), or along seeded
    random directions as the least-norm gradient consistent with them ("directional").
    objective(value) returns the weighted output elements at value (see difference()).

    The step is relative, h = step * max(|x|, STEP_FLOOR) (for a direction, |x| is the root
    mean square of the tensor's finite elements), so x = 0.001 is probed at 0.001 +- 5e-6 in
    float32, not across zero, and large values are not probed below their own rounding error.
    """
    step = default_step(dtype) if step is None else step
    if kind == "full":
        return central_differences(objective, base, dtype, step)
    finite = base[np.isfinite(base)]  # a NaN or inf element would make every probe's step NaN
    scale = float(np.sqrt(np.mean(np.square(finite)))) if finite.size else 0.0
    h = step * max(scale, STEP_FLOOR)
    basis = random_directions(base.shape, directions, seed)
    slopes = np.array([difference(objective(base + h * d), objective(base - h * d)) / (2 * h)
                       for d in basis])
    return least_norm(basis, slopes)


def central_differences(objective, base: np.ndarray, dtype, step: float) -> np.ndarray:
    """d objective / d base by central differences, one element at a time, with the relative
    step of estimate(); the difference is divided by the distance the dtype's rounding of the
    two probes really left between them."""
    grad = np.zeros(base.shape)
    flat_base, flat_grad = base.reshape(-1), grad.reshape(-1)
    for i in range(flat_base.size):
        h = step * max(abs(flat_base[i]), STEP_FLOOR)
        up = float(np.asarray(flat_base[i] + h, dtype=dtype))
        down = float(np.asarray(flat_base[i] - h, dtype=dtype))
        probe = flat_base.copy()
        probe[i] = up
        high = objective(probe.reshape(base.shape))
        probe[i] = down
        low = objective(probe.reshape(base.shape))
        flat_grad[i] = difference(high, low) / (up - down)
    return grad


def difference(high: list, low: list) -> float:
    """sum(high) - sum(low), for the weighted output elements of two probes (one array per
    output).

    Where both sums are finite (then every element is), it is the difference of the sums, as
    it always was (the same bits). Otherwise each element is differenced on its own and the
    differences summed: an element that is NaN in both probes, or the same infinity, does
    not move with the probe and gives no slope, so it adds 0 -- y[0] = sqrt(-1) leaves the
    derivative with respect to x[1] alone. When no element moved at all and some element was
    NaN or infinite in both probes, the probe may feed only those (x[0] of sqrt(x) at
    x[0] = -1): the slope is unknown, NaN, not a 0 that would call the output flat there.
    An element finite in one probe and not in the other gives its own inf or NaN.
    """
    top, bottom = sum(float(np.sum(a)) for a in high), sum(float(np.sum(a)) for a in low)
    if math.isfinite(top) and math.isfinite(bottom):
        return top - bottom
    total, moved, stuck = 0.0, False, False
    with np.errstate(all="ignore"):
        for a, b in zip(high, low):
            a, b = np.ravel(np.asarray(a, dtype=np.float64)), np.ravel(np.asarray(b, dtype=np.float64))
            still = (a == b) | (np.isnan(a) & np.isnan(b))
            moved = moved or not still.all()
            stuck = stuck or not np.isfinite(a[still]).all()
            total += float(np.sum(np.where(still, 0.0, a - b)))
    return total if moved or not stuck else math.nan


def random_directions(shape: tuple, count: int, seed: int) -> np.ndarray:
    """count seeded unit directions in the space of a tensor of this shape."""
    basis = np.random.default_rng(seed).standard_normal((count, *shape))
    norms = np.sqrt(np.sum(basis.reshape(count, -1) ** 2, axis=1))
    return basis / norms.reshape((count,) + (1,) * len(shape))


def least_norm(basis: np.ndarray, slopes: np.ndarray) -> np.ndarray:
    """The smallest gradient whose derivatives along basis are slopes."""
    flat = basis.reshape(len(basis), -1)
    coeffs = np.linalg.lstsq(flat @ flat.T, slopes, rcond=None)[0]
    return (coeffs @ flat).reshape(basis.shape[1:])


def directional_projection(gradient, directions: int = 16, seed: int = 0) -> np.ndarray:
    """An analytic gradient projected onto the span a directional check probed."""
    basis = random_directions(np.shape(gradient), directions, seed)
    slopes = basis.reshape(len(basis), -1) @ np.asarray(gradient, dtype=np.float64).reshape(-1)
    return least_norm(basis, slopes)
