"""Finite-difference helpers shared by the core and every backend: numpy only.

Directional checks probe a large tensor along seeded random directions; the
least-norm gradient consistent with those slopes is the true gradient's
projection onto their span, so both sides can be compared element by element.
"""
from __future__ import annotations

import numpy as np


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
