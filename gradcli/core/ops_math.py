"""Elementwise ops and the Tensor operators, as graph builders over the op table's kernels.

The table's one- and two-input ops get their builders generated here from their
entries (gc.exp, gc.add, ...); clip, where and cast have their own. Kernels are the
table's: `operator` functions where they exist, because they keep numpy scalars on
numpy's fast scalar path.
"""
from __future__ import annotations

import functools
import weakref

import numpy as np

from ..errors import GraphError
from ..ops import OPERATORS, OPS, UNARY_OPERATORS, OpSpec
from ..ops.table import (
    DTYPE_REFUSING,
    NO_BOOLEAN_KERNEL,
    boolean_arithmetic,
    float_number,
    mixed_dtypes,
)
from . import budget as budgets
from .building import elementwise_dtype, leaf, make_elementwise, make_op, refuse_dtype
from .graph import _NO_ATTRS, Tensor


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


_SEED_WRAPPERS = ("broadcast_to", "reshape")
SEED_TYPES = frozenset(("constant", *_SEED_WRAPPERS))  # the op types is_ones can be true of


def is_ones(t: Tensor) -> bool:
    """Whether t is a constant one, possibly broadcast (the seed of a sum's gradient)."""
    while t.op.type in _SEED_WRAPPERS:
        t = t.op.inputs[0]
    return t.op.type == "constant" and t.size == 1 and bool(np.all(t._value == 1))


_scalars: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
# (float, dtype) -> a shared constant, for the common case: a nonzero float beside a float tensor
# (y * 0.999). One dict lookup, no repr (only zeros need it, to keep -0.0 apart from 0.0); held
# strongly, so it is bounded (cleared when full: the graphs keep what they use).
_floats: dict = {}
_FLOATS_HELD = 1024


def number_dtype(value, beside) -> np.dtype | None:
    """The dtype a bare number (or list of numbers) takes beside a tensor of dtype `beside`.

    A float tensor's dtype; an integer tensor's for integer numbers (`k + 2`
    stays int64, as in TensorFlow; a float, `k + 2.0` or `k * 0.5`, is refused first by
    no_float_number where the op is known, and here otherwise); None (the caller's default)
    beside nothing or a boolean. An integer outside the integer dtype's range is refused
    rather than wrapped.
    """
    array = np.asarray(value)
    if beside is None or array.dtype.kind not in "iuf":
        return None
    beside = np.dtype(beside)
    if beside.kind == "f":
        return beside
    if beside.kind not in "iu":
        return None
    limits = np.iinfo(beside)
    with np.errstate(invalid="ignore"):
        whole = np.all(np.isfinite(array) & (array == np.round(array))
                       & (array >= limits.min) & (array <= limits.max))
    if not whole:
        shown = value if np.ndim(value) == 0 else "a list holding " + ", ".join(
            repr(v) for v in array.ravel()[:3].tolist())
        raise GraphError(f"cannot combine an {beside} tensor with {shown}: a number beside an "
                         f"integer tensor must be an integer number in {beside}'s range; cast "
                         "the tensor to a float dtype first (cast(k, float64))")
    return beside


def convert(value, like: Tensor | None = None) -> Tensor:
    """A tensor for value; plain numbers take the dtype of `like` (number_dtype), as in
    TensorFlow.

    Python numbers become shared constants per (value, dtype), so a loop of
    `y * 0.999` holds one constant, not one per op.
    """
    if isinstance(value, Tensor):
        return value
    if type(value) is float and value and like is not None:
        dtype = like.dtype  # a float takes a float tensor's dtype (number_dtype)
        shared = _floats.get((value, dtype))
        if shared is not None:
            return shared
        if dtype.kind == "f":
            if len(_floats) >= _FLOATS_HELD:
                _floats.clear()
            shared = _floats[value, dtype] = constant(value, dtype=dtype)
            return shared
    dtype = number_dtype(value, like.dtype if like is not None else None)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        key = (repr(value), None if dtype is None else dtype.str)  # repr keeps -0.0 apart from 0.0
        shared = _scalars.get(key)
        if shared is None:
            shared = _scalars[key] = constant(value, dtype=dtype)
        return shared
    if dtype is not None:
        return constant(value, dtype=dtype)
    return constant(value)


def _pair(x, y, type_: str) -> tuple[Tensor, Tensor]:
    """x and y as tensors of one dtype: a number takes the tensor's (number_dtype); two
    tensors of different dtypes are refused (one_dtype). One dtype comparison, as before the
    rule covered integers; elementwise2's fast path (two tensors of one dtype) skips it."""
    if not isinstance(x, Tensor):
        if isinstance(y, Tensor) and y.dtype.kind in "iu":
            no_float_number(type_, x, y.dtype)  # 2.0 * k: refused as TensorFlow refuses it
        x = convert(x, like=y if isinstance(y, Tensor) else None)
    if not isinstance(y, Tensor):
        if x.dtype.kind in "iu":
            no_float_number(type_, y, x.dtype)  # k + 2.0
        y = convert(y, like=x)
    if x.dtype != y.dtype:
        one_dtype(type_, (x, y))
    return x, y


