"""Arithmetic on booleans is TensorFlow 2.21's on every backend: refused (tryout12 item 1).

TensorFlow has no boolean kernel for add, subtract, multiply, truediv, pow, negative, abs,
sign, square, maximum, minimum, less, greater_equal, matmul, clip_by_value or exp ("Value for
attr 'T' of bool is not in the list of allowed values"; truediv: "Invalid dtype tf.bool in
__truediv__"), where numpy answered True + True = True, c * c = c, c < d, exp(c) in float16.
Where the expression shows the booleans the spec is refused as it loads (check too), at the
op's place with a cast hint; where only the built tensors show them (a function's
argument), every backend refuses in the same words. `&`, `|`, `~`, `==` and `!=` keep
working, with TensorFlow's values.

Oracle: TensorFlow itself, called here.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from backend_helpers import load

from gradcli import runner
from gradcli.errors import SpecError

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402 - after the log level is set

B = [[True, False, True], [False, False, True]]
D = [[True, True, False], [False, True, True]]
INPUTS = ("inputs:\n  x: [1.0, 2.0]\n  b: {value: [[true, false, true], [false, false, true]], "
          "dtype: bool}\n  d: {value: [[true, true, false], [false, true, true]], dtype: bool}\n")
T = {"b": tf.constant(B), "d": tf.constant(D)}

# expression over b and d: (its op, TensorFlow's own op on them)
REFUSED = {
    "b + d": ("add", lambda b, d: tf.add(b, d)),
    "b - d": ("sub", lambda b, d: tf.subtract(b, d)),
    "b * d": ("mul", lambda b, d: tf.multiply(b, d)),
    "b / d": ("div", lambda b, d: tf.math.truediv(b, d)),
    "b ** d": ("pow", lambda b, d: tf.pow(b, d)),
    "-b": ("neg", lambda b, d: tf.negative(b)),
    "abs(b)": ("abs", lambda b, d: tf.abs(b)),
    "sign(b)": ("sign", lambda b, d: tf.sign(b)),
    "square(b)": ("square", lambda b, d: tf.square(b)),
    "maximum(b, d)": ("maximum", lambda b, d: tf.maximum(b, d)),
    "minimum(b, d)": ("minimum", lambda b, d: tf.minimum(b, d)),
    "b < d": ("less", lambda b, d: tf.less(b, d)),
    "b >= d": ("greater_equal", lambda b, d: tf.greater_equal(b, d)),
    "b @ transpose(d)": ("matmul", lambda b, d: tf.matmul(b, tf.transpose(d))),
    "clip(b, d, d)": ("clip", lambda b, d: tf.clip_by_value(b, d, d)),
    "exp(b)": ("exp", lambda b, d: tf.exp(b)),
}
UNARY = {"neg", "abs", "sign", "square", "exp"}


@pytest.mark.parametrize("expression", REFUSED)
def test_arithmetic_on_booleans_is_refused_as_tensorflow_refuses_it(backend, expression):
    op, tf_op = REFUSED[expression]
    with pytest.raises((tf.errors.InvalidArgumentError, TypeError)):  # no boolean kernel
        tf_op(T["b"], T["d"])
    which = "a boolean tensor" if op in UNARY else "boolean tensors"
    said = f"{op}() of {which} is not defined, as TensorFlow has no boolean kernel for it"
    # the expression shows both booleans: refused as the spec loads, at the op's place
    with pytest.raises(SpecError) as caught:
        load(INPUTS + f"let:\n  r: {expression}\noutputs:\n  y: sum(x)\n")
    message = str(caught.value)
    assert said in message and "cast first: cast(b, dtype(x))" in message, message
    assert "let.r" in message
    # only the run sees them (a function's arguments): every backend, in the same words
    text = INPUTS + ("functions:\n  f:\n    args: [b, d]\n"
                     f"    forward: {expression}\n    gradient: [none, none]\n"
                     "let:\n  r: f(b, d)\noutputs:\n  y: sum(x)\n")
    with pytest.raises(SpecError) as caught:
        runner.run(load(text), backend=backend)
    message = str(caught.value)
    assert said in message, message
    assert "NodeDef" not in message and "not implemented" not in message
    assert "allowed values" not in message and "not supported" not in message


def test_the_operators_hint_at_the_logical_ops():
    for expression, logical in (("b + d", "| for or"), ("b * d", "& for and"), ("-b", "~ for not")):
        with pytest.raises(SpecError) as caught:
            load(INPUTS + f"outputs:\n  y: sum(x)\n  r: {expression}\n")
        assert f"on booleans, write {logical}" in str(caught.value)


def test_the_logical_ops_on_booleans_keep_tensorflows_values(backend):
    cases = {"a": ("b & d", tf.logical_and(T["b"], T["d"])),
             "o": ("b | d", tf.logical_or(T["b"], T["d"])),
             "n": ("~b", tf.logical_not(T["b"])),
             "e": ("b == d", tf.equal(T["b"], T["d"])),
             "q": ("b != d", tf.not_equal(T["b"], T["d"])),
             "c": ("cast(b, dtype(x)) + cast(d, dtype(x))",
                   tf.cast(T["b"], tf.float64) + tf.cast(T["d"], tf.float64))}
    text = INPUTS + "let:\n" + "".join(f"  {n}: {e}\n" for n, (e, _) in cases.items()) \
        + "outputs:\n  y: sum(x)\n"
    result = runner.run(load(text), backend=backend)
    for name, (_, want) in cases.items():
        got = np.asarray(result.values[name])
        assert got.dtype == want.numpy().dtype and np.array_equal(got, want.numpy()), name
