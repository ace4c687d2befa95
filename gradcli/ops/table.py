"""The op table: every op of the expression language, written once.

One `op(...)` line per op: its signature and doc, its numpy kernel (where it lives: "np.exp"
in numpy, "K.elu" in kernels.py, imported on first use, so that the table's data needs no
numpy; or a function; or a formula over other ops, which then serves numpy and every
framework alike), its operator, whether its inputs take a gradient, and per framework only
the spelling that differs from torch.<name>, jnp.<name> or tf.math.<name>. A spelling is a
dotted path, called with the tensors and the attributes by name, or a call template such as
"F.leaky_relu(x, negative_slope=alpha)"; None means that backend writes its own (in
backends/<framework>.py, whose test checks the two lists agree). The core's builders,
the parser's operators, `gradcli list ops`, the JSON Schema and every backend's op map are
derived from this table; the gradient rules live in core/grad_rules.py.
"""
from __future__ import annotations

import math
import operator as py
import struct

from .entry import OPS as _OPS
from .entry import op

OWN = None  # the backend writes this op itself


def f32(value) -> float:
    """value rounded to float32, as float(np.float32(value)) (bit for bit), without numpy."""
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:  # beyond float32's range: numpy rounds to an infinity
        return math.copysign(math.inf, value)


# TensorFlow 2.21 rounds these constants to float32 (tf.cast of a Python float, a float attr):
# the table follows, so float64 values agree with TensorFlow's to the last bit.
SQRT_HALF_F32 = f32(0.7071067811865476)


# ----- elementwise, one input -----
op("abs(x)", "absolute value; gradient sign(x)", py.abs, family="unary", jax=OWN)
op("sign(x)", "-1, 0 or 1; true gradient zero everywhere", "np.sign", family="unary", step=True)
op("neg(x)", "negation", py.neg, family="unary", prefix="-", jax="jnp.negative",
   tensorflow="tf.math.negative")
op("exp(x)", "e to the x", "np.exp", family="unary")
op("log(x)", "natural logarithm", "np.log", family="unary")
op("sqrt(x)", "square root", "np.sqrt", family="unary")
op("square(x)", "x * x", "np.square", family="unary")
op("sin(x)", "sine", "np.sin", family="unary")
op("cos(x)", "cosine", "np.cos", family="unary")
op("tanh(x)", "hyperbolic tangent", "np.tanh", family="unary")
op("sigmoid(x)", "logistic function 1 / (1 + exp(-x))", "K.sigmoid", family="unary",
   jax="nn.sigmoid")
op("relu(x)", "max(x, 0); gradient 0 at 0, as in TensorFlow", "K.relu", family="unary",
   jax="nn.relu", tensorflow="tf.nn.relu")
op("softplus(x)", "log(1 + exp(x)), computed stably", "K.softplus", family="unary", torch=OWN,
   jax="jnp.logaddexp(x, 0.0)")
op("round(x)", "round half to even, as tf.round; true gradient zero", "np.round", family="unary",
   step=True, no_gradient_in=("tensorflow",))
op("floor(x)", "round down; true gradient zero", "np.floor", family="unary", step=True,
   no_gradient_in=("tensorflow",))
op("ceil(x)", "round up; true gradient zero", "np.ceil", family="unary", step=True,
   no_gradient_in=("tensorflow",))
op("reciprocal(x)", "1 / x", "K.reciprocal", family="unary")
op("identity(x)", "forward x, gradient dy; the usual target of an override", "K.identity",
   family="unary", prefix="+", torch="torch.clone", jax="jnp.array(x, copy=True)",
   tensorflow="tf.identity")
op("stop_gradient(x)", "forward x, no gradient (tf.stop_gradient)", native=False)
op("zeros_like(x)", "zeros of x's shape and dtype", "np.zeros_like", family="unary",
   gradient=False, tensorflow="tf.zeros_like")
op("ones_like(x)", "ones of x's shape and dtype", "np.ones_like", family="unary", gradient=False,
   tensorflow="tf.ones_like")
op("logical_not(x)", "~x on booleans", "np.logical_not", family="unary", gradient=False,
   prefix="~", result="bool")

