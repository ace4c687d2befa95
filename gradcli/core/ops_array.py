"""Reductions, shape ops, indexing, seeded random draws and multi-output ops, over the op
table's kernels; the reductions' builders are generated from their entries."""
from __future__ import annotations

import functools
import itertools

import numpy as np

from ..errors import GraphError
from ..ops import OPS, OpSpec
from ..ops import kernels as _kernels
from ..ops.table import DTYPE_REFUSING, non_integer_indices
from . import budget as budgets
from . import shapes
from .building import make_elementwise, make_lazy, make_op, refuse_dtype
from .graph import Tensor, current_value
from .ops_math import convert, no_booleans, no_float_number, one_dtype, unary


def _axis_attrs(x: Tensor, axis, keepdims: bool) -> dict:
    return {"axis": shapes.axes(axis, x.shape), "keepdims": bool(keepdims)}


def _reduction(spec: OpSpec):
    type_, fn = spec.name, spec.kernel
    refusing = type_ in DTYPE_REFUSING  # a boolean sum, an integer logsumexp: refused here

    def build(x, axis=None, keepdims=False) -> Tensor:
        x = convert(x)
        if refusing:
            refuse_dtype(type_, x)
        attrs = _axis_attrs(x, axis, keepdims)
        kernel = functools.partial(fn, axis=attrs["axis"], keepdims=attrs["keepdims"])
        if x.dtype.kind == "f" and x.size and budgets.active() is None:
            # a non-empty float reduction cannot fail: its value waits until asked for
            return make_lazy(type_, kernel, (x,), attrs, _reduced_shape(x.shape, attrs),
                             _reduced_dtype(type_, kernel, x, attrs))
        return unary(type_, kernel, x, attrs)
    build.__name__ = build.__qualname__ = type_
    build.__doc__ = f"{spec.signature}: {spec.doc}."
    return build


def _reduced_shape(shape: tuple, attrs: dict) -> tuple:
    axes, keep = attrs["axis"], attrs["keepdims"]
    if axes is None:
        return (1,) * len(shape) if keep else ()
    if keep:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


_REDUCED_DTYPES: dict[tuple, np.dtype] = {}


def _reduced_dtype(type_: str, kernel, x: Tensor, attrs: dict) -> np.dtype:
    """The kernel's dtype on a one-element stand-in of x's dtype and rank (cached)."""
    key = (type_, x.dtype, x.ndim, attrs["axis"], attrs["keepdims"])
    dtype = _REDUCED_DTYPES.get(key)
    if dtype is None:
        with np.errstate(all="ignore"):
            dtype = np.asarray(kernel(np.ones((1,) * x.ndim, x.dtype))).dtype
        _REDUCED_DTYPES[key] = dtype
    return dtype


# sum, mean, max, min, prod, logsumexp: generated from their table entries
BUILT = {spec.name: _reduction(spec) for spec in OPS.values() if spec.family == "reduction"}
globals().update(BUILT)


def transpose(x, axes=None) -> Tensor:
    x = convert(x)
    axes = shapes.permutation(axes, x.ndim)
    return unary("transpose", functools.partial(OPS["transpose"].kernel, axes=axes), x, {"axes": axes})


def reshape(x, shape) -> Tensor:
    shape = shapes.as_shape(shape)
    x = convert(x)
    return unary("reshape", functools.partial(OPS["reshape"].kernel, shape=shape), x, {"shape": shape})


def concat(values, axis=0) -> Tensor:
    tensors = _same_dtype(values, "concat")
    return make_op("concat", functools.partial(OPS["concat"].kernel, axis=axis), tensors,
                   {"axis": axis}).output


def stack(values, axis=0) -> Tensor:
    tensors = _same_dtype(values, "stack")
    return make_op("stack", functools.partial(OPS["stack"].kernel, axis=axis), tensors,
                   {"axis": axis}).output


def _same_dtype(values, what: str) -> tuple[Tensor, ...]:
    if not values:
        raise GraphError(f"{what}() needs at least one tensor")
    like = next((v for v in values if isinstance(v, Tensor)), None)
    if like is not None:
        for v in values:
            no_float_number(what, v, like.dtype)
    tensors = tuple(convert(v, like=like) for v in values)
    one_dtype(what, tensors)
    return tensors


