"""Every op of the table on boolean tensors, against TensorFlow 2.21 itself (review12 item 1).

gradcli refuses the ops of ops.table.NO_BOOLEAN_KERNEL on all-boolean inputs, saying
TensorFlow has no boolean kernel for them; every other op that takes tensors must run on
booleans as TensorFlow does. For each op: TensorFlow's own op (the one the tensorflow backend
maps it to, or for gradcli's own composites the TensorFlow op their doc names) is called here
on boolean tensors, and gradcli (runner.run of a small spec, on the numpy core and on the
tensorflow backend) must refuse exactly where TensorFlow refuses, and where TensorFlow
answers, give its value and dtype. Both where the spec shows the booleans (refused as it
loads) and where only the run sees them (a function's arguments).

Oracle: TensorFlow itself, called here.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from available import backend_params
from backend_helpers import load

from gradcli import runner
from gradcli.errors import SpecError
from gradcli.ops import OPS
from gradcli.ops.table import NO_BOOLEAN_KERNEL

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402 - after the log level is set

B = [[True, False, True], [False, False, True]]
D = [[True, True, False], [False, True, True]]
INPUTS = ("inputs:\n  x: [1.0, 2.0]\n  b: {value: [[true, false, true], [false, false, true]], "
          "dtype: bool}\n  d: {value: [[true, true, false], [false, true, true]], dtype: bool}\n")


def _zero_out(b):  # the seeds' ZeroOut: all but the first element zeroed, and that index
    flat = tf.reshape(b, [-1])
    kept = tf.tensor_scatter_nd_update(tf.zeros_like(flat), [[0]], flat[:1])
    return tf.reshape(kept, tf.shape(b)), tf.constant(0, tf.int64)


def _heaviside(b):  # the table's formula in TensorFlow's ops
    return tf.where(tf.math.greater(b, tf.zeros_like(b)), tf.ones_like(b), tf.zeros_like(b))


def _hard_sigmoid(b):  # Keras 3's hard_sigmoid is relu6(x + 3) / 6: no boolean + there
    return tf.nn.relu6(tf.math.add(b, tf.constant(3, b.dtype))) / 6


UNARY_TF = {
    "abs": tf.math.abs, "sign": tf.math.sign, "neg": tf.math.negative, "exp": tf.math.exp,
    "log": tf.math.log, "sqrt": tf.math.sqrt, "square": tf.math.square, "sin": tf.math.sin,
    "cos": tf.math.cos, "tanh": tf.math.tanh, "sigmoid": tf.math.sigmoid, "relu": tf.nn.relu,
    "softplus": tf.math.softplus, "round": tf.math.round, "floor": tf.math.floor,
    "ceil": tf.math.ceil, "reciprocal": tf.math.reciprocal, "identity": tf.identity,
    "stop_gradient": tf.stop_gradient, "zeros_like": tf.zeros_like, "ones_like": tf.ones_like,
    "logical_not": tf.math.logical_not, "softmax": tf.nn.softmax,
    "log_softmax": tf.nn.log_softmax, "log1p": tf.math.log1p, "expm1": tf.math.expm1,
    "erf": tf.math.erf, "erfc": tf.math.erfc, "atan": tf.math.atan, "asinh": tf.math.asinh,
    "sinh": tf.math.sinh, "cosh": tf.math.cosh, "softsign": tf.nn.softsign,
    "leaky_relu": tf.nn.leaky_relu, "elu": tf.nn.elu, "relu6": tf.nn.relu6,
    "gelu": lambda b: tf.nn.gelu(b, approximate=False), "silu": tf.nn.silu,
    "hard_sigmoid": _hard_sigmoid, "heaviside": _heaviside,
    "reverse_gradient": tf.identity,  # forward x (gradient -scale * dy)
    "transpose": tf.transpose,
    "sum": tf.reduce_sum, "mean": tf.reduce_mean, "max": tf.reduce_max, "min": tf.reduce_min,
    "prod": tf.reduce_prod, "logsumexp": tf.reduce_logsumexp,
}
BINARY_TF = {
    "add": tf.math.add, "sub": tf.math.subtract, "mul": tf.math.multiply,
    "div": tf.math.truediv, "pow": tf.math.pow, "maximum": tf.math.maximum,
    "minimum": tf.math.minimum, "less": tf.math.less, "less_equal": tf.math.less_equal,
    "greater": tf.math.greater, "greater_equal": tf.math.greater_equal, "equal": tf.math.equal,
    "not_equal": tf.math.not_equal, "logical_and": tf.math.logical_and,
    "logical_or": tf.math.logical_or,
}

# op: (its expression over b and d, TensorFlow on the tensors b and d: one result or a tuple)
CASES = {name: (f"{name}(b)", lambda b, d, f=f: f(b)) for name, f in UNARY_TF.items()}
CASES.update({name: (f"{name}(b, d)", lambda b, d, f=f: f(b, d)) for name, f in BINARY_TF.items()})
CASES.update({
    "matmul": ("matmul(b, transpose(d))",
               lambda b, d: tf.experimental.numpy.matmul(b, tf.transpose(d))),
    "clip": ("clip(b, d, d)", lambda b, d: tf.clip_by_value(b, d, d)),
    "where": ("where(b, d, b)", lambda b, d: tf.where(b, d, b)),
    "cast": ("cast(b, float64)", lambda b, d: tf.cast(b, tf.float64)),
    "sparse_softmax_cross_entropy_with_logits": (
        "sparse_softmax_cross_entropy_with_logits(b, d)",
        lambda b, d: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=b, logits=d)),
    "reshape": ("reshape(b, [-1])", lambda b, d: tf.reshape(b, [-1])),
    "concat": ("concat([b, d])", lambda b, d: tf.concat([b, d], axis=0)),
    "stack": ("stack([b, d])", lambda b, d: tf.stack([b, d], axis=0)),
    "one_hot": ("one_hot(b, 3)", lambda b, d: tf.one_hot(b, 3, dtype=tf.float64)),
    "getitem": ("b[1]", lambda b, d: b[1]),
    "clip_by_norm": ("clip_by_norm(b, d)", lambda b, d: tf.clip_by_norm(b, d)),
    "grad_pass_through": ("grad_pass_through(b, wrt=b)",
                          lambda b, d: tf.grad_pass_through(tf.identity)(b)),
    "argmax": ("argmax(b)", lambda b, d: tf.math.argmax(b, axis=-1, output_type=tf.int64)),
    "argmin": ("argmin(b)", lambda b, d: tf.math.argmin(b, axis=-1, output_type=tf.int64)),
    # the table's doc: the gradient as tf.math.top_k(x, 1), whose values are the max
    "max_with_argmax": ("max_with_argmax(b)", lambda b, d: tuple(
        tf.squeeze(t, -1) for t in tf.math.top_k(b, 1))),
    "zero_out": ("zero_out(b)", lambda b, d: _zero_out(b)),
})
# dtype(x) is no op on a tensor's values: only cast's second argument (cast is here)
NOT_TENSOR_OPS = {"dtype"}
TENSOR_OPS = {name for name, spec in OPS.items() if spec.tensor_params} - NOT_TENSOR_OPS
MULTI = {name for name, spec in OPS.items() if spec.outputs > 1}


def test_the_cases_cover_every_op_that_takes_tensors():
    assert NO_BOOLEAN_KERNEL <= set(CASES)
    assert set(CASES) == TENSOR_OPS


def _tensorflow(op):
    """TensorFlow's answer on the boolean tensors: a tuple of numpy arrays, or None (refused)."""
    try:
        out = CASES[op][1](tf.constant(B), tf.constant(D))
    except (tf.errors.InvalidArgumentError, TypeError, ValueError):
        return None
    return tuple(np.asarray(t) for t in (out if isinstance(out, tuple) else (out,)))