# ----- elementwise, two inputs (operators map here; precedence: higher binds tighter) -----
op("add(x, y)", "x + y", py.add, family="binary", operator="+", precedence=4)
op("sub(x, y)", "x - y", py.sub, family="binary", operator="-", precedence=4,
   jax="jnp.subtract", tensorflow="tf.math.subtract")
op("mul(x, y)", "x * y", py.mul, family="binary", operator="*", precedence=5,
   jax="jnp.multiply", tensorflow="tf.math.multiply")
op("div(x, y)", "x / y", py.truediv, family="binary", operator="/", precedence=5,
   torch=OWN, jax=OWN, tensorflow=OWN)
op("pow(x, y)", "x ** y", py.pow, family="binary", operator="**", precedence=7,
   jax="jnp.power")
op("maximum(x, y)", "elementwise max; ties send the gradient to x, as TensorFlow", "np.maximum",
   family="binary", torch=OWN, jax=OWN)
op("minimum(x, y)", "elementwise min; ties send the gradient to x, as TensorFlow", "np.minimum",
   family="binary", torch=OWN, jax=OWN)
for _name, _text, _fn, _torch in [("less", "<", py.lt, "lt"), ("less_equal", "<=", py.le, "le"),
                                  ("greater", ">", py.gt, "gt"),
                                  ("greater_equal", ">=", py.ge, "ge"),
                                  ("equal", "==", py.eq, "eq"), ("not_equal", "!=", py.ne, "ne")]:
    op(f"{_name}(x, y)", f"x {_text} y", _fn, family="binary", operator=_text, precedence=3,
       gradient=False, chains=False, result="bool", torch=f"torch.{_torch}")
op("logical_and(x, y)", "x & y on booleans", "np.logical_and", family="binary", operator="&",
   precedence=2, gradient=False, result="bool")
op("logical_or(x, y)", "x | y on booleans", "np.logical_or", family="binary", operator="|",
   precedence=1, gradient=False, result="bool")

op("matmul(a, b)", "matrix product a @ b", py.matmul, family="binary", operator="@",
   precedence=5, tensorflow="tnp.matmul")
op("clip(x, lo, hi)", "clip to [lo, hi] (tf.clip_by_value); gradient dy inside, 0 outside",
   "K.clip", torch=OWN, jax=OWN, tensorflow="tf.clip_by_value")
op("where(cond, a, b)", "a where cond else b; the gradient flows to the chosen branch", "np.where",
   gradient=(False, True, True), tensorflow="tf.where")
op("cast(x, dtype)", "convert to dtype (float32, float64, int32, int64, bool)", "K.cast", attrs=("dtype",),
   torch=OWN, jax="jnp.asarray(x, dtype=dtype)", tensorflow="tf.cast")
op("dtype(x)", "the dtype of x, for cast(y, dtype(x))", native=False, result="dtype",
   interpreted=True)

# ----- reductions and shape -----
# A backend adapts its reductions' axes once (None: all; (): a copy); the spellings get a tuple.
# sum and mean of an integer or boolean tensor follow TensorFlow, where every framework differs
# (numpy and jax widen or give a float, torch refuses): each backend writes them itself.
op("sum(x, axis=None, keepdims=False)", "sum over axis (all by default); an integer sum keeps "
   "its dtype and wraps, as tf.reduce_sum; a boolean has none (cast it first)", "K.reduce_sum",
   family="reduction", torch=OWN, jax=OWN, tensorflow=OWN)
op("mean(x, axis=None, keepdims=False)", "mean over axis; of integers, tf.reduce_mean's: the "
   "sum divided by the count, truncated toward zero, in x's dtype (0 over none); a boolean "
   "has none (cast it first)", "K.mean", family="reduction", torch=OWN, jax=OWN,
   tensorflow=OWN)


# Which parameters of an op must hold one dtype: TensorFlow 2.21 promotes none of them
# (int64 + float64, int32 + int64, float32 + float64, a boolean beside a number tensor: every
# binary op, where's branches, clip's bounds, concat's and stack's list all refuse the mix).
def same_dtype_params(spec) -> tuple:
    """The tensor parameters of spec that must share one dtype (a variadic op: its list)."""
    if spec.family == "binary" or spec.variadic or spec.name == "clip":
        return spec.tensor_params
    return ("a", "b") if spec.name == "where" else ()


