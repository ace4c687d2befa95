"""argmax / argmin of booleans and integers, and logsumexp / softmax / log_softmax of them, are
TensorFlow 2.21's on every backend (audit11 I3: argmax of a boolean failed on torch and
tensorflow, argmax of an integer on tensorflow; logsumexp of int64 was float32 on torch and
float64 on numpy and jax, softmax of int64 float64 on numpy and jax, each an error elsewhere).

- argmax and argmin take booleans (True > False) and integers, as tf.math.argmax does;
- logsumexp, softmax and log_softmax take floats only, as TensorFlow's kernels: an integer
  or boolean tensor is refused by every backend in the same words, with a cast hint.

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
K = [[3, -1, 3], [0, 7, -2]]
INPUTS = {"b": (B, "bool"), "k": (K, "int32"), "m": (K, "int64")}
CASES = {  # let name: (expression, TensorFlow's op on the inputs' tensors)
    "b_max1": ("argmax(b, axis=1)", lambda t: tf.math.argmax(t["b"], axis=1)),
    "b_max0": ("argmax(b, axis=0)", lambda t: tf.math.argmax(t["b"], axis=0)),
    "b_min1": ("argmin(b, axis=1)", lambda t: tf.math.argmin(t["b"], axis=1)),
    "b_min0": ("argmin(b, axis=0)", lambda t: tf.math.argmin(t["b"], axis=0)),
    "k_max": ("argmax(k)", lambda t: tf.math.argmax(t["k"], axis=-1)),
    "k_min0": ("argmin(k, axis=0)", lambda t: tf.math.argmin(t["k"], axis=0)),
    "m_max0": ("argmax(m, axis=0)", lambda t: tf.math.argmax(t["m"], axis=0)),
    "m_min": ("argmin(m)", lambda t: tf.math.argmin(t["m"], axis=-1)),
}
SPEC = ("inputs:\n  x: [1.0, 2.0]\n"
        + "".join(f"  {n}: {{value: {v}, dtype: {d}}}\n".replace("True", "true").replace("False", "false")
                  for n, (v, d) in INPUTS.items())
        + "let:\n" + "".join(f"  {n}: {e}\n" for n, (e, _) in CASES.items())
        + "outputs:\n  y: sum(x)\n")


def test_argmax_and_argmin_of_booleans_and_integers_are_tensorflows(backend):
    tensors = {n: tf.constant(np.array(v, dtype=d)) for n, (v, d) in INPUTS.items()}
    expected = {n: op(tensors).numpy() for n, (_, op) in CASES.items()}
    result = runner.run(load(SPEC, "args"), backend=backend)
    for name, value in expected.items():
        got = np.asarray(result.values[name])
        assert got.dtype == value.dtype, (name, got.dtype, value.dtype)
        assert got.shape == value.shape and np.array_equal(got, value), (name, got, value)


TF_OPS = {"logsumexp": tf.reduce_logsumexp, "softmax": tf.nn.softmax, "log_softmax": tf.nn.log_softmax}


@pytest.mark.parametrize("op", TF_OPS)
@pytest.mark.parametrize("name, dtype", [("k", "int32"), ("m", "int64"), ("b", "bool")])
def test_float_only_ops_refuse_integers_and_booleans_alike(backend, op, name, dtype):
    with pytest.raises(tf.errors.InvalidArgumentError):  # TensorFlow has no kernel for it
        TF_OPS[op](tf.constant(np.array(INPUTS[name][0], dtype=dtype)))
    article = "a" if dtype == "bool" else "an"
    said = f"{op} of {article} {dtype} tensor is not defined, as TensorFlow's"
    # where the expression shows the dtype: refused as the spec loads (check too), at its place
    text = SPEC.split("let:")[0] + f"let:\n  r: {op}({name})\noutputs:\n  y: sum(x)\n"
    with pytest.raises(SpecError) as caught:
        load(text)
    assert said in str(caught.value) and f"cast it first: {op}(cast({name}, dtype(x)))" in str(
        caught.value)
    # where only the run sees it (a function's argument): every backend in the same words
    text = SPEC.split("let:")[0] + (f"functions:\n  f:\n    args: [v]\n    forward: {op}(v)\n"
                                    f"    gradient: [none]\nlet:\n  r: f({name})\n"
                                    "outputs:\n  y: sum(x)\n")
    with pytest.raises(SpecError) as caught:
        runner.run(load(text), backend=backend)
    message = str(caught.value)
    assert said in message, message
    assert f"cast it first: {op}(cast(k, dtype(x))), x a float tensor" in message
    assert "NodeDef" not in message and "not implemented" not in message


def test_a_cast_integer_is_tensorflows(backend):
    # the hint's way out gives TensorFlow's numbers
    k = tf.cast(tf.constant(np.array(K, dtype="int64")), tf.float64)
    text = SPEC.split("let:")[0] + ("let:\n  l: logsumexp(cast(m, dtype(x)), axis=1)\n"
                                   "  s: softmax(cast(m, dtype(x)))\noutputs:\n  y: sum(x)\n")
    result = runner.run(load(text), backend=backend)
    np.testing.assert_allclose(result.values["l"], tf.reduce_logsumexp(k, axis=1).numpy(), rtol=1e-15)
    np.testing.assert_allclose(result.values["s"], tf.nn.softmax(k).numpy(), rtol=1e-15)
