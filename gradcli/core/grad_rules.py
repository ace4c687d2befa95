"""Each op type's own gradient rule: rule(op, *output_grads) -> one gradient per input.

Rules build graph ops, so gradients of gradients work. Broadcasting is undone
by the backward walk, not here; `None` means no gradient through that input.
A rule of an op with several inputs builds only the gradients the walk asks for
(`needed(op)`, one flag per input; `_each` does it): the walk would drop the others.
"""
from __future__ import annotations

import numpy as np

from ..ops import OPS
from . import ops_array as A
from . import ops_math as M
from .registry import defgrad, needed


def _x(op, i=0):
    return op.inputs[i]


def _y(op, i=0):
    return op.outputs[i] if i else op.output


def _each(op, *builders):
    """One gradient per input: builders[i]() where the walk needs input i's, None elsewhere."""
    return tuple([build() if need else None for build, need in zip(builders, needed(op))])


def _none(op, *grads):
    return (None,) * len(op.inputs)


def _kept_shape(x, axis) -> tuple:
    axes = range(x.ndim) if axis is None else axis
    return tuple(1 if i in axes else n for i, n in enumerate(x.shape))


def _unreduce(op, t):
    """Broadcast a reduced tensor (gradient or output) back to the input's shape."""
    x, axis = op.inputs[0], op.attrs["axis"]
    if not op.attrs["keepdims"]:
        t = A.reshape(t, _kept_shape(x, axis))
    return A.broadcast_to(t, x.shape)


def _count(op) -> int:
    x, axis = op.inputs[0], op.attrs["axis"]
    return x.size if axis is None else int(np.prod([x.shape[a] for a in axis]))


def _extremum_grad(op, g):
    # TensorFlow shares the gradient equally among tied extrema.
    x = op.inputs[0]
    hits = M.cast(M.equal(x, _unreduce(op, op.output)), x.dtype)
    counts = A.sum(hits, axis=op.attrs["axis"], keepdims=True)
    return M.div(M.mul(hits, _unreduce(op, g)), A.broadcast_to(counts, x.shape))


def _prod_grad(op, g):
    x, axis = op.inputs[0], op.attrs["axis"]
    if axis is None or len(axis) == 1:
        others = A.prod_others(x, None if axis is None else axis[0])
    else:
        # As tf.reduce_prod's gradient: the reduced axes moved last and merged into one.
        reduced = sorted(a % x.ndim for a in axis)
        perm = [i for i in range(x.ndim) if i not in reduced] + reduced
        moved = A.transpose(x, perm)
        merged = A.reshape(moved, moved.shape[:x.ndim - len(reduced)] + (-1,))
        others = A.transpose(A.reshape(A.prod_others(merged, -1), moved.shape), np.argsort(perm))
    return M.mul(_unreduce(op, g), others)


def _prod_others_grad(op, g):
    x, axis = op.inputs[0], op.attrs["axis"]
    if axis is None:
        return A.reshape(_prod_others_grad_last(A.reshape(x, (-1,)), A.reshape(g, (-1,))), x.shape)
    perm = [i for i in range(x.ndim) if i != axis % x.ndim] + [axis % x.ndim]
    out = _prod_others_grad_last(A.transpose(x, perm), A.transpose(g, perm))
    return A.transpose(out, np.argsort(perm))


def _prod_others_grad_last(x, g):
    # d/dx_k sum_i g_i prod_{j != i} x_j = sum_{i != k} g_i prod_{j != i, k} x_j: in row k of z,
    # x_k is set to 1, so the product of the others there leaves x_k out; the i = k term is
    # removed after. Built from ops that have rules, so every further order works, zeros too.
    n, lead = x.shape[-1], x.shape[:-1]
    rows = A.broadcast_to(A.reshape(x, lead + (1, n)), lead + (n, n))
    z = M.where(M.constant(np.eye(n, dtype=bool)), M.ones_like(rows), rows)
    weighted = A.sum(M.mul(A.prod_others(z, -1), A.reshape(g, lead + (1, n))), axis=-1)
    return M.sub(weighted, M.mul(g, A.prod_others(x, -1)))