DTYPE_ORDER = ("bool", "int32", "int64", "float32", "float64")  # a hint casts up this order


def non_integer_indices(op_name: str, dtype_name: str) -> str:
    """Why an op that takes indices (one_hot) refuses a float or boolean tensor of them, in the
    words of the numpy core and of the eager backends (TensorFlow's own error is a NodeDef)."""
    return f"{op_name}() needs integer indices, got {dtype_name}"


def mixed_dtypes(op_name: str, dtypes, arguments=None) -> tuple:
    """(why an op on tensors of two dtypes is refused, what to write instead), in the words of
    every backend and of the loader (spec/dtypes.py). arguments: the two operands' texts,
    where the loader knows them; the hint casts the lower one (DTYPE_ORDER) to the other."""
    pair = sorted(dtypes[:2], key=lambda d: DTYPE_ORDER.index(d) if d in DTYPE_ORDER else 9)
    low, high = pair
    if arguments is not None:
        texts = dict(zip(dtypes, arguments))
        like = f"dtype({texts[high]})" if texts[high].isidentifier() else high
        cast = f"cast({texts[low]}, {like})"
    else:
        cast = f"cast(<the {low} one>, {high})"
    first, second = (("an " if d.startswith("int") else "a ") + d for d in dtypes[:2])
    return (f"{op_name}() of {first} tensor and {second} tensor is not defined, as TensorFlow "
            "promotes neither dtype to the other",
            f"cast one of them first: {cast}")


FLOAT_ONLY = {"logsumexp": "reduce_logsumexp", "softmax": "nn.softmax",
              "log_softmax": "nn.log_softmax"}


def non_float(op_name: str, dtype_name: str, argument: str = "k",
              like: str = "dtype(x)") -> tuple:
    """(why a FLOAT_ONLY op refuses this dtype, what to write instead), in the words of every
    backend and of the loader (spec/dtypes.refuse_non_floats)."""
    article = "an" if dtype_name[0] in "aeiou" else "a"
    return (f"{op_name} of {article} {dtype_name} tensor is not defined, as TensorFlow's "
            f"{FLOAT_ONLY[op_name]} has floats only",
            f"cast it first: {op_name}(cast({argument}, {like}))")


# The reductions TensorFlow has no boolean kernel for (numpy and jax would count, torch fail
# or answer in its own words): refused on every backend and by the loader (spec/booleans.py).
BOOLEAN_REFUSED = ("sum", "mean", "max", "min", "prod")


def boolean_reduction(op_name: str, argument: str = "x > 0", like: str = "dtype(x)") -> tuple:
    """(why a sum, mean, max, min or prod of a boolean is refused, what to write instead), in
    the words of every backend and of the loader (spec/booleans.py): TensorFlow has no boolean
    kernel for any of them."""
    return (f"{op_name} of a boolean tensor is not defined, as TensorFlow's reduce_{op_name} "
            "has no boolean kernel", f"cast it first: {op_name}(cast({argument}, {like}))")


# The ops whose input's dtype refused_dtype is asked about (a float input is never refused).
DTYPE_REFUSING = frozenset(FLOAT_ONLY) | frozenset(BOOLEAN_REFUSED)


def refused_dtype(op_name: str, dtype_name: str) -> str | None:
    """Why op_name refuses an input of dtype_name (a FLOAT_ONLY op an integer or boolean, a
    BOOLEAN_REFUSED reduction a boolean), or None where it takes it. Asked once per op built,
    where its input's dtype is known: by the core's builders (core/building.refuse_dtype) and
    where an eager backend binds an op's arguments (backends/eager_args.py); the kernels only
    compute."""
    if op_name in FLOAT_ONLY:
        if not dtype_name.startswith("float"):
            message, hint = non_float(op_name, dtype_name)
            return f"{message}; {hint}, x a float tensor"
    elif dtype_name == "bool" and op_name in BOOLEAN_REFUSED:
        return "%s; %s" % boolean_reduction(op_name)
    return None


def no_boolean_kernel(spec) -> bool:
    """Whether TensorFlow 2.21 has no boolean kernel for this op (NO_BOOLEAN_KERNEL)."""
    return ((spec.family in ("unary", "binary") or spec.name in ("clip", "max_with_argmax"))
            and spec.name not in BOOLEAN_KERNELS and spec.name not in FLOAT_ONLY)


