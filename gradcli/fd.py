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


def central_differences(objective, base: np.ndarray, step: float) -> np.ndarray:
    """d objective / d base by central differences, one element at a time.

    The step is relative where |x| > 1 (step * max(1, |x|)), so large values
    are not probed below their own rounding error.
    """
    grad = np.zeros(base.shape)
    flat_base, flat_grad = base.reshape(-1), grad.reshape(-1)
    for i in range(flat_base.size):
        h = step * max(1.0, abs(flat_base[i]))
        probe = flat_base.copy()
        probe[i] += h
        up = objective(probe.reshape(base.shape))
        probe[i] -= 2 * h
        down = objective(probe.reshape(base.shape))
        flat_grad[i] = (up - down) / (2 * h)
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