def _matmul_grad(op, g):
    a, b = op.inputs
    need_a, need_b = needed(op)
    if a.ndim == 1 and b.ndim == 1:
        return _each(op, lambda: M.mul(g, b), lambda: M.mul(g, a))
    a2 = A.reshape(a, (1,) + a.shape) if a.ndim == 1 else a
    b2 = A.reshape(b, b.shape + (1,)) if b.ndim == 1 else b
    g2 = g
    if a.ndim == 1:
        g2 = A.reshape(g2, g2.shape[:-1] + (1,) + g2.shape[-1:]) if b.ndim > 1 else g2
    if b.ndim == 1:
        g2 = A.reshape(g2, g2.shape + (1,))
    ga = M.matmul(g2, _swap_last(b2)) if need_a else None
    gb = M.matmul(_swap_last(a2), g2) if need_b else None
    if a.ndim == 1 and need_a:
        ga = A.reshape(A.sum_to(ga, (1,) + a.shape) if ga.ndim > 2 else ga, a.shape)
    if b.ndim == 1 and need_b:
        gb = A.reshape(A.sum_to(gb, b.shape + (1,)) if gb.ndim > 2 else gb, b.shape)
    return ga, gb


def _swap_last(t):
    axes = list(range(t.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return A.transpose(t, axes)


def _pow_grad(op, g):
    # TensorFlow's _PowGrad, its products in its order: (g * p) * x^(p-1) and (g * z) * log(x)
    x, p = op.inputs

    def gp():
        safe_log = M.where(M.greater(x, 0), M.log(M.where(M.greater(x, 0), x, M.ones_like(x))),
                           M.zeros_like(x))
        return M.mul(M.mul(g, op.output), safe_log)
    return _each(op, lambda: M.mul(M.mul(g, p), M.pow(x, M.sub(p, 1))), gp)


def _split_grad(op, g, join):
    axis, need = op.attrs["axis"], needed(op)
    if join == "stack":
        return tuple(A.getitem(g, (slice(None),) * (axis % g.ndim) + (i,)) if need[i] else None
                     for i in range(len(op.inputs)))
    axis = axis % g.ndim
    bounds = np.cumsum([0] + [t.shape[axis] for t in op.inputs])
    return tuple(A.getitem(g, (slice(None),) * axis + (slice(int(lo), int(hi)),)) if n else None
                 for lo, hi, n in zip(bounds[:-1], bounds[1:], need))


def _clip_grad(op, g):
    # As TensorFlow differentiates clip_by_value = maximum(minimum(x, hi), lo): ties go to x,
    # a NaN x sends its gradient to lo, and where lo > hi everything goes to lo.
    x, lo, hi = op.inputs
    need_x, need_lo, need_hi = needed(op)
    to_min, to_lo = _select(M.greater_equal(M.minimum(x, hi), lo), g, need_x or need_hi, need_lo)
    if not (need_x or need_hi):
        return None, to_lo, None
    to_x, to_hi = _select(M.less_equal(x, hi), to_min, need_x, need_hi)
    return to_x, to_lo, to_hi


def _logsumexp_grad(op, g):
    # TensorFlow's reduce_logsumexp differentiated: dy / sum(exp(x - m)) * exp(x - m), m the
    # finite max. exp(x - y) alone would round y = m + log(sum) and lose the log (2 at 1e308).
    x, axis = op.inputs[0], op.attrs["axis"]
    peak = A.max(x, axis=axis, keepdims=True)
    peak = M.where(M.less(M.abs(peak), np.inf), peak, M.zero(peak))
    shifted = M.exp(M.sub(x, A.broadcast_to(peak, x.shape)))
    total = A.sum(shifted, axis=axis, keepdims=True)
    g = g if op.attrs["keepdims"] else A.reshape(g, _kept_shape(x, axis))
    return M.mul(A.broadcast_to(M.mul(g, M.reciprocal(total)), x.shape), shifted)


def _zero_out_grad(op, g, _index_grad):
    # The seeds' _zero_out_grad: the first element of dy lands on the first input element.
    first = A.getitem(A.reshape(g, (-1,)), 0)
    return A.getitem_grad(first, op.inputs[0], (0,) * op.inputs[0].ndim)


def _max_with_argmax_grad(op, g, _index_grad):
    x, axis = op.inputs[0], op.attrs["axis"]
    if x.ndim == 0:  # a 0-d tensor is its own maximum
        return g
    mask = M.cast(M.equal(A.reshape(op.outputs[1], _kept_shape(x, (axis,))),
                          M.constant(np.expand_dims(np.arange(x.shape[axis]),
                                                    tuple(i for i in range(x.ndim) if i != axis)),
                                     dtype=np.int64)), x.dtype)
    return M.mul(mask, A.broadcast_to(A.reshape(g, _kept_shape(x, (axis,))), x.shape))


# ----- elementwise, one input -----
defgrad("neg", lambda op, g: M.neg(g))
defgrad("abs", lambda op, g: M.mul(g, M.sign(_x(op))))
defgrad("exp", lambda op, g: M.mul(g, _y(op)))
defgrad("log", lambda op, g: M.div(g, _x(op)))
defgrad("sqrt", lambda op, g: M.sqrt_grad(_y(op), g))
defgrad("square", lambda op, g: M.mul(g, M.mul(_x(op), 2)))
defgrad("sin", lambda op, g: M.mul(g, M.cos(_x(op))))
defgrad("cos", lambda op, g: M.neg(M.mul(g, M.sin(_x(op)))))
# W1's hot rule: no _y frame, and the op is its own output unless it has several (an override
# can give tanh's rule to such an op): no call of the `output` property
defgrad("tanh", lambda op, g: M.tanh_grad(op.output if op.multi else op, g))
defgrad("sigmoid", lambda op, g: M.sigmoid_grad(op.output, g))
defgrad("relu", lambda op, g: M.where(M.greater(_y(op), 0), g, M.zero(g)))
defgrad("softplus", lambda op, g: M.mul(g, M.sigmoid(_x(op))))
defgrad("reciprocal", lambda op, g: M.reciprocal_grad(_y(op), g))
defgrad("cast", lambda op, g: M.cast(g, _x(op).dtype) if _x(op).dtype.kind == "f" else None)



# ----- grown on the table: TensorFlow's gradient of each, in its order -----
_TWO_OVER_ROOT_PI = 2 / np.sqrt(np.pi)
_SQRT_HALF_F32 = float(np.float32(0.7071067811865476))
defgrad("log1p", lambda op, g: M.mul(g, M.reciprocal(M.add(1.0, _x(op)))))
defgrad("expm1", lambda op, g: M.mul(g, M.exp(_x(op))))
defgrad("erf", lambda op, g: M.mul(M.mul(g, _TWO_OVER_ROOT_PI), M.exp(M.neg(M.square(_x(op))))))
defgrad("erfc", lambda op, g: M.mul(M.mul(g, -_TWO_OVER_ROOT_PI), M.exp(M.neg(M.square(_x(op))))))
defgrad("atan", lambda op, g: M.mul(g, M.reciprocal(M.add(1.0, M.square(_x(op))))))
defgrad("asinh", lambda op, g: M.div(g, M.mul(M.add(M.exp(_y(op)), M.exp(M.neg(_y(op)))), 0.5)))
defgrad("sinh", lambda op, g: M.mul(g, M.cosh(_x(op))))
defgrad("cosh", lambda op, g: M.mul(g, M.sinh(_x(op))))
defgrad("softsign", lambda op, g: M.div(g, M.square(M.add(M.abs(_x(op)), 1.0))))
defgrad("leaky_relu", lambda op, g: M.where(M.greater(_x(op), 0), g,
                                            M.mul(g, float(np.float32(op.attrs["alpha"])))))
defgrad("elu", lambda op, g: M.where(M.less(_y(op), 0), M.mul(M.add(_y(op), 1.0), g), g))
defgrad("relu6", lambda op, g: _inside(_x(op), 0, 6, g))
defgrad("silu", lambda op, g: _silu_grad(_x(op), g))
defgrad("gelu", lambda op, g: _gelu_grad(_x(op), g))
defgrad("hard_sigmoid", lambda op, g: _inside(M.add(_x(op), 3.0), 0, 6, M.div(g, 6.0)))


def _zeros(op, g):
    return M.zeros_like(_x(op))


def _inside(x, lo, hi, g):
    # TensorFlow's Relu6Grad: dy strictly between the kinks, 0 at them (and at NaN)
    return M.where(M.logical_and(M.greater(x, lo), M.less(x, hi)), g, M.zero(g))


def _silu_grad(x, g):
    # tf.nn.silu's own gradient: sigmoid(x) * (1 + x * (1 - sigmoid(x)))
    s = M.sigmoid(x)
    return M.mul(g, M.mul(s, M.add(1.0, M.mul(x, M.sub(1.0, s)))))


def _gelu_grad(x, g):
    # tf.nn.gelu(approximate=False) = (0.5 * x) * erfc(u), u = -x * sqrt(1/2) (rounded to float32
    # there), differentiated as TensorFlow does it, so that +inf gives its NaN (inf * 0) too
    u = M.mul(M.neg(x), _SQRT_HALF_F32)
    through_half = M.mul(M.mul(g, M.erfc(u)), 0.5)
    through_erfc = M.mul(M.mul(M.mul(M.mul(g, M.mul(x, 0.5)), -_TWO_OVER_ROOT_PI),
                               M.exp(M.neg(M.square(u)))), _SQRT_HALF_F32)
    return M.add(through_half, M.neg(through_erfc))


def _mul_grad(op, g):
    # the most used rule of all, written out: no closures for _each
    x, y = op.in1, op.in2
    need_x, need_y = needed(op)
    if (g._op or g).type not in M.SEED_TYPES:  # g cannot be the seed of ones (_times): multiply at once
        return M.mul(g, y) if need_x else None, M.mul(g, x) if need_y else None
    return _times(g, y) if need_x else None, _times(g, x) if need_y else None


# ----- elementwise, two or three inputs -----
defgrad("add", lambda op, g: (g, g))
defgrad("sub", lambda op, g: _each(op, lambda: g, lambda: M.neg(g)))
defgrad("mul", _mul_grad)
defgrad("div", lambda op, g: _each(op, lambda: M.div(g, _x(op, 1)),
                                   lambda: M.neg(M.div(M.mul(g, _y(op)), _x(op, 1)))))
defgrad("pow", _pow_grad)
defgrad("matmul", _matmul_grad)
defgrad("maximum", lambda op, g: _select(M.greater_equal(_x(op, 0), _x(op, 1)), g, *needed(op)))
defgrad("minimum", lambda op, g: _select(M.less_equal(_x(op, 0), _x(op, 1)), g, *needed(op)))
defgrad("clip", _clip_grad)
defgrad("where", lambda op, g: (None,) + _select(_x(op), g, *needed(op)[1:]))


def _times(g, t):
    # g * t, skipped when g is the broadcast seed of ones: a whole pass over t saved. (Only a
    # constant, or one reshaped or broadcast, can be the seed: _mul_grad asks only for those.)
    if (g.op.type in M.SEED_TYPES and M.is_ones(g) and g.dtype == t.dtype
            and np.broadcast_shapes(g.shape, t.shape) == t.shape):
        return t
    return M.mul(g, t)


def _select(mask, g, first: bool = True, second: bool = True):
    # g where mask is true (to the first input), else to the second; only the ones asked for
    if not (first or second):
        return None, None  # the mask is not built either
    zeros = M.zero(g)
    return (M.where(mask, g, zeros) if first else None,
            M.where(mask, zeros, g) if second else None)


# ----- reductions -----
defgrad("sum", lambda op, g: _unreduce(op, g))
defgrad("mean", lambda op, g: M.div(_unreduce(op, g), float(_count(op))))
defgrad("max", _extremum_grad)
defgrad("min", _extremum_grad)
defgrad("prod", _prod_grad)
defgrad("prod_others", _prod_others_grad)
defgrad("logsumexp", _logsumexp_grad)
defgrad("softmax", lambda op, g: M.mul(_y(op), M.sub(g, A.sum(M.mul(g, _y(op)),
                                                               axis=op.attrs["axis"], keepdims=True))))
defgrad("log_softmax", lambda op, g: M.sub(g, M.mul(M.exp(_y(op)),
                                                     A.sum(g, axis=op.attrs["axis"], keepdims=True))))

defgrad("sparse_softmax_cross_entropy_with_logits", lambda op, g, gg: _sparse_xent_grad(op, g, gg))


def _sparse_xent_grad(op, g, g_backprop):
    # TensorFlow's _SparseSoftmaxCrossEntropyWithLogitsGrad, in its order: expand_dims(dy, -1) *
    # backprop (the forward's second output); a gradient that reached that output (only in a
    # second derivative; otherwise the walk's constant zeros) adds softmax's own gradient of it.
    logits, backprop = op.inputs[1], op.outputs[1]
    grad = M.mul(A.reshape(g, g.shape + (1,)), backprop)
    if g_backprop is None or _is_zeros(g_backprop):
        return None, grad
    s = M.softmax(logits, axis=-1)
    lead, k = logits.shape[:-1], logits.shape[-1]
    inner = M.matmul(A.reshape(g_backprop, lead + (1, k)), A.reshape(s, lead + (k, 1)))
    return None, M.add(grad, M.mul(M.sub(g_backprop, A.reshape(inner, lead + (1,))), s))


def _is_zeros(t) -> bool:
    return t.op.type == "constant" and not np.any(t._value)


# ----- shape and indexing -----
defgrad("reshape", lambda op, g: A.reshape(g, _x(op).shape))
defgrad("transpose", lambda op, g: A.transpose(g, np.argsort(op.attrs["axes"])))
defgrad("concat", lambda op, g: _split_grad(op, g, "concat"))
defgrad("stack", lambda op, g: _split_grad(op, g, "stack"))
defgrad("getitem", lambda op, g: A.getitem_grad(g, _x(op), op.attrs["index"]))
defgrad("getitem_grad", lambda op, g: A.getitem(g, op.attrs["index"]))
defgrad("sum_to", lambda op, g: A.broadcast_to(g, _x(op).shape))
defgrad("broadcast_to", lambda op, g: A.sum_to(g, _x(op).shape))
defgrad("add_n", lambda op, g: (g,) * len(op.inputs))
defgrad("zero_out", _zero_out_grad)
defgrad("max_with_argmax", _max_with_argmax_grad)
# The ops the table says take no gradient (comparisons, logical ops, argmax, one_hot, draws...):
# None for every input; its step ops (sign, round, floor, ceil, heaviside: piecewise
# constant): zeros, connected (as TensorFlow's Sign and Round gradients).
for _type, _spec in OPS.items():
    if not _spec.differentiable:
        defgrad(_type, _none)
    elif _spec.step:
        defgrad(_type, _zeros)

# ----- gradient kernels (for second derivatives) -----
defgrad("tanh_grad", lambda op, g: _each(
    op, lambda: M.mul(M.mul(g, _x(op, 1)), M.mul(_x(op, 0), -2.0)),
    lambda: M.tanh_grad(_x(op, 0), g)))
defgrad("sigmoid_grad", lambda op, g: _each(
    op, lambda: M.mul(M.mul(g, _x(op, 1)), M.sub(1.0, M.mul(_x(op, 0), 2.0))),
    lambda: M.sigmoid_grad(_x(op, 0), g)))
# TensorFlow's SqrtGradGrad and ReciprocalGradGrad, so second derivatives match it too
defgrad("sqrt_grad", lambda op, g: _each(op, lambda: M.mul(M.neg(M.div(g, _x(op, 0))), _y(op)),
                                         lambda: M.mul(0.5, M.div(g, _x(op, 0)))))
defgrad("reciprocal_grad", lambda op, g: _each(
    op, lambda: M.mul(M.mul(M.mul(g, -2.0), _x(op, 1)), _x(op, 0)),
    lambda: M.reciprocal_grad(_x(op, 0), g)))