# The one- and two-input ops that TensorFlow 2.21 runs on booleans: every other one (add, sub,
# mul, div, pow, neg, abs, sign, square, maximum, minimum, <, <=, >, >=, @, exp, ...), clip and
# max_with_argmax (its values are tf.math.top_k(x, 1)'s, a max, as reduce_max's) have no boolean
# kernel there ("Value for attr 'T' of bool is not in the list of allowed
# values"; truediv: "Invalid dtype tf.bool in __truediv__"), where numpy would answer True + True
# = True and torch and jax much of it too.
BOOLEAN_KERNELS = frozenset({"identity", "zeros_like", "ones_like", "logical_not", "equal",
                             "not_equal", "logical_and", "logical_or"})
_LOGICAL = {"neg": "~ for not", "mul": "& for and", "add": "| for or"}


def boolean_arithmetic(op_name: str, inputs: int = 2, argument: str = "c",
                       like: str = "dtype(x)") -> tuple:
    """(why an op without a boolean kernel (no_boolean_kernel) is refused on booleans, what to
    write instead), in the words of every backend and of the loader (spec/booleans.py)."""
    which = "a boolean tensor" if inputs == 1 else "boolean tensors"
    logical = _LOGICAL.get(op_name)
    return (f"{op_name}() of {which} is not defined, as TensorFlow has no boolean kernel for "
            f"it", f"cast first: cast({argument}, {like})"
            + (f"; on booleans, write {logical}" if logical else ""))


def float_number(op_name: str, number: str, dtype: str, tensor: str | None = None,
                 like: str | None = None) -> tuple:
    """(why a float number beside an integer tensor is refused by an op whose operands share
    one dtype: k + 2.0, where's branches, clip's bounds, concat's or stack's list; what to
    write instead), in the words of every backend
    and of the loader (spec/dtypes.py): TensorFlow converts the number to the tensor's dtype
    and refuses a float there ("Cannot convert 2.0 to EagerTensor of dtype int64"), where a
    whole float became the integer silently. A bare integer takes the integer dtype."""
    cast = f"cast({tensor}, {like})" if tensor is not None else f"cast(<the {dtype} one>, {like})"
    return (f"{op_name}() of an {dtype} tensor and the float number {number} is not defined, "
            f"as TensorFlow converts no float number to {dtype}",
            f"write an integer number, or cast the tensor first: {cast}")


# max, min and prod of a boolean are refused as sum and mean are (TensorFlow has no boolean
# kernel for them either): each backend writes them itself to say so in these words
for _name, _kernel, _torch, _jax, _tf, _doc in [
    ("max", "K.reduce_max", OWN, OWN, OWN, "max over axis; ties share the gradient equally, as "
     "TensorFlow; a boolean has none (cast it first)"),
    ("min", "K.reduce_min", OWN, OWN, OWN, "min over axis; ties share the gradient equally, as "
     "TensorFlow; a boolean has none (cast it first)"),
    ("prod", "K.reduce_prod", OWN, OWN, OWN, "product over axis; a boolean has none (cast it first)"),
    ("logsumexp", "K.logsumexp", "logsumexp", "jsp.logsumexp", "tf.reduce_logsumexp",
     "log(sum(exp(x))) over axis, computed stably"),
]:
    op(f"{_name}(x, axis=None, keepdims=False)", _doc, _kernel, family="reduction",
       torch=_torch and f"torch.{_torch}(x, dim=axis, keepdim=keepdims)", jax=_jax,
       tensorflow=_tf)
op("softmax(x, axis=-1)", "softmax along axis", "K.softmax", family="unary",
   torch="torch.softmax(x, dim=axis)", jax="nn.softmax", tensorflow="tf.nn.softmax")
op("log_softmax(x, axis=-1)", "log of softmax along axis, computed stably", "K.log_softmax",
   family="unary", torch="torch.log_softmax(x, dim=axis)", jax="nn.log_softmax",
   tensorflow="tf.nn.log_softmax")
