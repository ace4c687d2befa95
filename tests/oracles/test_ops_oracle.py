"""Every op of `gradcli list ops` against the function it is documented to be.

Values come from numpy, gradients (overridden and true) from TensorFlow's GradientTape in
float64 with a random upstream gradient (the spec's grad_ys, TF's output_gradients), both
called directly here. Each op is one spec with several shapes and axes, run through the
user's path on every backend. ORACLES holds one line per op: an op without one fails.
"""
from __future__ import annotations

import functools
import json
import math
import re
import types

import numpy as np
import pytest
from available import backend_params
from oracle_helpers import check, literal, mismatch, run_spec, tensorflow

from gradcli.ops import OPERATORS, OPS

tf = tensorflow()
f64 = tf.float64

# ----- the inputs every op draws from -----
_rng = np.random.default_rng(20261123)


def _away_from_zero(*shape):
    return _rng.uniform(0.3, 2.0, shape) * _rng.choice([-1.0, 1.0], shape)


INPUTS = {
    "a": _away_from_zero(3), "b": _away_from_zero(2, 3), "b2": _away_from_zero(2, 3),
    "c": _away_from_zero(2, 3, 4), "s": np.float64(-0.7), "r": _away_from_zero(3, 1),
    "q": _away_from_zero(2, 4), "m": _away_from_zero(3, 4), "n": _away_from_zero(4, 2),
    "pa": _rng.uniform(0.3, 2.5, 3), "pb": _rng.uniform(0.3, 2.5, (2, 3)),
    "pc": _rng.uniform(0.3, 2.5, (2, 3, 4)), "ps": np.float64(1.3),
    "t": _rng.integers(-1, 2, (2, 3, 4)).astype(np.float64),   # ties and zeros
    "h": np.array([-2.5, -1.5, -0.5, 0.0, 0.5, 1.5, 2.5]),     # halves: round to even
    "w": np.array([-60.0, -3.0, 0.0, 3.0, 60.0]),             # wide: stable formulas
    "big": np.array([[1000.0, 999.0, -5.0], [0.5, 700.0, 701.0]]),
    "lo": -_rng.uniform(0.2, 1.0, 3), "hi": np.float64(0.6),
    "i": np.array([0, 3, 1, 2]), "i2": np.array([[2, 0], [1, 1]]),
}
INPUTS["bt"] = np.where([[True, False, True], [False, True, False]], INPUTS["b"], INPUTS["b2"])
# logits for the fused cross-entropy (drawn last: the inputs above keep their numbers)
INPUTS.update(lg=_away_from_zero(4, 5), lg3=_away_from_zero(2, 2, 3), yb=np.array([2, 0]),
              i0=np.int64(2))
POOLS = {"any": ("a", "b", "c", "s"), "pos": ("pa", "pb", "pc", "ps"),
         "all": ("a", "b", "c", "s", "t", "h", "w")}


@functools.lru_cache(maxsize=None)
def _pos_operator():
    return {v: k for k, v in OPERATORS.items() if v not in ("logical_and", "logical_or")}


# ----- one variant: a spec expression, its numpy value, its TF forward (and true forward) -----
class V:
    """`expr` in the spec; `np_fn(v)` and `tf_fn(v)` read inputs as attributes of v.

    tf_true is the forward whose derivative the true gradient is (default tf_fn); lets are
    spec lines the expression needs (multi-output ops)."""

    def __init__(self, expr, np_fn, tf_fn=None, tf_true=None, lets=()):
        self.expr, self.np_fn, self.tf_fn = expr, np_fn, tf_fn
        self.tf_true = tf_true or tf_fn
        self.lets = lets


def _arg(v, token):
    return getattr(v, token) if token in INPUTS else float(token)


def unary(name, np_fn, tf_fn, pool="any", tf_true=None):
    return [V(f"{name}({x})", lambda v, x=x: np_fn(getattr(v, x)),
              lambda v, x=x: tf_fn(getattr(v, x)),
              tf_true and (lambda v, x=x: tf_true(getattr(v, x)))) for x in POOLS[pool]]


