"""Finite-difference helpers shared by the core and every backend: numpy only.

Directional checks probe a large tensor along seeded random directions; the
least-norm gradient consistent with those slopes is the true gradient's
projection onto their span, so both sides can be compared element by element.
"""
from __future__ import annotations

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

    The step is relative, h = step * max(|x|, STEP_FLOOR) (for a direction, |x| is the
    tensor's root mean square), so x = 0.001 is probed at 0.001 +- 5e-6 in float32, not
    across zero, and large values are not probed below their own rounding error.
    """
    step = default_step(dtype) if step is None else step
    if kind == "full":
        return central_differences(objective, base, dtype, step)
    scale = float(np.sqrt(np.mean(np.square(base)))) if base.size else 0.0
    h = step * max(scale, STEP_FLOOR)
    basis = random_directions(base.shape, directions, seed)
    slopes = np.array([(objective(base + h * d) - objective(base - h * d)) / (2 * h)
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
        flat_grad[i] = (high - low) / (up - down)
    return grad


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