op("sparse_softmax_cross_entropy_with_logits(labels, logits)",
   "-log(softmax(logits)[labels]) per row over the last axis in one kernel, as tf.nn's: int "
   "labels in [0, classes) (others fail), no gradient into them; gradient softmax - one_hot",
   "K.sparse_softmax_cross_entropy_with_logits", gradient=(False, True), torch=OWN, jax=OWN,
   tensorflow=OWN)
op("transpose(x, axes=None)", "permute axes (reverse them by default)", "np.transpose",
   torch="torch.permute(x, axes)", tensorflow="tf.transpose(x, perm=axes)")
op("reshape(x, shape)", "same elements, new shape (-1 infers one dimension)", "K.reshape",
   attrs=("shape",), tensorflow="tf.reshape")
op("concat(values, axis=0)", "join a list of tensors along an existing axis", "K.concat", variadic=True,
   torch=OWN, jax=OWN, tensorflow=OWN)
op("stack(values, axis=0)", "join a list of tensors along a new axis", "K.stack", variadic=True,
   torch=OWN, jax=OWN, tensorflow=OWN)
op("one_hot(indices, depth)", "float one-hot rows of length depth for integer indices; an index "
   "outside [0, depth) (as -1) gives a row of zeros, as tf.one_hot",
   "K.one_hot", attrs=("depth",), gradient=False, torch=OWN, jax=OWN, tensorflow=OWN)
op("getitem(x, index)", "x[index]: integers, slices, None and integer lists", "K.getitem",
   attrs=("index",), torch=OWN, jax=OWN, tensorflow=OWN)

# ----- composites: built from the table's own ops on every backend (native=False + formula) -----
def _clip_by_norm(o, t, clip_norm, axes=None):
    # tf.clip_by_norm as TensorFlow 2.21 builds it (clip_ops.py), op for op: a negative
    # clip_norm counts as 0; where l2sum is 0, sqrt is taken of 1 instead and not used (the
    # two-tap where), so an all-zero t keeps a finite gradient; ties of the norm and clip_norm
    # send the gradient through the norm (maximum's first input). The final identity is TF's.
    clip_norm = o.maximum(clip_norm, 0.0)
    l2sum = o.sum(o.mul(t, t), axis=axes, keepdims=True)
    pred = o.greater(l2sum, 0.0)
    l2sum_safe = o.where(pred, l2sum, o.ones_like(l2sum))
    l2norm = o.where(pred, o.sqrt(l2sum_safe), l2sum)
    return o.identity(o.div(o.mul(t, clip_norm), o.maximum(l2norm, clip_norm)))


op("clip_by_norm(t, clip_norm, axes=None)",
   "t * clip_norm / max(l2norm(t), clip_norm), the norm over axes (all by default), as "
   "tf.clip_by_norm; built from its ops as TF's, so the gradient flows through the norm too",
   formula=_clip_by_norm, native=False)


# ----- seeded random draws (the same numbers on every replay) -----
op("uniform(shape, low=0.0, high=1.0)", "uniform draw in [low, high)", "K.uniform_draw",
   attrs=("shape",), native=False, draw=True)
op("normal(shape, mean=0.0, std=1.0)", "normal draw", "K.normal_draw", attrs=("shape",),
   native=False, draw=True)
op("bernoulli(shape, p=0.5)", "0/1 draw with P(1) = p", "K.bernoulli_draw", attrs=("shape",),
   native=False, draw=True)

# ----- gradient control -----
op("grad_pass_through(e, wrt=None)",
   "forward e, backward identity into wrt (default: the one float name e uses), "
   "as tf.grad_pass_through", native=False, interpreted=True)
op("reverse_gradient(x, scale=1.0)", "forward x, backward -scale * dy (gradient reversal layer)",
   native=False)
op("zero_out(x)", "two outputs: x with all but the first element zeroed, and that index",
   "K.zero_out", outputs=2, native=False)
op("max_with_argmax(x, axis=-1)",
   "two outputs: max along axis and its int64 index, the first of ties and NaNs (as argmax); "
   "the gradient goes all to that index (as tf.math.top_k(x, 1)); the index has none",
   "K.max_with_argmax",
   outputs=2, family="along_axis", torch=OWN, jax=OWN, tensorflow=OWN)