def one_dtype(type_: str, tensors) -> None:
    """Refuse tensors of different dtypes as TensorFlow does, in the op table's words
    (mixed_dtypes): numpy would promote int64 + float64 to float64, bool to int, silently."""
    dtypes = list(dict.fromkeys(str(t.dtype) for t in tensors))
    if len(dtypes) > 1:
        raise GraphError("%s; %s" % mixed_dtypes(type_, dtypes))


def no_booleans(type_: str, tensors) -> tuple:
    """tensors, unless they are all booleans and TensorFlow has no boolean kernel for the op
    (ops.table.NO_BOOLEAN_KERNEL: True + True, -c, c * c): refused in the table's words
    (boolean_arithmetic), where numpy would answer. Called off the builders' fast paths,
    which booleans never take."""
    if type_ in NO_BOOLEAN_KERNEL and all(t.dtype.kind == "b" for t in tensors):
        raise GraphError("%s; %s" % boolean_arithmetic(type_, len(tensors)))
    return tensors


def no_float_number(type_: str, value, beside) -> None:
    """Refuse a float number (or list holding one), whole or not, beside an integer tensor in
    any op whose operands share one dtype (k + 2.0, k * 0.5, where's branches, clip's bounds,
    concat's or stack's list), as TensorFlow refuses to convert it (ops.table.float_number);
    an integer number takes the integer dtype (number_dtype). Every backend asks here."""
    if beside is None or np.dtype(beside).kind not in "iu" or isinstance(value, Tensor):
        return
    if np.asarray(value).dtype.kind == "f":
        shown = repr(value) if not isinstance(value, np.ndarray) else repr(value.tolist())
        # the spec's float dtype is not known here (the numpy core has none; the eager
        # backends ask here too): the hint casts like a float tensor of the spec, as
        # refused_dtype's, right in a float32 spec as in a float64 one
        raise GraphError("%s; %s, x a float tensor" % float_number(
            type_, shown, str(np.dtype(beside)), like="dtype(x)"))


def unary(type_: str, kernel, x, attrs: dict | None = None) -> Tensor:
    return make_op(type_, kernel, no_booleans(type_, (convert(x),)), attrs).output


def binary(type_: str, kernel, x, y) -> Tensor:
    return make_op(type_, kernel, no_booleans(type_, _pair(x, y, type_))).output


def elementwise1(type_: str, kernel):
    """A one-input elementwise op's builder (make_elementwise: its value is computed on demand)."""
    # a closure over the op, so that each call is one Python frame before make_elementwise
    results: dict = {}  # x's dtype -> the result's (building.elementwise_dtype), without a key tuple

    def build(x):
        if x.__class__ is Tensor:  # the build's common case: shape and dtype known here
            dtype = x.dtype
            result = results.get(dtype)
            if result is None:
                result = results[dtype] = elementwise_dtype(type_, kernel, (dtype,))
            if result is not False and budgets._active is None:
                return make_elementwise(type_, kernel, (x,), _NO_ATTRS, x.shape, result)
        return make_elementwise(type_, kernel, no_booleans(
            type_, (x,) if isinstance(x, Tensor) else (convert(x),)))
    return build


def elementwise2(type_: str, kernel):
    """A two-input elementwise op's builder (make_elementwise: its value is computed on demand)."""
    results: dict = {}  # the inputs' one dtype -> the result's, without a key tuple

    def build(x, y):  # no annotation: inspect.signature(gc.add) shows the table's (x, y) alone
        if x.__class__ is Tensor:  # the build's common cases, without _pair's checks and calls
            dtype = x.dtype
            if y.__class__ is float:  # y * 0.999: the float's shared constant, if there is one yet
                shared = _floats.get((y, dtype))
                if shared is None:
                    return make_elementwise(type_, kernel, no_booleans(type_, _pair(x, y, type_)))
                y = shared
            elif y.__class__ is not Tensor or y.dtype is not dtype:
                return make_elementwise(type_, kernel, no_booleans(type_, _pair(x, y, type_)))
            # two tensors of one dtype: make_elementwise's own checks, done here in fewer steps
            result = results.get(dtype)
            if result is None:
                result = results[dtype] = elementwise_dtype(type_, kernel, (dtype, dtype))
            s = y.shape
            if result is not False and (not s or s == x.shape) and budgets._active is None:
                return make_elementwise(type_, kernel, (x, y), _NO_ATTRS, x.shape, result)
            return make_elementwise(type_, kernel, no_booleans(type_, (x, y)))
        return make_elementwise(type_, kernel, no_booleans(type_, _pair(x, y, type_)))
    return build