ARITH_PAIRS = (("b", "b2"), ("b", "a"), ("a", "b"), ("s", "c"), ("c", "r"), ("b", "1.5"))
TIE_PAIRS = (("b", "bt"), ("c", "r"), ("a", "b"), ("t", "0.0"), ("s", "c"))


def binary(name, np_fn, tf_fn, pairs=ARITH_PAIRS):
    variants = [V(f"{name}({x}, {y})", lambda v, x=x, y=y: np_fn(_arg(v, x), _arg(v, y)),
                  lambda v, x=x, y=y: tf_fn(_arg(v, x), _arg(v, y))) for x, y in pairs]
    if name in _pos_operator():  # the operator spelling maps to the same op
        x, y = pairs[1]
        variants.append(V(f"({x} {_pos_operator()[name]} {y})", variants[1].np_fn, variants[1].tf_fn))
    return variants


def compare(name, np_fn, tf_fn):
    variants = binary(name, np_fn, tf_fn, TIE_PAIRS)
    for variant in variants:
        variant.tf_fn = variant.tf_true = None  # booleans: no gradient anywhere
    return variants


def logical(name, np_fn):
    return [V(f"{name}(b > 0, bt > 0)", lambda v: np_fn(v.b > 0, v.bt > 0)),
            V(f"{name}(c > 0, r < 0)", lambda v: np_fn(v.c > 0, v.r < 0)),
            V(f"(b > 0) {'&' if name == 'logical_and' else '|'} (a < 0)",
              lambda v: np_fn(v.b > 0, v.a < 0))]


REDUCE_AXES = (("c", None, False), ("c", 0, False), ("c", -1, True), ("c", [0, 2], False),
               ("c", 1, True), ("b", -2, False), ("a", 0, True), ("s", None, False))


def reduction(name, np_fn, tf_fn, inputs=("c", "b", "a", "s"), extra=()):
    variants = []
    for x, axis, keep in REDUCE_AXES + extra:
        x = {"c": inputs[0]}.get(x, x)
        np_axis = tuple(axis) if isinstance(axis, list) else axis
        variants.append(V(f"{name}({x}, axis={axis}, keepdims={keep})",
                          lambda v, x=x, a=np_axis, k=keep: np_fn(getattr(v, x), axis=a, keepdims=k),
                          lambda v, x=x, a=axis, k=keep: tf_fn(getattr(v, x), axis=a, keepdims=k)))
    variants.append(V(f"{name}({inputs[0]})", lambda v: np_fn(getattr(v, inputs[0]), axis=None),
                      lambda v: tf_fn(getattr(v, inputs[0]), axis=None)))
    return variants


def np_logsumexp(x, axis=None, keepdims=False):
    top = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True)) + top
    return out if keepdims else np.squeeze(out, axis=axis) if axis is not None else out.reshape(())


def np_softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def np_log_softmax(x, axis=-1):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def along_axis(name, np_fn, tf_fn):
    return [V(f"{name}({x}{'' if axis is None else f', axis={axis}'})",
              lambda v, x=x, a=axis: np_fn(getattr(v, x), axis=-1 if a is None else a),
              lambda v, x=x, a=axis: tf_fn(getattr(v, x), axis=-1 if a is None else a))
            for x, axis in (("b", None), ("c", 0), ("c", 1), ("big", -1), ("a", None), ("big", 0))]


def custom(forward, backward):
    """A TF op with forward(x) and gradient backward(x, dy), via tf.custom_gradient."""
    @tf.custom_gradient
    def op(x):
        return forward(x), lambda dy: backward(x, dy)
    return op


def reverse_gradient(scale):
    return custom(tf.identity, lambda x, dy: -scale * dy)


def take_max(x, axis):
    """The max along axis, read at tf.argmax: the gradient goes to the argmax element only."""
    index = tf.expand_dims(tf.argmax(x, axis=axis), axis)
    return tf.squeeze(tf.experimental.numpy.take_along_axis(x, index, axis), axis)


def first_only(x):
    mask = np.zeros(x.shape)
    mask.flat[0] = 1.0
    return x * mask


np_erf, np_erfc = np.vectorize(math.erf), np.vectorize(math.erfc)