op("argmax(x, axis=-1)", "int64 index of the largest entry along axis; ties and NaNs: the first "
   "(as numpy); not differentiable", "np.argmax", family="along_axis",
   gradient=False, result="index",
   torch="torch.argmax(x, dim=axis)", tensorflow=OWN)
op("argmin(x, axis=-1)", "int64 index of the smallest entry along axis; ties and NaNs: the first "
   "(as numpy); not differentiable", "np.argmin", family="along_axis",
   gradient=False, result="index",
   torch="torch.argmin(x, dim=axis)", tensorflow=OWN)


# ----- grown on the table: each is this one entry plus its gradient rule -----
op("log1p(x)", "log(1 + x), accurate near 0", "np.log1p", family="unary")
op("expm1(x)", "exp(x) - 1, accurate near 0", "np.expm1", family="unary")
op("erf(x)", "error function", "K.erf", family="unary", jax="jsp.erf", tensorflow=OWN)
op("erfc(x)", "complementary error function 1 - erf(x), accurate where erf(x) is near 1",
   "K.erfc", family="unary", jax="jsp.erfc")
op("atan(x)", "arctangent", "np.arctan", family="unary", jax="jnp.arctan")
op("asinh(x)", "inverse hyperbolic sine", "np.arcsinh", family="unary", jax="jnp.arcsinh")
op("sinh(x)", "hyperbolic sine", "np.sinh", family="unary")
op("cosh(x)", "hyperbolic cosine", "np.cosh", family="unary")
op("softsign(x)", "x / (|x| + 1), as tf.nn.softsign (NaN at +-inf, gradient 0 there)",
   "K.softsign", family="unary", torch="F.softsign", jax="nn.soft_sign",
   tensorflow="tf.nn.softsign")
op("leaky_relu(x, alpha=0.2)", "x where x > 0, else alpha * x, alpha rounded to float32 (as "
   "tf.nn.leaky_relu, whose default alpha is 0.2); gradient alpha at 0 and at NaN", family="unary",
   formula=lambda o, x, alpha=0.2: o.where(o.greater(x, 0.0), x, o.mul(x, f32(alpha))),
   tensorflow="tf.nn.leaky_relu(x, alpha=alpha)")
op("elu(x)", "x where x > 0, else exp(x) - 1 (tf.nn.elu); gradient 1 at 0", "K.elu",
   family="unary", torch="F.elu", jax="nn.elu", tensorflow="tf.nn.elu")
op("relu6(x)", "min(max(x, 0), 6) (tf.nn.relu6); gradient 0 at 0 and at 6", "K.relu6",
   family="unary", torch="F.relu6", jax="nn.relu6", tensorflow="tf.nn.relu6")
op("gelu(x)", "exact GELU 0.5 * x * erfc(-x * sqrt(1/2)), as tf.nn.gelu(approximate=False): "
   "sqrt(1/2) rounded to float32, NaN at -inf, gradient NaN at +inf, as there", family="unary",
   formula=lambda o, x: o.mul(o.mul(x, 0.5), o.erfc(o.mul(o.neg(x), SQRT_HALF_F32))),
   tensorflow="tf.nn.gelu(x, approximate=False)")
op("silu(x)", "x * sigmoid(x) (swish), as tf.nn.silu", "K.silu", family="unary", torch="F.silu",
   jax="nn.silu", tensorflow="tf.nn.silu")
op("hard_sigmoid(x)", "relu6(x + 3) / 6, as Keras 3's hard_sigmoid (tf.keras.activations in TF "
   "2.21): 0 up to -3, 1 from 3; gradient 1/6 strictly between", family="unary",
   formula=lambda o, x: o.div(o.relu6(o.add(x, 3.0)), 6.0))
op("heaviside(x)", "1 where x > 0, else 0 (so 0 at 0 and at NaN); true gradient zero: the spike "
   "of surrogate-gradient networks, whose gradient an override_map replaces", family="unary",
   formula=lambda o, x: o.where(o.greater(x, 0.0), o.ones_like(x), o.zeros_like(x)), step=True,
   no_gradient_in=("torch", "tensorflow"))  # neither branch of the where depends on x


# the ops refused on booleans on every backend and by the loader (no_boolean_kernel)
NO_BOOLEAN_KERNEL = frozenset(name for name, spec in _OPS.items() if no_boolean_kernel(spec))