def _specs(op):
    """(how, spec text): the booleans shown where the spec loads, and seen only by the run."""
    expression = CASES[op][0]
    names = '"r, i"' if op in MULTI else "r"
    yield "shown", INPUTS + f"let:\n  {names}: {expression}\noutputs:\n  y: sum(x)\n"
    if op not in MULTI:  # a function's forward has one output
        yield "run", INPUTS + ("functions:\n  f:\n    args: [b, d]\n"
                               f"    forward: {expression}\n    gradient: [none, none]\n"
                               "let:\n  r: f(b, d)\noutputs:\n  y: sum(x)\n")


@pytest.mark.parametrize("on", backend_params(("numpy", "tensorflow")))
@pytest.mark.parametrize("op", sorted(CASES))
def test_gradcli_refuses_booleans_exactly_where_tensorflow_does(on, op):
    want = _tensorflow(op)
    assert (want is None) == (op in NO_BOOLEAN_KERNEL or op in (
        "sum", "mean", "max", "min", "prod", "logsumexp", "softmax", "log_softmax",
        "one_hot", "sparse_softmax_cross_entropy_with_logits", "clip_by_norm",
        "max_with_argmax")), op
    for how, text in _specs(op):
        try:
            result = runner.run(load(text), backend=on)
        except SpecError as caught:
            message = str(caught)
            assert want is None, f"{op} ({how}): TensorFlow answers {want}, gradcli: {message}"
            assert "NodeDef" not in message and "allowed values" not in message, message
            continue
        assert want is not None, f"{op} ({how}): TensorFlow refuses, gradcli answered"
        names = ("r", "i") if op in MULTI else ("r",)
        for name, expected in zip(names, want):
            got = np.asarray(result.values[name])
            assert got.dtype == expected.dtype, (op, how, name, got.dtype, expected.dtype)
            assert np.array_equal(got, expected), (op, how, name, got, expected)