def np_gelu(x):
    # tf.nn.gelu(approximate=False) rounds sqrt(1/2) to float32 (tf.cast of a Python float)
    return 0.5 * x * np_erfc(-x * float(np.float32(np.sqrt(0.5))))


def np_clip_by_norm(t, clip_norm, axes):
    norm = np.sqrt(np.sum(t * t, axis=None if axes is None else tuple(axes), keepdims=True))
    return t * clip_norm / np.maximum(norm, clip_norm)


def np_xent(labels, logits):
    """-log(softmax(logits)[label]) per row, from numpy's logaddexp, not gradcli's kernel."""
    picked = np.take_along_axis(logits, np.expand_dims(labels, -1), axis=-1)[..., 0]
    return np.logaddexp.reduce(logits, axis=-1) - picked


ZERO_C, MAX_C, MAX_B = ("z1, zi1: zero_out(c)", "mv1, mi1: max_with_argmax(c, axis=1)",
                        "mv2, mi2: max_with_argmax(b)")
RANDOM = "random"  # seeded draws: checked by test_random_draws below, not against a function

ORACLES = {
    "abs": unary("abs", np.abs, tf.abs, "all"),
    "sign": unary("sign", np.sign, tf.sign, "all"),
    "neg": unary("neg", np.negative, tf.negative) + [V("-b", lambda v: -v.b, lambda v: -v.b)],
    "exp": unary("exp", np.exp, tf.exp, "all"),
    "log": unary("log", np.log, tf.math.log, "pos"),
    "sqrt": unary("sqrt", np.sqrt, tf.sqrt, "pos"),
    "square": unary("square", np.square, tf.square, "all"),
    "sin": unary("sin", np.sin, tf.sin, "all"),
    "cos": unary("cos", np.cos, tf.cos, "all"),
    "tanh": unary("tanh", np.tanh, tf.tanh, "all"),
    "sigmoid": unary("sigmoid", lambda x: 1 / (1 + np.exp(-x)), tf.sigmoid, "all"),
    "relu": unary("relu", lambda x: np.maximum(x, 0.0), tf.nn.relu, "all"),
    "softplus": unary("softplus", lambda x: np.logaddexp(0.0, x), tf.nn.softplus, "all"),
    "round": unary("round", np.round, tf.round, "all"),
    "floor": unary("floor", np.floor, tf.floor, "all"),
    "ceil": unary("ceil", np.ceil, tf.math.ceil, "all"),
    "reciprocal": unary("reciprocal", np.reciprocal, tf.math.reciprocal),
    "identity": unary("identity", lambda x: x, tf.identity, "all"),
    "stop_gradient": unary("stop_gradient", lambda x: x, tf.stop_gradient, tf_true=tf.identity),
    "zeros_like": unary("zeros_like", np.zeros_like, tf.zeros_like),
    "ones_like": unary("ones_like", np.ones_like, tf.ones_like),
    "logical_not": [V("logical_not(b > 0)", lambda v: ~(v.b > 0)), V("~(c < 0.5)", lambda v: ~(v.c < 0.5))],
    "add": binary("add", np.add, tf.add),
    "sub": binary("sub", np.subtract, tf.subtract),
    "mul": binary("mul", np.multiply, tf.multiply),
    "div": binary("div", np.divide, tf.divide),
    "pow": binary("pow", np.power, tf.pow, (("pb", "b"), ("pb", "a"), ("b", "2.0"), ("b", "3.0"),
                                            ("pa", "s"), ("pc", "r"))),
    "maximum": binary("maximum", np.maximum, tf.maximum, TIE_PAIRS),
    "minimum": binary("minimum", np.minimum, tf.minimum, TIE_PAIRS),
    "less": compare("less", np.less, tf.less),
    "less_equal": compare("less_equal", np.less_equal, tf.less_equal),
    "greater": compare("greater", np.greater, tf.greater),
    "greater_equal": compare("greater_equal", np.greater_equal, tf.greater_equal),
    "equal": compare("equal", np.equal, tf.equal),
    "not_equal": compare("not_equal", np.not_equal, tf.not_equal),
    "logical_and": logical("logical_and", np.logical_and),
    "logical_or": logical("logical_or", np.logical_or),
    "matmul": [V("matmul(b, m)", lambda v: v.b @ v.m, lambda v: tf.matmul(v.b, v.m)),
               V("c @ n", lambda v: v.c @ v.n, lambda v: tf.matmul(v.c, v.n)),
               V("m @ n", lambda v: v.m @ v.n, lambda v: v.m @ v.n),
               V("b @ a", lambda v: v.b @ v.a, lambda v: tf.linalg.matvec(v.b, v.a))],
    "clip": [V("clip(b, -0.5, 0.7)", lambda v: np.clip(v.b, -0.5, 0.7),
               lambda v: tf.clip_by_value(v.b, -0.5, 0.7)),
             V("clip(b, lo, hi)", lambda v: np.clip(v.b, v.lo, v.hi),
               lambda v: tf.clip_by_value(v.b, v.lo, v.hi)),
             V("clip(t, -1, 0)", lambda v: np.clip(v.t, -1, 0), lambda v: tf.clip_by_value(v.t, -1.0, 0.0))],
    "where": [V("where(b > 0, b, bt)", lambda v: np.where(v.b > 0, v.b, v.bt),
                lambda v: tf.where(v.b > 0, v.b, v.bt)),
              V("where(a > 0, b, s)", lambda v: np.where(v.a > 0, v.b, v.s),
                lambda v: tf.where(v.a > 0, v.b, v.s)),
              V("where(c > 0.5, c, 0.0)", lambda v: np.where(v.c > 0.5, v.c, 0.0),
                lambda v: tf.where(v.c > 0.5, v.c, tf.constant(0.0, f64)))],
    "cast": [V("cast(b, int64)", lambda v: v.b.astype(np.int64)),
             V("cast(b > 0, float64)", lambda v: (v.b > 0).astype(np.float64)),
             V("cast(t, bool)", lambda v: v.t.astype(bool)),
             V("cast(cast(b, float32), float64)", lambda v: v.b.astype(np.float32).astype(np.float64),
               lambda v: tf.cast(tf.cast(v.b, tf.float32), f64))],
    "dtype": [V("cast(b > 0, dtype(b))", lambda v: (v.b > 0).astype(np.float64)),
              V("cast(i, dtype(c))", lambda v: v.i.astype(np.float64))],
    "sum": reduction("sum", np.sum, tf.reduce_sum),
    "mean": reduction("mean", np.mean, tf.reduce_mean),
    "max": reduction("max", np.max, tf.reduce_max, ("t",), (("c", -1, False),)),
    "min": reduction("min", np.min, tf.reduce_min, ("t",), (("c", 1, False),)),
    "prod": reduction("prod", np.prod, tf.reduce_prod, ("t",), (("c", 0, False),)),
    "logsumexp": reduction("logsumexp", np_logsumexp, tf.reduce_logsumexp, ("c",),
                           (("big", -1, False), ("big", 0, True))),
    "softmax": along_axis("softmax", np_softmax, tf.nn.softmax),
    "log_softmax": along_axis("log_softmax", np_log_softmax, tf.nn.log_softmax),
    "transpose": [V("transpose(c)", lambda v: v.c.T, lambda v: tf.transpose(v.c)),
                  V("transpose(c, axes=[1, 0, 2])", lambda v: v.c.transpose(1, 0, 2),
                    lambda v: tf.transpose(v.c, [1, 0, 2])),
                  V("transpose(b)", lambda v: v.b.T, lambda v: tf.transpose(v.b))],
    "reshape": [V("reshape(c, [6, 4])", lambda v: v.c.reshape(6, 4), lambda v: tf.reshape(v.c, [6, 4])),
                V("reshape(b, [-1])", lambda v: v.b.reshape(-1), lambda v: tf.reshape(v.b, [-1])),
                V("reshape(c, [4, -1, 2])", lambda v: v.c.reshape(4, -1, 2),
                  lambda v: tf.reshape(v.c, [4, -1, 2]))],
    "concat": [V("concat([b, bt], axis=0)", lambda v: np.concatenate([v.b, v.bt], 0),
                 lambda v: tf.concat([v.b, v.bt], 0)),
               V("concat([b, q], axis=1)", lambda v: np.concatenate([v.b, v.q], 1),
                 lambda v: tf.concat([v.b, v.q], 1)),
               V("concat([q, b, q], axis=-1)", lambda v: np.concatenate([v.q, v.b, v.q], -1),
                 lambda v: tf.concat([v.q, v.b, v.q], -1)),
               V("concat([a, pa])", lambda v: np.concatenate([v.a, v.pa]),
                 lambda v: tf.concat([v.a, v.pa], 0))],
    "stack": [V("stack([b, bt], axis=0)", lambda v: np.stack([v.b, v.bt], 0),
                lambda v: tf.stack([v.b, v.bt], 0)),
              V("stack([b, bt], axis=-1)", lambda v: np.stack([v.b, v.bt], -1),
                lambda v: tf.stack([v.b, v.bt], -1)),
              V("stack([a, pa, a], axis=1)", lambda v: np.stack([v.a, v.pa, v.a], 1),
                lambda v: tf.stack([v.a, v.pa, v.a], 1)),
              V("stack([s, ps])", lambda v: np.stack([v.s, v.ps]), lambda v: tf.stack([v.s, v.ps]))],
    "one_hot": [V("one_hot(i, 4)", lambda v: np.eye(4)[v.i]), V("one_hot(i2, 3)", lambda v: np.eye(3)[v.i2])],
    "getitem": [V("b[1]", lambda v: v.b[1], lambda v: v.b[1]),
                V("b[:, 1:3]", lambda v: v.b[:, 1:3], lambda v: v.b[:, 1:3]),
                V("b[-1, ::-2]", lambda v: v.b[-1, ::-2], lambda v: v.b[-1, ::-2]),
                V("c[:, None, 1]", lambda v: v.c[:, None, 1], lambda v: v.c[:, None, 1]),
                V("a[[2, 0, 0]]", lambda v: v.a[[2, 0, 0]], lambda v: tf.gather(v.a, [2, 0, 0])),
                V("b[:, [2, 0, 2]]", lambda v: v.b[:, [2, 0, 2]],
                  lambda v: tf.gather(v.b, [2, 0, 2], axis=1)),
                V("c[1, 1:, -1]", lambda v: v.c[1, 1:, -1], lambda v: v.c[1, 1:, -1]),
                V("c[::-1, None, 1, -1:0:-2]", lambda v: v.c[::-1, None, 1, -1:0:-2],
                  lambda v: v.c[::-1, None, 1, -1:0:-2])],
    "uniform": RANDOM, "normal": RANDOM, "bernoulli": RANDOM,
    "grad_pass_through": [
        V("grad_pass_through(round(b * 2), wrt=b)", lambda v: np.round(v.b * 2),
          lambda v: tf.grad_pass_through(lambda x: tf.round(x * 2))(v.b), lambda v: tf.round(v.b * 2)),
        V("grad_pass_through(floor(c) * 3)", lambda v: np.floor(v.c) * 3,
          lambda v: tf.grad_pass_through(lambda x: tf.floor(x) * 3)(v.c), lambda v: tf.floor(v.c) * 3)],
    "reverse_gradient": [V("reverse_gradient(b, scale=0.5)", lambda v: v.b,
                           lambda v: reverse_gradient(0.5)(v.b), lambda v: tf.identity(v.b)),
                         V("reverse_gradient(c)", lambda v: v.c,
                           lambda v: reverse_gradient(1.0)(v.c), lambda v: tf.identity(v.c))],
    "zero_out": [V("z1", lambda v: first_only(v.c), lambda v: first_only(v.c), lets=(ZERO_C,)),
                 V("zi1", lambda v: np.int64(0), lets=(ZERO_C,)),
                 V("z2", lambda v: first_only(v.a), lambda v: first_only(v.a),
                   lets=("z2, zi2: zero_out(a)",))],
    "log1p": unary("log1p", np.log1p, tf.math.log1p, "pos") + [
        V("log1p(b * 0.3)", lambda v: np.log1p(v.b * 0.3), lambda v: tf.math.log1p(v.b * 0.3))],
    "expm1": unary("expm1", np.expm1, tf.math.expm1, "all"),
    "erf": unary("erf", np_erf, tf.math.erf, "all"),
    "erfc": unary("erfc", np_erfc, tf.math.erfc, "all"),
    "atan": unary("atan", np.arctan, tf.math.atan, "all"),
    "asinh": unary("asinh", np.arcsinh, tf.math.asinh, "all"),
    "sinh": unary("sinh", np.sinh, tf.math.sinh, "all"),
    "cosh": unary("cosh", np.cosh, tf.math.cosh, "all"),
    "softsign": unary("softsign", lambda x: x / (1 + np.abs(x)), tf.nn.softsign, "all"),
    # tf.nn.leaky_relu's alpha is a float32 attribute: 0.2 is 0.2f
    "leaky_relu": unary("leaky_relu", lambda x: np.where(x > 0, x, x * float(np.float32(0.2))),
                        tf.nn.leaky_relu, "all")
    + [V("leaky_relu(c, alpha=0.5)", lambda v: np.where(v.c > 0, v.c, 0.5 * v.c),
         lambda v: tf.nn.leaky_relu(v.c, alpha=0.5)),
       V("leaky_relu(t, 0.01)", lambda v: np.where(v.t > 0, v.t, v.t * float(np.float32(0.01))),
         lambda v: tf.nn.leaky_relu(v.t, alpha=0.01))],
    "elu": unary("elu", lambda x: np.where(x > 0, x, np.exp(x) - 1), tf.nn.elu, "all"),
    "relu6": unary("relu6", lambda x: np.clip(x, 0, 6), tf.nn.relu6, "all")
    + [V("relu6(b * 4)", lambda v: np.clip(v.b * 4, 0, 6), lambda v: tf.nn.relu6(v.b * 4))],
    "gelu": unary("gelu", np_gelu, lambda x: tf.nn.gelu(x, approximate=False), "all"),
    "silu": unary("silu", lambda x: x / (1 + np.exp(-x)), tf.nn.silu, "all"),
    "hard_sigmoid": unary("hard_sigmoid", lambda x: np.clip(x / 6 + 0.5, 0, 1),
                          tf.keras.activations.hard_sigmoid, "all")
    + [V("hard_sigmoid(c * 3)", lambda v: np.clip(v.c * 3 / 6 + 0.5, 0, 1),
         lambda v: tf.keras.activations.hard_sigmoid(v.c * 3))],
    "heaviside": unary("heaviside", lambda x: (x > 0).astype(np.float64),
                       lambda x: tf.cast(x > 0, f64), "all"),
    "argmax": [V("argmax(t)", lambda v: np.argmax(v.t, axis=-1)),      # ties: the first
               V("argmax(c, axis=0)", lambda v: np.argmax(v.c, axis=0)),
               V("argmax(b, axis=-2)", lambda v: np.argmax(v.b, axis=-2)),
               V("argmax(s, axis=0)", lambda v: np.int64(0)),
               V("argmax(w) + argmax(t * 0.0, axis=1)",
                 lambda v: np.argmax(v.w) + np.argmax(v.t * 0.0, axis=1))],
    "argmin": [V("argmin(t)", lambda v: np.argmin(v.t, axis=-1)),
               V("argmin(c, axis=1)", lambda v: np.argmin(v.c, axis=1)),
               V("argmin(big, axis=0)", lambda v: np.argmin(v.big, axis=0)),
               V("cast(argmin(b, axis=0), dtype(b)) * b",  # no gradient through the index
                 lambda v: np.argmin(v.b, axis=0).astype(np.float64) * v.b,
                 lambda v: tf.cast(tf.argmin(v.b, axis=0), f64) * v.b)],
    "sparse_softmax_cross_entropy_with_logits": [
        V(f"sparse_softmax_cross_entropy_with_logits({y}, {z})",
          lambda v, y=y, z=z: np_xent(getattr(v, y), getattr(v, z)),
          lambda v, y=y, z=z: tf.nn.sparse_softmax_cross_entropy_with_logits(
              labels=getattr(v, y), logits=getattr(v, z)))
        for y, z in (("i", "lg"), ("i2", "lg3"), ("yb", "big"), ("i0", "a"))],
    "clip_by_norm": [V(f"clip_by_norm({x}, {c}{'' if a is None else f', axes={a}'})",
                       lambda v, x=x, c=c, a=a: np_clip_by_norm(getattr(v, x), _arg(v, c), a),
                       lambda v, x=x, c=c, a=a: tf.clip_by_norm(getattr(v, x), _arg(v, c), axes=a))
                     for x, c, a in (("b", "1.5", None), ("c", "0.8", [0, 2]), ("a", "100.0", None),
                                     ("b", "ps", [1]))],
    "max_with_argmax": [
        V("mv1", lambda v: np.max(v.c, axis=1), lambda v: take_max(v.c, 1), lets=(MAX_C,)),
        V("mi1", lambda v: np.argmax(v.c, axis=1), lets=(MAX_C,)),
        V("mv2", lambda v: np.max(v.b, axis=-1), lambda v: take_max(v.b, -1), lets=(MAX_B,)),
        V("mi2", lambda v: np.argmax(v.b, axis=-1), lets=(MAX_B,))],
}


