"""Elementwise ops and the Tensor operators, as graph builders with numpy kernels.

Kernels are plain callables over values; `operator` functions are used where
they exist because they keep numpy scalars on numpy's fast scalar path.
"""
from __future__ import annotations

import operator
import weakref

import numpy as np

from ..errors import GraphError
from .graph import Tensor, leaf, make_op


def constant(value, dtype=None, name: str | None = None) -> Tensor:
    """A constant tensor; Python numbers and int lists become float64 unless dtype is given."""
    return leaf(value, "constant", dtype, name)


def variable(value, name: str | None = None, trainable: bool = True, dtype=None) -> Tensor:
    """A variable: a leaf whose value `assign` can change between evaluations."""
    var = leaf(value, "variable", dtype, name, trainable)
    if trainable and var.dtype.kind != "f":
        var.trainable = False
    return var


def zero(like: Tensor) -> Tensor:
    """A 0-d zero of like's dtype: where(mask, g, zero(g)) needs no array of zeros."""
    return constant(np.zeros((), dtype=like.dtype))


def is_ones(t: Tensor) -> bool:
    """Whether t is a constant one, possibly broadcast (the seed of a sum's gradient)."""
    while t.op.type in ("broadcast_to", "reshape"):
        t = t.op.inputs[0]
    return t.op.type == "constant" and t.size == 1 and bool(np.all(t._value == 1))


_scalars: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def convert(value, like: Tensor | None = None) -> Tensor:
    """A tensor for value; plain numbers take the float dtype of `like`, as in TensorFlow.

    Python numbers become shared constants per (value, dtype), so a loop of
    `y * 0.999` holds one constant, not one per op.
    """
    if isinstance(value, Tensor):
        return value
    dtype = like.dtype if like is not None and like.dtype.kind == "f" else None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        key = (repr(value), None if dtype is None else dtype.str)  # repr keeps -0.0 apart from 0.0
        shared = _scalars.get(key)
        if shared is None:
            shared = _scalars[key] = constant(value, dtype=dtype)
        return shared
    if dtype is not None and np.asarray(value).dtype.kind in "iuf":
        return constant(value, dtype=dtype)
    return constant(value)


def _pair(x, y) -> tuple[Tensor, Tensor]:
    if not isinstance(x, Tensor):
        x = convert(x, like=y if isinstance(y, Tensor) else None)
    if not isinstance(y, Tensor):
        y = convert(y, like=x)
    if x.dtype.kind == "f" and y.dtype.kind == "f" and x.dtype != y.dtype:
        raise GraphError(f"cannot combine a {x.dtype} tensor with a {y.dtype} tensor; "
                         "cast one of them first (gc.cast)")
    return x, y


def unary(type_: str, kernel, x, attrs: dict | None = None) -> Tensor:
    return make_op(type_, kernel, (convert(x),), attrs).outputs[0]


def binary(type_: str, kernel, x, y) -> Tensor:
    return make_op(type_, kernel, _pair(x, y)).outputs[0]


def _sigmoid(x):
    return np.exp(-np.logaddexp(0.0, -x))


def _softplus(x):
    return np.logaddexp(0.0, x)


def _identity(x):
    return x


def _reciprocal(x):
    return 1 / x


# ----- one input -----
def abs(x): return unary("abs", operator.abs, x)          # noqa: A001 - mirrors tf.abs
def sign(x): return unary("sign", np.sign, x)
def neg(x): return unary("neg", operator.neg, x)
def exp(x): return unary("exp", np.exp, x)
def log(x): return unary("log", np.log, x)
def sqrt(x): return unary("sqrt", np.sqrt, x)
def square(x): return unary("square", np.square, x)
def sin(x): return unary("sin", np.sin, x)
def cos(x): return unary("cos", np.cos, x)
def tanh(x): return unary("tanh", np.tanh, x)
def sigmoid(x): return unary("sigmoid", _sigmoid, x)
def relu(x): return unary("relu", lambda v: np.maximum(v, 0), x)
def softplus(x): return unary("softplus", _softplus, x)
def round(x): return unary("round", np.round, x)          # noqa: A001 - half to even, as tf.round
def floor(x): return unary("floor", np.floor, x)
def ceil(x): return unary("ceil", np.ceil, x)
def reciprocal(x): return unary("reciprocal", _reciprocal, x)
def identity(x): return unary("identity", _identity, x)
def zeros_like(x): return unary("zeros_like", np.zeros_like, x)
def ones_like(x): return unary("ones_like", np.ones_like, x)
def logical_not(x): return unary("logical_not", np.logical_not, x)