# ----- the table's elementwise ops, one builder each, generated from their entries -----
def _named(build, spec: OpSpec):
    """build under the op's name, doc and parameter names: gc.matmul(a=..., b=...) and
    inspect.signature see the table's signature, with no binding work per call."""
    code = build.__code__
    n = code.co_argcount
    names = {"co_varnames": spec.params[:n] + code.co_varnames[n:], "co_name": spec.name}
    if hasattr(code, "co_qualname"):  # Python 3.11+
        names["co_qualname"] = spec.name
    build.__code__ = code.replace(**names)
    build.__name__ = build.__qualname__ = spec.name
    build.__doc__ = f"{spec.signature}: {spec.doc}."
    if spec.defaults:
        build.__defaults__ = tuple(spec.defaults[p] for p in spec.params[n - len(spec.defaults):n])
    return build


def _unary_builder(spec: OpSpec):
    type_, kernel, attrs = spec.name, spec.kernel, spec.params[1:]
    if not attrs:
        return _named(elementwise1(type_, kernel), spec)
    if len(attrs) > 1:
        raise GraphError(f"op {type_!r}: a generated one-input builder takes one attribute")

    refusing = type_ in DTYPE_REFUSING  # an integer softmax: refused here, not by its kernel

    def build(x, a=None) -> Tensor:
        attr = {attrs[0]: a}
        if refusing:
            x = convert(x)
            refuse_dtype(type_, x)
        return unary(type_, functools.partial(kernel, **attr), x, attr)
    return _named(build, spec)


def _binary_builder(spec: OpSpec):
    type_, kernel = spec.name, spec.kernel
    if type_ == "matmul":  # the one binary op that is not elementwise
        return _named(lambda x, y: binary(type_, kernel, x, y), spec)
    return _named(elementwise2(type_, kernel), spec)


_FAMILIES = {"unary": _unary_builder, "binary": _binary_builder}
BUILT = {spec.name: _FAMILIES[spec.family](spec) for spec in OPS.values() if spec.family in _FAMILIES}
globals().update(BUILT)  # M.exp, M.add, ... for the gradient rules and the core's own builders


def clip(x, lo, hi) -> Tensor:
    """Clip to [lo, hi] (tf.clip_by_value: max(min(x, hi), lo)); the gradient passes where
    lo <= x <= hi, to hi where x > hi and to lo where min(x, hi) < lo or is NaN."""
    x = convert(x)
    no_float_number("clip", lo, x.dtype)
    no_float_number("clip", hi, x.dtype)
    lo, hi = convert(lo, like=x), convert(hi, like=x)
    if lo.dtype != x.dtype or hi.dtype != x.dtype:
        one_dtype("clip", (x, lo, hi))
    no_booleans("clip", (x, lo, hi))
    # min then max, as tf.clip_by_value: where lo > hi the result is lo, and a NaN stays NaN
    return make_elementwise("clip", OPS["clip"].kernel, (x, lo, hi))


def where(cond, a, b) -> Tensor:
    """a where cond is true, else b; the gradient flows to the branch chosen."""
    cond = convert(cond)
    if cond.dtype.kind != "b":
        raise GraphError(f"where() needs a boolean condition, got {cond.dtype}")
    a, b = _pair(a, b, "where")  # a float number beside an integer branch refused there too
    return make_elementwise("where", OPS["where"].kernel, (cond, a, b))


def cast(x, dtype) -> Tensor:
    """x converted to dtype (a numpy dtype or its name)."""
    target = np.dtype(dtype)
    return unary("cast", functools.partial(OPS["cast"].kernel, dtype=target), x, {"dtype": target})


def dtype(x) -> np.dtype:
    """The dtype of x, for cast(y, dtype(x))."""
    return convert(x).dtype


# ----- gradient kernels that are ops too, so that second derivatives work -----
def _tanh_grad(y, g):
    return g * (1 - y * y)


def _sigmoid_grad(y, g):
    return g * (y * (1 - y))


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


tanh_grad = elementwise2("tanh_grad", _tanh_grad)  # builders: (y, g) -> their op's output
sigmoid_grad = elementwise2("sigmoid_grad", _sigmoid_grad)
sqrt_grad = elementwise2("sqrt_grad", _sqrt_grad)
reciprocal_grad = elementwise2("reciprocal_grad", _reciprocal_grad)


# Python's name for each operator of the table; == and != stay identity comparisons so that
# tensors remain usable as dict keys (feeds): gc.equal and gc.not_equal compare values, as TF 1.
_DUNDERS = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "**": "pow", "@": "matmul",
            "&": "and", "|": "or", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
_REFLECTED = ("add", "sub", "mul", "truediv", "pow", "matmul", "and", "or")
_PREFIX_DUNDERS = {"-": "neg", "+": "pos", "~": "invert"}


def _attach_operators() -> None:
    def swapped(fn):
        return lambda self, other: fn(other, self)

    for text, name in OPERATORS.items():
        dunder = _DUNDERS.get(text)
        if dunder is not None:
            setattr(Tensor, f"__{dunder}__", BUILT[name])
            if dunder in _REFLECTED:
                setattr(Tensor, f"__r{dunder}__", swapped(BUILT[name]))
    for text, name in UNARY_OPERATORS.items():
        setattr(Tensor, f"__{_PREFIX_DUNDERS[text]}__", BUILT[name])
    Tensor.__abs__ = BUILT["abs"]


_attach_operators()