# ----- the reference for one op: numpy values, TensorFlow gradients, and the spec -----
def _used(variants) -> list[str]:
    text = " ".join([v.expr for v in variants] + [line for v in variants for line in v.lets])
    return [n for n in INPUTS if re.search(rf"(?<![\w.]){n}(?![\w.])", text)]


def _tf_gradients(fn, floats: list[str], dy) -> dict:
    tensors = {n: tf.constant(INPUTS[n]) for n in INPUTS}
    with tf.GradientTape() as tape:
        for n in floats:
            tape.watch(tensors[n])
        out = fn(types.SimpleNamespace(**tensors))
    grads = tape.gradient(out, [tensors[n] for n in floats], output_gradients=tf.constant(dy),
                          unconnected_gradients=tf.UnconnectedGradients.ZERO)
    return out.numpy(), {n: tf.convert_to_tensor(g).numpy() for n, g in zip(floats, grads)}  # gather: slices


@functools.lru_cache(maxsize=None)
def reference(op: str):
    """(spec text, expected values, expected {kind: [{input: gradient}]}) for one op."""
    variants = ORACLES[op]
    used = _used(variants)
    floats = [n for n in used if INPUTS[n].dtype.kind == "f"]
    arrays = types.SimpleNamespace(**INPUTS)
    rng = np.random.default_rng(len(op))
    values, grads = [], {"overridden": [], "true": []}
    lines = ["dtype: float64", "inputs:"]
    for n in used:
        value = INPUTS[n]
        lines.append(f"  {n}: " + (literal(value) if value.dtype.kind == "f" else
                                   f"{{value: {literal(value)}, dtype: int64}}"))
    lets = list(dict.fromkeys(line for v in variants for line in v.lets))
    if lets:
        lines.append("let:")
        lines += [f"  {json.dumps(names)}: {json.dumps(expr.strip())}"
                  for names, expr in (line.split(":", 1) for line in lets)]
    lines.append("outputs:")
    grad_ys = []
    for k, variant in enumerate(variants):
        value = np.asarray(variant.np_fn(arrays))
        values.append(value)
        lines.append(f"  y{k}: {json.dumps(variant.expr)}")
        zeros = {n: np.zeros_like(INPUTS[n]) for n in floats}
        if value.dtype.kind != "f" or variant.tf_fn is None:
            grads["overridden"].append(zeros)
            grads["true"].append(zeros)
            continue
        dy = rng.normal(size=value.shape)
        grad_ys.append(f"  y{k}: {literal(dy)}")
        for kind, fn in (("overridden", variant.tf_fn), ("true", variant.tf_true)):
            tf_value, row = _tf_gradients(fn, floats, dy)
            check(mismatch(f"the oracle itself: TF {variant.expr} vs numpy", tf_value, value))
            grads[kind].append(row)
    if floats:
        lines.append(f"wrt: [{', '.join(floats)}]")
    if grad_ys:
        lines += ["grad_ys:", *grad_ys]
    lines.append("unconnected: zero")
    return "\n".join(lines) + "\n", values, grads


