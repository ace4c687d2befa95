"""Gradient clipping with TensorFlow's formulas, op for op, so the numbers match it.

clip_by_norm is the op table's formula, TensorFlow's two-tap where (finite gradient at
zero) and its clamp of a negative clip_norm to 0 included;
clip_by_global_norm turns every output into NaN when the norm is not finite.
"""
from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..ops import OPS
from . import ops_array as A
from . import ops_math as M
from .graph import Tensor


def clip_by_value(t, clip_value_min, clip_value_max) -> Tensor:
    """Elementwise clip to [min, max] (tf.clip_by_value)."""
    return M.clip(t, clip_value_min, clip_value_max)


def clip_by_norm(t, clip_norm, axes=None) -> Tensor:
    """t * clip_norm / max(l2norm(t), clip_norm), with the norm over axes (tf.clip_by_norm).

    Built by the op table's formula (gradcli/ops/table.py), the one copy of TensorFlow's,
    which the spec language's clip_by_norm builds on every backend. A negative clip_norm
    counts as 0: a number is clamped here, as TF does in Python (-0.0 stays -0.0 there too),
    a tensor by the formula's maximum op.
    """
    values = M.convert(t)
    if np.isscalar(clip_norm) and clip_norm < 0:
        clip_norm = 0
    clip_norm = M.convert(clip_norm, like=values)
    if clip_norm.dtype.kind in "iu" and values.dtype.kind == "f":
        # TF casts a tensor clip_norm to t's dtype: an integer one would mix dtypes in the formula
        clip_norm = M.cast(clip_norm, values.dtype)
    try:
        fits = np.broadcast_shapes(values.shape, clip_norm.shape) == values.shape
    except ValueError:
        fits = False
    if not fits:
        raise GraphError(f"clip_norm of shape {clip_norm.shape} would broadcast a tensor of "
                         f"shape {values.shape}; give a scalar")
    return OPS["clip_by_norm"].formula(_CORE, values, clip_norm, axes=axes)


class _Core:
    """The core's builders as a formula's `o`: o.mul is ops_math.mul, o.sum ops_array.sum."""

    __slots__ = ()

    def __getattr__(self, name: str):
        builder = getattr(M, name, None)
        return builder if builder is not None else getattr(A, name)


_CORE = _Core()


def global_norm(t_list) -> Tensor:
    """sqrt(sum of squared l2 norms) of the non-None tensors (tf.global_norm)."""
    tensors = [M.convert(t) for t in t_list if t is not None]
    if not tensors:
        raise GraphError("global_norm() needs at least one tensor that is not None")
    half_squared = [M.mul(A.sum(M.mul(t, t)), 0.5) for t in tensors]  # tf.nn.l2_loss
    half_squared_norm = A.sum(A.stack(half_squared))
    return M.sqrt(M.mul(half_squared_norm, 2.0))


def clip_by_global_norm(t_list, clip_norm, use_norm=None) -> tuple[list, Tensor]:
    """(each t * clip_norm / max(global_norm, clip_norm), global_norm); None entries pass."""
    t_list = list(t_list)
    like = next((t for t in t_list if isinstance(t, Tensor)), None)  # a number takes its dtype
    use_norm = global_norm(t_list) if use_norm is None else M.convert(use_norm, like=like)
    clip_norm = M.convert(clip_norm, like=use_norm)
    one = M.constant(np.ones((), dtype=use_norm.dtype))
    scale_for_finite = M.mul(clip_norm, M.minimum(M.div(1.0, use_norm), M.div(one, clip_norm)))
    scale = M.add(scale_for_finite, M.sub(use_norm, use_norm))  # NaN unless the norm is finite
    clipped = [None if t is None else M.identity(M.mul(M.convert(t), scale)) for t in t_list]
    return clipped, use_norm
