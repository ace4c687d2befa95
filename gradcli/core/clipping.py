"""Gradient clipping with TensorFlow's formulas, op for op, so the numbers match it.

clip_by_norm keeps TensorFlow's two-tap where (finite gradient at zero) and its
clamp of a negative clip_norm to 0;
clip_by_global_norm turns every output into NaN when the norm is not finite.
"""
from __future__ import annotations

import numpy as np

from ..errors import GraphError
from . import ops_array as A
from . import ops_math as M
from .graph import Tensor


def clip_by_value(t, clip_value_min, clip_value_max) -> Tensor:
    """Elementwise clip to [min, max] (tf.clip_by_value)."""
    return M.clip(t, clip_value_min, clip_value_max)


def clip_by_norm(t, clip_norm, axes=None) -> Tensor:
    """t * clip_norm / max(l2norm(t), clip_norm), with the norm over axes (tf.clip_by_norm).

    A negative clip_norm counts as 0 (zeros out), as in TensorFlow: a number is clamped
    here, a tensor by a maximum op.
    """
    values = M.convert(t)
    if np.isscalar(clip_norm):
        clip_norm = M.convert(0 if clip_norm <= 0 else clip_norm, like=values)  # -0.0 too, as TF
    else:
        clip_norm = M.maximum(M.convert(clip_norm, like=values), 0)
    l2sum = A.sum(M.mul(values, values), axis=axes, keepdims=True)
    pred = M.greater(l2sum, 0)
    l2sum_safe = M.where(pred, l2sum, M.ones_like(l2sum))
    l2norm = M.where(pred, M.sqrt(l2sum_safe), l2sum)
    intermediate = M.mul(values, clip_norm)
    if intermediate.shape != values.shape:
        raise GraphError(f"clip_norm of shape {clip_norm.shape} would broadcast a tensor of "
                         f"shape {values.shape}; give a scalar")
    return M.identity(M.div(intermediate, M.maximum(l2norm, clip_norm)))


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