def one_hot(indices, depth: int, dtype=np.float64) -> Tensor:
    indices = convert(indices)
    if indices.dtype.kind not in "iu":
        raise GraphError(non_integer_indices("one_hot", indices.dtype.name))
    depth = int(depth)
    kernel = functools.partial(OPS["one_hot"].kernel, depth=depth, dtype=dtype)
    # its dtype among the attributes, as the eager backends have it: the memory budget
    # sizes the result by it (the indices' int64 would be twice a float32 result)
    return unary("one_hot", kernel, indices, {"depth": depth, "dtype": np.dtype(dtype).name})


def getitem(x, index) -> Tensor:
    """x[index] for integers, slices, None, Ellipsis and integer lists."""
    x = convert(x)
    index = _normalize_index(index)
    return unary("getitem", functools.partial(OPS["getitem"].kernel, index=index), x, {"index": index})


def _normalize_index(index):
    if any(isinstance(item, Tensor) for item in (index if isinstance(index, tuple) else (index,))):
        raise GraphError("indexing with a tensor is not supported; index with numbers")
    return shapes.index_items(index)


def _iterate(x: Tensor):
    # Without __iter__, Python iterates by indexing until IndexError, which make_op turns into
    # a GraphError: unpacking `a, b = t` would fail after the last element.
    return (getitem(x, i) for i in range(len(x)))


Tensor.__getitem__ = getitem
Tensor.__iter__ = _iterate


# ----- seeded random draws: drawn once, the same numbers on every replay -----
class _Seeds:
    base = 0
    counter = itertools.count()


def set_seed(seed: int) -> None:
    """Make every later random op's draw a function of seed and its order of creation."""
    _Seeds.base = int(seed)
    _Seeds.counter = itertools.count()


def _random(type_: str, shape, seed, dtype, attrs: dict) -> Tensor:
    seed = (_Seeds.base, next(_Seeds.counter)) if seed is None else (int(seed),)
    shape = shapes.as_shape(shape)
    budget = budgets.active()
    if budget is not None:  # the draw happens here, before make_op could look at it
        budget.admit(type_, [], [], {"shape": shape, "dtype": dtype})
    value = drawn(type_, seed, shape, dtype, attrs)
    value = value[()] if value.ndim == 0 else value
    return make_op(type_, lambda: value, (), {**attrs, "shape": shape, "seed": seed}).output


def drawn(name: str, seed, shape: tuple, dtype, attrs: dict) -> np.ndarray:
    """The numbers of a seeded draw, alike on every backend: the table's kernel over a numpy
    generator seeded with seed (a sequence of ints: the spec's seed and the draw's index), in
    dtype."""
    return OPS[name].kernel(np.random.default_rng(list(seed)), shape, **attrs).astype(dtype)


def uniform(shape, low=0.0, high=1.0, seed=None, dtype=np.float64) -> Tensor:
    return _random("uniform", shape, seed, dtype, {"low": low, "high": high})


def normal(shape, mean=0.0, std=1.0, seed=None, dtype=np.float64) -> Tensor:
    return _random("normal", shape, seed, dtype, {"mean": mean, "std": std})


def bernoulli(shape, p=0.5, seed=None, dtype=np.float64) -> Tensor:
    return _random("bernoulli", shape, seed, dtype, {"p": p})


# ----- multi-output ops -----
def zero_out(x) -> tuple[Tensor, Tensor]:
    """(x with all but its first element zeroed, the index kept): the seeds' ZeroOut."""
    return make_op("zero_out", OPS["zero_out"].kernel, (convert(x),), n_outputs=2).outputs


def max_with_argmax(x, axis=-1) -> tuple[Tensor, Tensor]:
    """(max along axis, its integer index); the index is not differentiable."""
    (x,) = no_booleans("max_with_argmax", (convert(x),))  # TensorFlow's top_k has no bool
    axis = shapes.one_axis(axis, x.shape)
    kernel = functools.partial(OPS["max_with_argmax"].kernel, axis=axis)
    return make_op("max_with_argmax", kernel, (x,), {"axis": axis}, n_outputs=2).outputs


def sparse_softmax_cross_entropy_with_logits(labels, logits) -> Tensor:
    """tf.nn.sparse_softmax_cross_entropy_with_logits: the per-row loss over logits' last axis.
    Like TensorFlow's fused op, the core op has a second output, its gradient wrt logits
    (softmax - one_hot), made by the same kernel; the rule scales it by dy."""
    logits, labels = convert(logits), convert(labels)
    try:
        _kernels.check_label_dtype(labels.dtype, labels.dtype.kind in "iu",
                                   current_value(labels) if labels.dtype.kind == "f" else None)
    except TypeError as exc:
        raise GraphError(str(exc)) from None
    if logits.dtype.kind != "f":
        raise GraphError(f"sparse_softmax_cross_entropy_with_logits() needs float logits, got "
                         f"{logits.dtype}")
    if logits.ndim == 0 or labels.shape != logits.shape[:-1]:
        raise GraphError(f"sparse_softmax_cross_entropy_with_logits() needs labels of logits' "
                         f"shape without its last (class) axis: labels {labels.shape}, logits "
                         f"{logits.shape}")
    return make_op("sparse_softmax_cross_entropy_with_logits", _kernels.sparse_xent_with_backprop,
                   (labels, logits), n_outputs=2).output