def test_every_op_of_list_ops_has_an_oracle_entry():
    assert sorted(ORACLES) == sorted(OPS), (
        f"ops without an oracle: {sorted(set(OPS) - set(ORACLES))}; "
        f"oracles for no op: {sorted(set(ORACLES) - set(OPS))}")


@pytest.mark.parametrize("backend", backend_params())
@pytest.mark.parametrize("op", sorted(OPS))
def test_op_against_numpy_values_and_tensorflow_gradients(op, backend):
    assert op in ORACLES, f"{op} has no oracle entry in ORACLES"
    if ORACLES[op] is RANDOM:
        return  # test_random_draws
    text, values, grads = reference(op)
    result = run_spec(text, backend)
    failures = []
    for k, (variant, value) in enumerate(zip(ORACLES[op], values)):
        failures += mismatch(f"value of {variant.expr}", result.values.get(f"y{k}"), value)
        for kind in ("overridden", "true"):
            for name, expected in grads[kind][k].items():
                got = getattr(result.gradients[f"y{k}"][name], kind)
                failures += mismatch(f"{kind} gradient of {variant.expr} wrt {name}", got, expected)
    check(failures)


RANDOM_SPEC = """
seed: {seed}
inputs:
  x: {{ones: [200]}}
let:
  u: uniform([200], -1, 3)
  n: normal([200], 0.5, 2)
  k: bernoulli([200], 0.3)
  d: uniform([200])
outputs:
  y: sum(u * x + n * x * x + k * x)
"""


