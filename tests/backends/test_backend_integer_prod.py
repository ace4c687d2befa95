"""prod of integers is tf.reduce_prod's on every backend: it keeps the input's dtype and wraps
on overflow (audit11 I1: int32 [65536, 65536, 3] gave the int64 12884901888 on numpy, torch
and jax, where TensorFlow gives the int32 0), as integer sum does.

Oracle: TensorFlow itself, called here on the same arrays.
"""
from __future__ import annotations

import os

import numpy as np
from backend_helpers import load

from gradcli import runner

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402 - after the log level is set

INPUTS = {  # name: (values, dtype)
    "k": ([65536, 65536, 3], "int32"),              # 3 * 2**32: wraps to 0 in int32
    "n": ([[-7, 65536], [40000, 60000], [3, -1]], "int32"),
    "big64": ([2**62, 3, -5], "int64"),
    "empty": ([[], []], "int32"),
    "one": (-3, "int64"),
}
CASES = {  # let name: (expression, TensorFlow's op on the input's tensors)
    "p_k": ("prod(k)", lambda t: tf.reduce_prod(t["k"])),
    "p_n0": ("prod(n, axis=0)", lambda t: tf.reduce_prod(t["n"], axis=0)),
    "p_n1": ("prod(n, axis=1, keepdims=True)", lambda t: tf.reduce_prod(t["n"], axis=1, keepdims=True)),
    "p_n": ("prod(n, axis=[0, 1])", lambda t: tf.reduce_prod(t["n"], axis=[0, 1])),
    "p_big64": ("prod(big64)", lambda t: tf.reduce_prod(t["big64"])),
    "p_empty": ("prod(empty, axis=1)", lambda t: tf.reduce_prod(t["empty"], axis=1)),
    "p_slice": ("prod(k[0:0])", lambda t: tf.reduce_prod(t["k"][0:0])),
    "p_none": ("prod(k, axis=[])", lambda t: tf.reduce_prod(t["k"], axis=[])),
    "p_one": ("prod(one)", lambda t: tf.reduce_prod(t["one"])),
}
SPEC = ("inputs:\n  x: [1.0, 2.0]\n"
        + "".join(f"  {n}: {{value: {v}, dtype: {d}}}\n" for n, (v, d) in INPUTS.items())
        + "let:\n" + "".join(f"  {n}: {e}\n" for n, (e, _) in CASES.items())
        + "outputs:\n  y: sum(x * cast(prod(k), dtype(x)))\n")


def test_integer_prod_is_tensorflows(backend):
    tensors = {n: tf.constant(np.array(v, dtype=d)) for n, (v, d) in INPUTS.items()}
    expected = {n: op(tensors).numpy() for n, (_, op) in CASES.items()}
    assert expected["p_k"] == 0 and expected["p_k"].dtype == np.int32  # what the finding was about
    result = runner.run(load(SPEC, "prods"), backend=backend)
    for name, value in expected.items():
        got = np.asarray(result.values[name])
        assert got.dtype == value.dtype, (name, got.dtype, value.dtype)
        assert got.shape == value.shape and np.array_equal(got, value), (name, got, value)
    # dy/dx of sum(x * prod(k)) is TensorFlow's wrapped product, 0, not 12884901888
    np.testing.assert_array_equal(result.gradients["y"]["x"].overridden, [0.0, 0.0])
