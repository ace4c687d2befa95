"""The one op table of the expression language: names, signatures and docs.

The spec parser checks calls against it and every backend implements each
name in it; nothing here computes anything.
"""
from __future__ import annotations

import ast

from .record import Factory, record


@record
class OpSpec:
    """One op of the expression language: its parameters, outputs and doc."""

    name: str
    params: tuple[str, ...]
    defaults: dict[str, object] = Factory(dict)
    doc: str = ""
    outputs: int = 1
    tensor_params: tuple[str, ...] = ()  # parameters that take tensors (the rest are attributes)
    variadic: bool = False               # the first parameter takes a list of tensors

    @property
    def signature(self) -> str:
        parts = [p if p not in self.defaults else f"{p}={self.defaults[p]!r}" for p in self.params]
        return f"{self.name}({', '.join(parts)})"


OPS: dict[str, OpSpec] = {}


def _op(signature: str, doc: str, *, outputs: int = 1, attrs: tuple[str, ...] = (),
        variadic: bool = False) -> None:
    """Add an op from a compact signature such as 'sum(x, axis=None, keepdims=False)'."""
    name, _, rest = signature.partition("(")
    params, defaults = [], {}
    for part in filter(None, (p.strip() for p in rest.rstrip(")").split(","))):
        pname, eq, default = part.partition("=")
        params.append(pname)
        if eq:
            defaults[pname] = ast.literal_eval(default)
    tensor_params = tuple(p for p in params if p not in attrs and p not in defaults)
    OPS[name] = OpSpec(name, tuple(params), defaults, doc, outputs, tensor_params, variadic)


# ----- elementwise, one input -----
for _name, _doc in [
    ("abs", "absolute value; gradient sign(x)"),
    ("sign", "-1, 0 or 1; true gradient zero everywhere"),
    ("neg", "negation"),
    ("exp", "e to the x"),
    ("log", "natural logarithm"),
    ("sqrt", "square root"),
    ("square", "x * x"),
    ("sin", "sine"),
    ("cos", "cosine"),
    ("tanh", "hyperbolic tangent"),
    ("sigmoid", "logistic function 1 / (1 + exp(-x))"),
    ("relu", "max(x, 0); gradient 0 at 0, as in TensorFlow"),
    ("softplus", "log(1 + exp(x)), computed stably"),
    ("round", "round half to even, as tf.round; true gradient zero"),
    ("floor", "round down; true gradient zero"),
    ("ceil", "round up; true gradient zero"),
    ("reciprocal", "1 / x"),
    ("identity", "forward x, gradient dy; the usual target of an override"),
    ("stop_gradient", "forward x, no gradient (tf.stop_gradient)"),
    ("zeros_like", "zeros of x's shape and dtype"),
    ("ones_like", "ones of x's shape and dtype"),
    ("logical_not", "~x on booleans"),
]:
    _op(f"{_name}(x)", _doc)

# ----- elementwise, two inputs (operators map here) -----
for _name, _doc in [
    ("add", "x + y"), ("sub", "x - y"), ("mul", "x * y"), ("div", "x / y"),
    ("pow", "x ** y"), ("maximum", "elementwise max; ties send the gradient to x, as TensorFlow"),
    ("minimum", "elementwise min; ties send the gradient to x, as TensorFlow"),
    ("less", "x < y"), ("less_equal", "x <= y"), ("greater", "x > y"),
    ("greater_equal", "x >= y"), ("equal", "x == y"), ("not_equal", "x != y"),
    ("logical_and", "x & y on booleans"), ("logical_or", "x | y on booleans"),
]:
    _op(f"{_name}(x, y)", _doc)

_op("matmul(a, b)", "matrix product a @ b")
_op("clip(x, lo, hi)", "clip to [lo, hi] (tf.clip_by_value); gradient dy inside, 0 outside")
_op("where(cond, a, b)", "a where cond else b; the gradient flows to the chosen branch")
_op("cast(x, dtype)", "convert to dtype (float32, float64, int32, int64, bool)", attrs=("dtype",))
_op("dtype(x)", "the dtype of x, for cast(y, dtype(x))")

# ----- reductions and shape -----
for _name, _doc in [
    ("sum", "sum over axis (all by default)"), ("mean", "mean over axis"),
    ("max", "max over axis; ties share the gradient equally, as TensorFlow"),
    ("min", "min over axis; ties share the gradient equally, as TensorFlow"),
    ("prod", "product over axis"),
    ("logsumexp", "log(sum(exp(x))) over axis, computed stably"),
]:
    _op(f"{_name}(x, axis=None, keepdims=False)", _doc)
_op("softmax(x, axis=-1)", "softmax along axis")
_op("log_softmax(x, axis=-1)", "log of softmax along axis, computed stably")
_op("transpose(x, axes=None)", "permute axes (reverse them by default)")
_op("reshape(x, shape)", "same elements, new shape (-1 infers one dimension)", attrs=("shape",))
_op("concat(values, axis=0)", "join a list of tensors along an existing axis", variadic=True)
_op("stack(values, axis=0)", "join a list of tensors along a new axis", variadic=True)
_op("one_hot(indices, depth)", "float one-hot rows of length depth for integer indices",
    attrs=("depth",))
_op("getitem(x, index)", "x[index]: integers, slices, None and integer lists", attrs=("index",))

# ----- seeded random draws (the same numbers on every replay) -----
_op("uniform(shape, low=0.0, high=1.0)", "uniform draw in [low, high)", attrs=("shape",))
_op("normal(shape, mean=0.0, std=1.0)", "normal draw", attrs=("shape",))
_op("bernoulli(shape, p=0.5)", "0/1 draw with P(1) = p", attrs=("shape",))

# ----- gradient control -----
_op("grad_pass_through(e, wrt=None)",
    "forward e, backward identity into wrt (default: the one float name e uses), "
    "as tf.grad_pass_through")
_op("reverse_gradient(x, scale=1.0)", "forward x, backward -scale * dy (gradient reversal layer)")
_op("zero_out(x)", "two outputs: x with all but the first element zeroed, and that index",
    outputs=2)
_op("argmax(x, axis=-1)", "int64 index of the largest entry along axis; ties and NaNs: the first "
    "(as numpy); not differentiable")
_op("argmin(x, axis=-1)", "int64 index of the smallest entry along axis; ties and NaNs: the first "
    "(as numpy); not differentiable")
_op("max_with_argmax(x, axis=-1)",
    "two outputs: max along axis and its integer index (not differentiable)", outputs=2)

OPERATORS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "**": "pow", "@": "matmul",
             "<": "less", "<=": "less_equal", ">": "greater", ">=": "greater_equal",
             "==": "equal", "!=": "not_equal", "&": "logical_and", "|": "logical_or"}
UNARY_OPERATORS = {"-": "neg", "~": "logical_not", "+": "identity"}
DTYPES = ("float32", "float64", "int32", "int64", "bool")

# Named gradients every backend provides out of the box (gradcli list gradients).
BUILTIN_GRADIENTS = {
    "identity": "dy: the plain straight-through estimator",
    "hardtanh": "dy where |x| <= 1, else 0: straight-through inside [-1, 1] (the seeds' QuantizeGrad)",
    "reverse": "-dy: flips the gradient",
    "zero": "0: blocks the gradient but keeps the input connected",
}