# ----- two inputs -----
def add(x, y): return binary("add", operator.add, x, y)
def sub(x, y): return binary("sub", operator.sub, x, y)
def mul(x, y): return binary("mul", operator.mul, x, y)
def div(x, y): return binary("div", operator.truediv, x, y)
def pow(x, y): return binary("pow", operator.pow, x, y)  # noqa: A001 - mirrors tf.pow
def matmul(a, b): return binary("matmul", operator.matmul, a, b)
def maximum(x, y): return binary("maximum", np.maximum, x, y)
def minimum(x, y): return binary("minimum", np.minimum, x, y)
def less(x, y): return binary("less", operator.lt, x, y)
def less_equal(x, y): return binary("less_equal", operator.le, x, y)
def greater(x, y): return binary("greater", operator.gt, x, y)
def greater_equal(x, y): return binary("greater_equal", operator.ge, x, y)
def equal(x, y): return binary("equal", operator.eq, x, y)
def not_equal(x, y): return binary("not_equal", operator.ne, x, y)
def logical_and(x, y): return binary("logical_and", np.logical_and, x, y)
def logical_or(x, y): return binary("logical_or", np.logical_or, x, y)


def clip(x, lo, hi) -> Tensor:
    """Clip to [lo, hi] (tf.clip_by_value: max(min(x, hi), lo)); the gradient passes where
    lo <= x <= hi, to hi where x > hi and to lo where min(x, hi) < lo or is NaN."""
    x = convert(x)
    lo, hi = convert(lo, like=x), convert(hi, like=x)
    # min then max, as tf.clip_by_value: where lo > hi the result is lo, and a NaN stays NaN
    return make_op("clip", lambda v, a, b: np.maximum(np.minimum(v, b), a), (x, lo, hi)).outputs[0]


def where(cond, a, b) -> Tensor:
    """a where cond is true, else b; the gradient flows to the branch chosen."""
    cond = convert(cond)
    if cond.dtype.kind != "b":
        raise GraphError(f"where() needs a boolean condition, got {cond.dtype}")
    a, b = _pair(a, b)
    return make_op("where", np.where, (cond, a, b)).outputs[0]


def cast(x, dtype) -> Tensor:
    """x converted to dtype (a numpy dtype or its name)."""
    target = np.dtype(dtype)
    return unary("cast", lambda v: v.astype(target), x, {"dtype": target})


def dtype(x) -> np.dtype:
    """The dtype of x, for cast(y, dtype(x))."""
    return convert(x).dtype


# ----- gradient kernels that are ops too, so that second derivatives work -----
def tanh_grad(y, g): return binary("tanh_grad", lambda y_, g_: g_ * (1 - y_ * y_), y, g)
def sigmoid_grad(y, g): return binary("sigmoid_grad", lambda y_, g_: g_ * (y_ * (1 - y_)), y, g)
def sqrt_grad(y, g): return binary("sqrt_grad", _sqrt_grad, y, g)
def reciprocal_grad(y, g): return binary("reciprocal_grad", _reciprocal_grad, y, g)


# TensorFlow's SqrtGrad and ReciprocalGrad kernels return 0 where the upstream gradient is 0, even
# where the formula alone gives 0 * inf or NaN: where(x > 0, sqrt(x), 0) has gradient 0 at x <= 0.
def _sqrt_grad(y, g):
    return _zero_where_no_upstream(0.5 * g / y, g)


def _reciprocal_grad(y, g):
    return _zero_where_no_upstream(-y * y * g, g)


def _zero_where_no_upstream(grad, g):
    if isinstance(grad, np.ndarray):  # a fresh array: safe to write into
        if not np.all(g):  # one quick pass; the mask only where some upstream is zero
            np.copyto(grad, 0, where=np.broadcast_to(g == 0, grad.shape))
        return grad
    return grad.dtype.type(0) if g == 0 else grad


def _attach_operators() -> None:
    def swapped(fn):
        return lambda self, other: fn(other, self)

    for name, fn in [("add", add), ("sub", sub), ("mul", mul), ("truediv", div),
                     ("pow", pow), ("matmul", matmul), ("and", logical_and), ("or", logical_or)]:
        setattr(Tensor, f"__{name}__", fn)
        setattr(Tensor, f"__r{name}__", swapped(fn))
    Tensor.__neg__ = neg
    Tensor.__pos__ = identity
    Tensor.__abs__ = abs
    Tensor.__invert__ = logical_not
    Tensor.__lt__, Tensor.__le__ = less, less_equal
    Tensor.__gt__, Tensor.__ge__ = greater, greater_equal
    # == and != stay identity comparisons so tensors remain usable as dict keys
    # (feeds); gc.equal and gc.not_equal compare values, as in TensorFlow 1.


_attach_operators()