def _arg_extremum(spec: OpSpec):
    def build(x, axis=-1) -> Tensor:
        x = convert(x)
        axis = shapes.one_axis(axis, x.shape)
        return unary(spec.name, functools.partial(spec.kernel, axis=axis), x, {"axis": axis})
    build.__name__ = build.__qualname__ = spec.name
    build.__doc__ = f"{spec.signature}: {spec.doc}."
    return build


# argmax, argmin: generated from their entries (max_with_argmax, two outputs, has its own)
ARG_EXTREMA = {spec.name: _arg_extremum(spec) for spec in OPS.values()
               if spec.family == "along_axis" and spec.outputs == 1}
globals().update(ARG_EXTREMA)


# ----- ops that gradient rules build (differentiable themselves) -----
def _sum_to(v, shape):
    axes = _kernels.sum_to_axes(np.shape(v), shape)
    out = np.sum(v, axis=axes, keepdims=True) if axes else v
    return np.reshape(out, shape) if np.ndim(v) != len(shape) or np.shape(out) != shape else out


def _sum_to_kernel(shape: tuple):
    """_sum_to(v, shape) with the axes worked out once per shape of v: a replay runs it every
    step on arrays of one shape, where building the axes cost more than the sum."""
    plans: dict = {}

    def kernel(v):
        if type(v) is not np.ndarray:
            return _sum_to(v, shape)
        plan = plans.get(v.shape)
        if plan is None:
            axes = _kernels.sum_to_axes(v.shape, shape)
            out_shape = tuple(1 if i in axes else n for i, n in enumerate(v.shape))
            plan = plans[v.shape] = (axes, v.ndim != len(shape) or out_shape != shape)
        axes, reshape = plan
        out = np.add.reduce(v, axis=axes, keepdims=True) if axes else v  # np.sum's own reduce
        return out.reshape(shape) if reshape else out
    return kernel


def sum_to(x: Tensor, shape: tuple) -> Tensor:
    """Sum x down to shape: undoes broadcasting, the one place gradients do it."""
    return unary("sum_to", _sum_to_kernel(tuple(shape)), x, {"shape": tuple(shape)})


def broadcast_to(x: Tensor, shape: tuple) -> Tensor:
    return unary("broadcast_to", lambda v: np.broadcast_to(v, shape), x, {"shape": tuple(shape)})


def add_n(tensors) -> Tensor:
    """Sum of several gradients arriving at one tensor."""
    if len(tensors) == 1:
        return tensors[0]
    return make_elementwise("add_n", _accumulate, tuple(tensors))


def _accumulate(*values):
    # The first sum is a new array; the rest are added into it, with no temporaries.
    total = values[0] + values[1]
    for value in values[2:]:
        total += value
    return total


def _scatter(g, shape, index, dtype):
    out = np.zeros(shape, dtype=dtype)
    np.add.at(out, index, g)
    return out


def getitem_grad(g: Tensor, x: Tensor, index) -> Tensor:
    """Zeros of x's shape with g added at x[index] (repeated indices accumulate)."""
    shape, dtype = x.shape, x.dtype
    return unary("getitem_grad", lambda v: _scatter(v, shape, index, dtype), g,
                 {"index": index, "shape": shape})


def _prod_others(v, axis):
    """For each element, the product of the others along axis (zeros handled exactly)."""
    flat = axis is None
    a = np.reshape(v, -1) if flat else np.moveaxis(v, axis, -1)
    ones = np.ones_like(a[..., :1])
    left = np.cumprod(np.concatenate([ones, a[..., :-1]], axis=-1), axis=-1)
    right = np.flip(np.cumprod(np.concatenate([ones, np.flip(a, -1)[..., :-1]], axis=-1), axis=-1), -1)
    out = left * right
    return np.reshape(out, np.shape(v)) if flat else np.moveaxis(out, -1, axis)


def prod_others(x: Tensor, axis) -> Tensor:
    return unary("prod_others", lambda v: _prod_others(v, axis), x, {"axis": axis})
