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
        with np.errstate(invalid="ignore", over="ignore"):  # an inf or NaN element: NaN probes
            up = float(np.asarray(flat_base[i] + h, dtype=dtype))
            down = float(np.asarray(flat_base[i] - h, dtype=dtype))
        flat_grad[i] = element_difference(objective, base, i, up, down, dtype) / (up - down)
    return grad


def element_difference(objective, base: np.ndarray, i: int, up: float, down: float,
                       dtype) -> float:
    """difference() of the probes that set base's flat element i to up and to down.

    Where that is unknown (no element moved while some element stayed NaN or infinite), a
    few far moves of element i tell its own output elements from the stuck ones: when they
    change some finite element and leave every stuck one as it was, element i feeds only
    finite elements, which are locally flat (sign(x[1]) beside y[0] = sqrt(-1)), and its
    slope is theirs, 0. When they change a stuck element (x[0] of sqrt(x) at -1: sqrt(1) at
    x[0] = 1), or change nothing at all (a NaN sum), it stays NaN.
    """
    probe = base.reshape(-1).copy()
    probe[i] = up
    high = objective(probe.reshape(base.shape))
    probe[i] = down
    low = objective(probe.reshape(base.shape))
    total, stuck = _differences(high, low)
    if stuck is None:
        return total
    return 0.0 if _feeds_only_finite(objective, probe, base, i, high, stuck, dtype) else math.nan


def difference(high: list, low: list) -> float:
    """sum(high) - sum(low), for the weighted output elements of two probes (one array per
    output).

    Where both sums are finite (then every element is), it is the difference of the sums, as
    it always was (the same bits). Otherwise each element is differenced on its own and the
    differences summed: an element that is NaN in both probes, or the same infinity, does
    not move with the probe and gives no slope, so it adds 0 -- y[0] = sqrt(-1) leaves the
    derivative with respect to x[1] alone. When no element moved at all and some element was
    NaN or infinite in both probes, the probe may feed only those (x[0] of sqrt(x) at
    x[0] = -1): the slope is unknown, NaN, not a 0 that would call the output flat there
    (element_difference looks further, for one element's probes). An element finite in one
    probe and not in the other gives its own inf or NaN.
    """
    total, stuck = _differences(high, low)
    return math.nan if stuck is not None else total


def _differences(high: list, low: list) -> tuple[float, list | None]:
    """(the summed differences, None), or (0.0, per output the mask of its non-finite elements
    that stayed as they were) when no element moved and some such element is there."""
    top, bottom = sum(float(np.sum(a)) for a in high), sum(float(np.sum(a)) for a in low)
    if math.isfinite(top) and math.isfinite(bottom):
        return top - bottom, None
    total, moved, masks = 0.0, False, []
    with np.errstate(all="ignore"):
        for a, b in zip(high, low):
            a, b = _flat(a), _flat(b)
            still = _same(a, b)
            moved = moved or not still.all()
            masks.append(still & ~np.isfinite(a))
            total += float(np.sum(np.where(still, 0.0, a - b)))
    return (total, None) if moved or not any(m.any() for m in masks) else (total, masks)


def _flat(a) -> np.ndarray:
    return np.ravel(np.asarray(a, dtype=np.float64))


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a == b) | (np.isnan(a) & np.isnan(b))


def _feeds_only_finite(objective, probe: np.ndarray, base: np.ndarray, i: int, at: list,
                       stuck: list, dtype) -> bool:
    """Whether far moves of flat element i change some finite output element and no stuck
    one (`at`: the outputs at one near probe; `stuck`: their masks from _differences)."""
    if all(m.all() for m in stuck):  # no finite element it could feed
        return False
    reached = False
    with np.errstate(all="ignore"):
        for far in _far_values(float(base.reshape(-1)[i]), dtype):
            probe[i] = far
            for a, b, mask in zip(objective(probe.reshape(base.shape)), at, stuck):
                changed = ~_same(_flat(a), b)
                if (changed & mask).any():
                    return False
                reached = reached or bool(changed.any())
    return reached


def _far_values(x: float, dtype) -> list[float]:
    """Values far from x, in the dtype: its negation and 0 (a step's or a domain's edge), and
    steps of one and a thousand times max(|x|, 1) either way."""
    scale = max(abs(x), 1.0) if math.isfinite(x) else 1.0
    wanted = [-x, 0.0, x + scale, x - scale, x + 1e3 * scale, x - 1e3 * scale]
    with np.errstate(all="ignore"):
        cast = [float(np.asarray(v, dtype=dtype)) for v in wanted]
    return [v for k, v in enumerate(cast) if math.isfinite(v) and v != x and v not in cast[:k]]


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