@pytest.mark.parametrize("backend", backend_params())
def test_random_draws(backend):
    """uniform, normal and bernoulli: their documented laws, and the same numbers on every replay
    (the gradient and the central differences see the draws the values show)."""
    result = run_spec(RANDOM_SPEC.format(seed=3), backend, numeric=True)
    again = run_spec(RANDOM_SPEC.format(seed=3), backend)
    other = run_spec(RANDOM_SPEC.format(seed=4), backend)
    u, n, k, d = (np.asarray(result.values[name]) for name in "unkd")
    failures = []
    for name, array in zip("unkd", (u, n, k, d)):
        if array.shape != (200,) or array.dtype != np.float64:
            failures.append(f"{name}: shape {array.shape} dtype {array.dtype}")
        failures += mismatch(f"{name} on a second run with the same seed", again.values[name], array, 0, 0)
        if np.array_equal(other.values[name], array):
            failures.append(f"{name}: the same numbers with another seed")
    sigma = 5 / np.sqrt(200)  # five standard errors of a mean over 200 draws (in units of the std)
    if not (u.min() >= -1 and u.max() < 3 and abs(u.mean() - 1) < sigma * 4 / np.sqrt(12)):
        failures.append(f"uniform(-1, 3): min {u.min()}, max {u.max()}, mean {u.mean()}")
    if not (d.min() >= 0 and d.max() < 1 and abs(d.mean() - 0.5) < sigma / np.sqrt(12)):
        failures.append(f"uniform() defaults: min {d.min()}, max {d.max()}, mean {d.mean()}")
    if not (abs(n.mean() - 0.5) < sigma * 2 and abs(n.std() - 2) < 0.35):
        failures.append(f"normal(0.5, 2): mean {n.mean()}, std {n.std()}")
    if not (set(np.unique(k)) <= {0.0, 1.0} and abs(k.mean() - 0.3) < sigma * np.sqrt(0.21)):
        failures.append(f"bernoulli(0.3): values {np.unique(k)}, mean {k.mean()}")
    row = result.gradients["y"]["x"]
    failures += mismatch("overridden dy/dx = u + 2 n x + k", row.overridden, u + 2 * n + k)
    failures += mismatch("true dy/dx", row.true, u + 2 * n + k)
    failures += mismatch("central differences replay the same draws", row.numeric, u + 2 * n + k,
                         rtol=1e-6, atol=1e-6)
    check(failures)
